/**
 * In-process notice that an operation changed, after its transaction committed.
 * Live views (SSE, the scheduler's wake-up) listen here; the database stays the
 * source of truth, so a missed notice only delays, never loses. It carries the
 * committed notifications, so local SSE streams are fed from the change itself
 * instead of each reading them back.
 */
import { EventEmitter } from 'node:events';
import type { BuyEventRow, EventRow, MediaBuyRow, NotificationRow, OperationRow } from '../store/index.js';

export interface OperationChange {
  operation: OperationRow;
  events: EventRow[];
  notifications: NotificationRow[];
}

/** A live media buy's committed change (a report applied, a status read, a silence noted). */
export interface BuyChange {
  buy: MediaBuyRow;
  events: BuyEventRow[];
  notifications: NotificationRow[];
}

/** The change a buy write made, as the bus carries it. */
export function buyChange(w: { row: MediaBuyRow; events: BuyEventRow[]; notifications: NotificationRow[] }): BuyChange {
  return { buy: w.row, events: w.events, notifications: w.notifications };
}

export class ChangeBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  publish(change: OperationChange): void {
    this.emitter.emit('change', change);
  }

  subscribe(listener: (change: OperationChange) => void): () => void {
    this.emitter.on('change', listener);
    return () => this.emitter.off('change', listener);
  }

  /** A buy's change made here, not through an operation (those carry the buy's notifications with the operation's). */
  publishBuy(change: BuyChange): void {
    this.emitter.emit('buy', change);
  }

  subscribeBuys(listener: (change: BuyChange) => void): () => void {
    this.emitter.on('buy', listener);
    return () => this.emitter.off('buy', listener);
  }
}
