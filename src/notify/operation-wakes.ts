/**
 * Wake-ups for live pages about operation changes that raise no notification
 * (`calling_adcp`, `working`, a governance step, a stored result…): the
 * notifications feed (event-feed.ts) already carries every change that raises
 * one, in order and resumably; these only say "re-read now". They come from this
 * process's ChangeBus after commit, and on PostgreSQL from other instances'
 * NOTIFY (pg-notify.ts). A lost one costs a page only its next periodic refresh.
 */
import type { BuyChange, OperationChange } from '../engine/change-bus.js';

export interface OperationWake {
  tenantId: string;
  operationIds: string[];
  /** Too many to name: every page of the tenant re-reads. */
  many: boolean;
}

export class OperationWakes {
  private readonly listeners = new Set<(wake: OperationWake) => void>();

  /** A committed change here: a wake unless its notifications already reach the feed (one refresh, not two). */
  fromLocal(change: OperationChange): void {
    if (change.events.length === 0 || change.notifications.length > 0) return;
    this.emit({ tenantId: change.operation.tenant_id, operationIds: [change.operation.id], many: false });
  }

  /**
   * A live buy's change here: pages showing the buy (named by its id and by its create's
   * operation id) re-read, notification or not, since its figures change without one.
   */
  fromBuy(change: BuyChange): void {
    if (change.events.length === 0) return;
    this.emit({ tenantId: change.buy.tenant_id, operationIds: [change.buy.id, change.buy.operation_id], many: false });
  }

  emit(wake: OperationWake): void {
    for (const l of this.listeners) l(wake);
  }

  subscribe(listener: (wake: OperationWake) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get size(): number {
    return this.listeners.size;
  }
}
