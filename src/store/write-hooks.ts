/**
 * Writes derived from every operation change, made in its commit (registered with
 * OperationsRepo.addWriteHook): for one change, and for the changes of a batched
 * write at once (src/store/operations-batch.ts).
 */
import type { NewNotification, NotificationRow } from './notifications-repo.js';
import type { EventRow, OperationRow } from './operations-repo.js';
import type { Tx } from './tx.js';

/**
 * Writes that follow from an operation's change and must commit with it, derived
 * by the engine from the row after the change and the events written (e.g. the
 * media buy a completed create_media_buy makes). Only database calls on `trx` may
 * be awaited; the notifications it wrote are returned with the change's own. A hook
 * that writes this same operation again (a rejected creative's question on the sync
 * that ended: src/engine/media-buys/creative-inbox.ts) updates `row` in place, so
 * that the change answers with the row as committed.
 */
export type OperationWriteHook = (trx: Tx, row: OperationRow, events: EventRow[], now: number) => Promise<NotificationRow[]>;

/**
 * The same hook for the changes of one batched write at once (src/store/operations-batch.ts),
 * in their order, each with events. Per change: the notifications it wrote already, and
 * those it leaves for the batch to write with the changes' own, in one statement in
 * change order (so the seqs of one change's notifications run together and live
 * readers find no gap: src/notify/event-feed.ts).
 */
export type OperationWriteHookMany = (
  trx: Tx,
  changes: Array<{ row: OperationRow; events: EventRow[]; now: number }>,
) => Promise<Array<{ written: NotificationRow[]; unwritten: NewNotification[] }>>;

export interface WriteHook {
  one: OperationWriteHook;
  many?: OperationWriteHookMany;
}
