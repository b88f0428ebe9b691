/**
 * SQLite statements run straight on better-sqlite3, skipping Kysely's executor
 * (its connection provider, mutex and result plumbing cost several µs a statement,
 * and the webhook path runs about eight per delivery). Only where that is exactly
 * what going through Kysely would do:
 *
 * - on a connection handed to one of our write transactions (src/store/tx.ts
 *   registers it with `hold` while the job runs and `release`s it after): its
 *   holder is the only user of SQLite's single connection, so the statement lands
 *   in the same transaction, in the same order;
 * - a reader on the top-level instance while no transaction is open on the
 *   connection: it reads committed state, as it would after waiting for the mutex
 *   (better-sqlite3 is synchronous, nothing can interleave with the read itself).
 *
 * Anything else (a top-level write, a read while a transaction is open, a
 * transaction Kysely opened itself) returns undefined and goes through Kysely.
 */
import type SQLite from 'better-sqlite3';
import type { QueryResult } from 'kysely';

export class DirectSqlite {
  private readonly held = new WeakSet<object>();

  constructor(
    private readonly database: SQLite.Database,
    /** The same statement cache Kysely's driver uses. */
    private readonly prepare: (sql: string) => SQLite.Statement,
    /** The top-level Kysely instance (a query on it holds no connection). */
    private readonly topLevel: object,
  ) {}

  /** `conn` is the connection of a transaction that is running now. */
  hold(conn: object): void {
    this.held.add(conn);
  }

  release(conn: object): void {
    this.held.delete(conn);
  }

  /** Runs `sql` now when that is safe (see above); undefined when it must go through Kysely. */
  tryExecute<R>(conn: object, sql: string, parameters: readonly unknown[]): QueryResult<R> | undefined {
    const holding = this.held.has(conn);
    if (!holding && (conn !== this.topLevel || this.database.inTransaction)) return undefined;
    const stmt = this.prepare(sql);
    // Off a held connection, only what writes nothing (an INSERT … RETURNING is a reader too).
    if (!holding && !stmt.readonly) return undefined;
    if (stmt.reader) return { rows: stmt.all(parameters) as R[] };
    const { changes, lastInsertRowid } = stmt.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }
}
