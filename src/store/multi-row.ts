/**
 * Multi-row statements for the batched write paths (src/store/tx.ts, Batcher): one
 * statement for the rows of a whole group instead of one per row. Their SQL text
 * depends on the number of rows, so it is built here rather than by Kysely (whose
 * compile per call costs more than the statement saves); it runs straight on
 * better-sqlite3 on a held connection (src/store/direct.ts), else through Kysely.
 *
 * Column names are only ever our own (schema keys), checked against a strict pattern
 * all the same before they are quoted into SQL: values always go as parameters.
 */
import { CompiledQuery, type QueryResult } from 'kysely';
import { isPrimitive, type UpdatableById } from './compiled.js';
import type { DirectSqlite } from './direct.js';
import type { Tx } from './tx.js';

export type SqlValue = string | number | bigint | null;

/** Runs `sql` with `params` on `conn`. */
export function runSql<R>(conn: Tx, direct: DirectSqlite | undefined, sql: string, params: readonly SqlValue[]): Promise<QueryResult<R>> {
  const now = direct?.tryExecute<R>(conn, sql, params);
  if (now) return Promise.resolve(now);
  return conn.executeQuery<R>(CompiledQuery.raw(sql, [...params]));
}

/** `(?, ?), (?, ?)`: `rows` tuples of `width` placeholders. */
export function placeholders(rows: number, width: number): string {
  const one = `(${new Array(width).fill('?').join(', ')})`;
  return new Array(rows).fill(one).join(', ');
}

const NAME = /^[a-z_][a-z0-9_]*$/;

/** A column or table name of ours, quoted. */
export function ident(name: string): string {
  if (!NAME.test(name)) throw new Error(`not a column name: ${name}`);
  return `"${name}"`;
}

/**
 * How many ids an `IN (…)` list is padded to (the next power of two): the padding
 * repeats an id, which matches nothing more, and keeps the number of distinct
 * statements (and prepared statements cached) small.
 */
export function paddedIds(ids: readonly string[]): string[] {
  let size = 1;
  while (size < ids.length) size *= 2;
  const out = [...ids];
  while (out.length < size) out.push(ids[0]!);
  return out;
}

/** One row's change for `updateManyById`: its id and the columns to set (only those). */
export interface RowUpdate {
  id: string;
  set: Record<string, unknown>;
}

/**
 * Several rows' changes of one table in as few statements as their shapes allow: one
 * `UPDATE … FROM (VALUES …)` per set of columns changed together. A change alone in its
 * set, or one with a value that is not a plain SQL value (a JSON column given as an
 * object), goes through `updateOne`, the table's one-row update.
 */
export async function updateManyById(
  trx: Tx,
  direct: DirectSqlite | undefined,
  table: UpdatableById,
  changes: readonly RowUpdate[],
  updateOne: (trx: Tx, id: string, set: Record<string, unknown>) => Promise<void>,
): Promise<void> {
  const byColumns = new Map<string, Array<{ id: string; values: SqlValue[] }>>();
  for (const { id, set } of changes) {
    const cols = Object.keys(set).sort();
    if (cols.length === 0) continue;
    const values = cols.map((c) => set[c]);
    if (!values.every(isPrimitive)) {
      await updateOne(trx, id, set);
      continue;
    }
    const key = cols.join(',');
    const group = byColumns.get(key) ?? [];
    group.push({ id, values: values as SqlValue[] });
    byColumns.set(key, group);
  }
  for (const [key, group] of byColumns) {
    const cols = key.split(',');
    if (group.length === 1) {
      await updateOne(trx, group[0]!.id, Object.fromEntries(cols.map((c, i) => [c, group[0]!.values[i]])));
      continue;
    }
    const sql =
      `WITH v (id, ${cols.map(ident).join(', ')}) AS (VALUES ${placeholders(group.length, cols.length + 1)}) ` +
      `UPDATE ${ident(table)} SET ${cols.map((c) => `${ident(c)} = v.${ident(c)}`).join(', ')} FROM v WHERE ${ident(table)}.id = v.id`;
    await runSql(trx, direct, sql, group.flatMap((g) => [g.id, ...g.values]));
  }
}

/**
 * Inserts `rows` in one statement, each skipped when its `conflict` key is known already;
 * true when every one of them was new. The batched paths insert what they deduplicate by
 * this way and, on false, undo their batch so that each row's own path tells its case apart.
 */
export async function insertAllNew<R extends object>(trx: Tx, direct: DirectSqlite | undefined, table: string, columns: ReadonlyArray<keyof R & string>, rows: readonly R[], conflict: readonly string[]): Promise<boolean> {
  if (rows.length === 0) return true;
  const { rows: inserted } = await runSql<{ id: string }>(
    trx,
    direct,
    `INSERT INTO ${ident(table)} (${columns.map(ident).join(', ')}) VALUES ${placeholders(rows.length, columns.length)} ` +
      `ON CONFLICT (${conflict.map(ident).join(', ')}) DO NOTHING RETURNING id`,
    rows.flatMap((r) => columns.map((c) => r[c] as SqlValue)),
  );
  return inserted.length === rows.length;
}
