/**
 * Kysely builds and compiles every query anew (10–15 µs each; on the webhook path
 * that was ~14 % of the CPU). For the hottest fixed-shape statements, compile once
 * and run the same SQL again with new parameters.
 *
 * Safe by construction: the template is compiled once with a distinct marker in
 * place of each value and kept only if its parameters are exactly those markers,
 * in order (so no value is inlined into the SQL and the binding order is known).
 * Otherwise the query is built with the real values every time, as before.
 *
 * On SQLite a compiled statement also skips Kysely's executor where that is safe
 * (src/store/direct.ts): on the connection of a running write transaction, or a
 * read while no transaction is open.
 */
import type { Compilable, CompiledQuery, Insertable, QueryResult } from 'kysely';
import type { DirectSqlite } from './direct.js';
import type { Database } from './schema.js';
import type { Tx } from './tx.js';
import { setBounded } from '../bounded-map.js';

type Primitive = string | number | bigint | null;

export class CompiledQueries {
  private readonly templates = new Map<string, CompiledQuery<unknown> | false>();

  constructor(
    private readonly direct?: DirectSqlite,
    private readonly max = 200,
  ) {}

  /**
   * Runs `build(params)` on `conn`, from a cached compilation when `key` was seen before.
   * `build` must bind every element of its argument once, in order, and nothing else.
   */
  execute<R>(conn: Tx, key: string, params: Primitive[], build: (p: readonly any[]) => Compilable<R>): Promise<QueryResult<R>> {
    let template = this.templates.get(key);
    if (template === undefined) {
      const markers = params.map((_, i) => `\u0000param${i}\u0000`);
      const compiled = build(markers).compile();
      const exact = compiled.parameters.length === markers.length && compiled.parameters.every((p, i) => p === markers[i]);
      template = exact ? compiled : false;
      setBounded(this.templates, key, template, this.max);
    }
    if (template) {
      const now = this.direct?.tryExecute<R>(conn, template.sql, params);
      if (now) return Promise.resolve(now);
      return conn.executeQuery<R>({ ...(template as CompiledQuery<R>), parameters: params });
    }
    return conn.executeQuery<R>(build(params).compile());
  }
}

export function isPrimitive(v: unknown): v is Primitive {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint';
}

/** The tables whose rows change by `updateById`: keyed by a text `id`. */
export type UpdatableById = 'operations' | 'media_buys';

/**
 * UPDATE <table> SET <patch> WHERE id: compiled once per set of columns (on `compiled`,
 * which belongs to one repository, so its keys name columns of that table alone). A
 * patch holding anything other than a primitive is built with its values every time.
 */
export async function updateById(compiled: CompiledQueries, trx: Tx, table: UpdatableById, id: string, patch: Record<string, unknown>): Promise<void> {
  const entries = Object.entries(patch).filter(([, v]) => v !== undefined);
  if (!entries.every(([, v]) => isPrimitive(v))) {
    await trx.updateTable(table).set(patch as Partial<Database[UpdatableById]>).where('id', '=', id).execute();
    return;
  }
  const columns = entries.map(([k]) => k);
  const params = [...entries.map(([, v]) => v as Primitive), id];
  await compiled.execute(trx, `update:${columns.join(',')}`, params, (p) =>
    trx
      .updateTable(table)
      .set(Object.fromEntries(columns.map((c, i) => [c, p[i]])))
      .where('id', '=', p[columns.length]),
  );
}

/**
 * INSERT INTO operations (<columns>) VALUES (...): compiled once per set of columns, like
 * updateById. A row holding anything other than a primitive is built with its values every time.
 */
export async function insertOperationRow(compiled: CompiledQueries, trx: Tx, row: Record<string, unknown>): Promise<void> {
  const entries = Object.entries(row).filter(([, v]) => v !== undefined);
  if (!entries.every(([, v]) => isPrimitive(v))) {
    await trx.insertInto('operations').values(row as Insertable<Database['operations']>).execute();
    return;
  }
  const columns = entries.map(([k]) => k);
  await compiled.execute(trx, `insert:${columns.join(',')}`, entries.map(([, v]) => v as Primitive), (p) =>
    trx.insertInto('operations').values(Object.fromEntries(columns.map((c, i) => [c, p[i]])) as Insertable<Database['operations']>),
  );
}
