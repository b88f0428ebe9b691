/**
 * A pooled PostgreSQL connection the server drops (a restart, a failover, an
 * administrator's pg_terminate_backend) is reported to the app's callback — not a
 * process warning, not an uncaught error — whether it was idle or in use: a statement
 * or transaction running on it fails with DatabaseUnavailableError, and the next query
 * gets a fresh connection. A statement that is merely slow on a live server is left alone.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { DatabaseUnavailableError } from '../../src/store/db-errors.js';
import { inWriteTransaction } from '../../src/store/tx.js';
import { DEFAULT_STALL_CHECK_MS } from '../../src/store/pg-pool.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';
import { eventually } from '../helpers/orchestrator.js';

async function terminate(pid: number): Promise<void> {
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  try {
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  } finally {
    await admin.end();
  }
}

describe.skipIf(!postgresAdminUrl)('PostgreSQL connection lost', () => {
  let database: TestDatabase;
  let store: Store;
  const lost: string[] = [];

  beforeAll(async () => {
    database = await tempPostgres();
    store = await openStore(database.url, { onConnectionLost: (err) => lost.push(err.message) });
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('while idle: reported to the callback, and the pool carries on with a new connection', async () => {
    lost.length = 0;
    const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(store.db.kysely);
    const pid = rows[0]!.pid;
    await terminate(pid);
    await eventually(async () => (lost.length > 0 ? true : undefined), 10_000);
    expect(lost[0]).toMatch(/terminat/);
    const again = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(store.db.kysely);
    expect(again.rows[0]!.pid).not.toBe(pid);
  });

  it('in the middle of a transaction: the transaction fails typed, nothing is left half-written, the pool carries on', async () => {
    lost.length = 0;
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      let failure: unknown;
      try {
        await inWriteTransaction(store.db, async (trx) => {
          await trx.insertInto('job_leases').values({ name: 'lost-mid-transaction', owner: 'test', lease_until: 1 }).execute();
          const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
          // Killed while checked out, between two statements of the transaction: before the fix,
          // the client's 'error' event had no listener and ended the process.
          await terminate(rows[0]!.pid);
          await eventually(async () => (lost.length > 0 ? true : undefined), 10_000);
          await sql`SELECT 1`.execute(trx);
        });
      } catch (err) {
        failure = err;
      }
      expect(failure).toBeInstanceOf(DatabaseUnavailableError);
      expect((failure as DatabaseUnavailableError).code).toBe('database_unavailable');
      expect(uncaught).toEqual([]);
      const row = await store.jobLeases.get('lost-mid-transaction');
      expect(row).toBeUndefined();
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('a slow statement on a live server is never cut, however long past the stall check', async () => {
    lost.length = 0;
    const started = Date.now();
    const { rows } = await sql<{ done: boolean }>`SELECT pg_sleep(${(DEFAULT_STALL_CHECK_MS * 1.8) / 1000}) IS NOT NULL AS done`.execute(store.db.kysely);
    expect(rows[0]!.done).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(DEFAULT_STALL_CHECK_MS * 1.8 - 50);
    expect(lost).toEqual([]);
  });
});
