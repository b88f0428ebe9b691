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
