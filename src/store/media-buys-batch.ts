/**
 * Several buys' changes written in one go, inside a write transaction (SQLite's grouped
 * one, src/store/tx.ts, Batcher; used by the batched reporting fires,
 * src/engine/media-buys/report-batch.ts): what `MediaBuysRepo.mutateIn` writes for one
 * change, done for a group with one statement per table: one UPDATE per set of changed
 * columns (… FROM (VALUES …)), then (MediaBuysRepo.writeChangesIn) one INSERT of every
 * event and one of every notification, in change order.
 *
 * One change per buy: the caller leaves a second change of a buy to its own job.
 */
import type { DirectSqlite } from './direct.js';
import { updateManyById } from './multi-row.js';
import type { MediaBuyPatch, MediaBuyRow } from './media-buys-repo.js';
import type { Tx } from './tx.js';

export interface BuyRowChange {
  /** The buy as read before the change. */
  before: MediaBuyRow;
  /** What the change sets (with updated_at). */
  patch: MediaBuyPatch;
}

/** Writes every change's patch: only the columns whose value differs (an indexed column set to its own value still rewrites its index entry). */
export async function updateBuysIn(
  direct: DirectSqlite | undefined,
  trx: Tx,
  changes: BuyRowChange[],
  updateOne: (trx: Tx, id: string, patch: MediaBuyPatch) => Promise<void>,
): Promise<void> {
  const updates = changes.map(({ before, patch }) => {
    const old = before as unknown as Record<string, unknown>;
    return { id: before.id, set: Object.fromEntries(Object.entries(patch).filter(([k, v]) => v !== undefined && v !== old[k])) };
  });
  await updateManyById(trx, direct, 'media_buys', updates, (t, id, set) => updateOne(t, id, set as MediaBuyPatch));
}
