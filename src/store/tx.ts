/**
 * A write transaction that behaves the same on both dialects.
 *
 * SQLite: `BEGIN IMMEDIATE` takes the write lock up front, so a transaction that
 * reads a row and then updates it can never fail half-way with SQLITE_BUSY when
 * another process wrote in between (a deferred BEGIN would upgrade too late).
 * PostgreSQL: an ordinary transaction; callers lock rows with FOR UPDATE.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Db } from './db.js';
import type { Database } from './schema.js';

export type Tx = Kysely<Database> | Transaction<Database>;

export async function inWriteTransaction<T>(db: Db, fn: (trx: Tx) => Promise<T>): Promise<T> {
  if (db.dialect === 'postgres') {
    return db.kysely.transaction().execute(fn);
  }
  // One connection for the whole transaction (Kysely's SQLite dialect hands out
  // its single connection under a mutex, so nothing else interleaves).
  return db.kysely.connection().execute(async (conn) => {
    await sql`BEGIN IMMEDIATE`.execute(conn);
    try {
      const result = await fn(conn);
      await sql`COMMIT`.execute(conn);
      return result;
    } catch (err) {
      await sql`ROLLBACK`.execute(conn).catch(() => undefined);
      throw err;
    }
  });
}
