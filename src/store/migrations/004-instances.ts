/**
 * Serving processes know each other: one row per running `serve` (its id is the
 * app's instanceId, the owner written into every lease it takes), kept fresh by a
 * heartbeat. On SQLite the row is how a second `serve` on the same file learns
 * that the file is taken; on PostgreSQL it is how live instances notice a dead
 * one and hand its leases on at once instead of waiting for them to expire.
 */
import { sql, type Migration } from 'kysely';

export const instances: Migration = {
  async up(db) {
    await db.schema
      .createTable('instances')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('hostname', 'text', (c) => c.notNull())
      // The base URL it serves on, once listening (shown to a refused second `serve`).
      .addColumn('url', 'text')
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      // Written from the database's clock, so instances on hosts with skewed clocks agree on ages.
      .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
      // PostgreSQL: the key of the session advisory lock it holds while alive (store/instance-lock.ts).
      .addColumn('lock_key', 'integer')
      .execute();
    // Releasing a dead owner's leases looks rows up by owner; only leased rows are indexed, so the
    // index stays as small as the work in flight and the release stays quick with millions of rows.
    await sql`CREATE INDEX operations_leased ON operations (lease_owner) WHERE lease_owner IS NOT NULL`.execute(db);
  },
};
