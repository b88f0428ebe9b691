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
import { isPrimitive } from './compiled.js';
import { ident, placeholders, runSql, type SqlValue } from './multi-row.js';
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
  const byColumns = new Map<string, Array<{ id: string; values: SqlValue[] }>>();
  for (const { before, patch } of changes) {
    const old = before as unknown as Record<string, unknown>;
    const cols = Object.entries(patch)
      .filter(([k, v]) => v !== undefined && v !== old[k])
      .map(([k]) => k)
      .sort();
    if (cols.length === 0) continue;
    const record = patch as Record<string, unknown>;
    const values = cols.map((c) => record[c]);
    if (!values.every(isPrimitive)) {
      await updateOne(trx, before.id, Object.fromEntries(cols.map((c) => [c, record[c]])) as MediaBuyPatch);
      continue;
    }
    const key = cols.join(',');
    const group = byColumns.get(key) ?? [];
    group.push({ id: before.id, values: values as SqlValue[] });
    byColumns.set(key, group);
  }
  for (const [key, group] of byColumns) {
    const cols = key.split(',');
    if (group.length === 1) {
      await updateOne(trx, group[0]!.id, Object.fromEntries(cols.map((c, i) => [c, group[0]!.values[i]])) as MediaBuyPatch);
      continue;
    }
    const sql =
      `WITH v (id, ${cols.map(ident).join(', ')}) AS (VALUES ${placeholders(group.length, cols.length + 1)}) ` +
      `UPDATE media_buys SET ${cols.map((c) => `${ident(c)} = v.${ident(c)}`).join(', ')} FROM v WHERE media_buys.id = v.id`;
    await runSql(trx, direct, sql, group.flatMap((g) => [g.id, ...g.values]));
  }
}
