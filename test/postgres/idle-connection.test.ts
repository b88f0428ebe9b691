/**
 * A pooled PostgreSQL connection the server drops while it is idle (a restart, a failover,
 * an administrator's pg_terminate_backend) is reported to the app's log callback — not a
 * process warning, not an uncaught error — and the next query gets a fresh connection.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';
import { eventually } from '../helpers/orchestrator.js';

describe.skipIf(!postgresAdminUrl)('PostgreSQL idle connection lost', () => {
  let database: TestDatabase;
  let store: Store;
  const lost: string[] = [];

  beforeAll(async () => {
    database = await tempPostgres();
    store = await openStore(database.url, { onIdleConnectionLost: (err) => lost.push(err.message) });
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('is reported to the callback, and the pool carries on with a new connection', async () => {
    const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(store.db.kysely);
    const pid = rows[0]!.pid;
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
    await eventually(async () => (lost.length > 0 ? true : undefined), 10_000);
    expect(lost[0]).toMatch(/terminat/);
    const again = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(store.db.kysely);
    expect(again.rows[0]!.pid).not.toBe(pid);
  });
});
