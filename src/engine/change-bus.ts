/**
 * In-process notice that an operation changed, after its transaction committed.
 * Live views (SSE, the scheduler's wake-up) listen here; the database stays the
 * source of truth, so a missed notice only delays, never loses. It carries the
 * committed notifications, so local SSE streams are fed from the change itself
 * instead of each reading them back.
 */
import { EventEmitter } from 'node:events';
import type { EventRow, NotificationRow, OperationRow } from '../store/index.js';

export interface OperationChange {
  operation: OperationRow;
  events: EventRow[];
  notifications: NotificationRow[];
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
}
