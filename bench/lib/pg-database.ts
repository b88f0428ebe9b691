/**
 * A throw-away PostgreSQL database for a bench: created on the admin URL's server,
 * dropped when the bench ends (also on Ctrl-C, through psql, since an exit handler
 * cannot wait for a client), and bulk seeding of operations into it with the same rows
 * as the SQLite seeder (bench/lib/orchestrator.ts, seedRow).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { onExit } from './common.js';
import { SEED_COLUMNS, SEED_EVENT_COLUMNS, seedRow, type SeedSpec } from './orchestrator.js';

export interface ThrowAwayDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export const DEFAULT_PG_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Whether a PostgreSQL server answers at the admin URL (a bench without one says so and skips). */
export async function postgresReachable(adminUrl: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3_000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

export async function createThrowAwayDatabase(adminUrl: string, prefix = 'orch_bench_'): Promise<ThrowAwayDatabase> {
  const name = `${prefix}${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  let dropped = false;
  const dropSql = `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`;
  onExit(() => {
    if (!dropped) spawnSync('psql', [adminUrl, '-qc', dropSql], { stdio: 'ignore', timeout: 10_000 });
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(dropSql);
        dropped = true;
      } finally {
        await c.end();
      }
    },
  };
}

/** Inserts `spec.n` operations and their `created` events, 500 rows per statement, in one transaction. */
export async function seedOperationsPg(client: pg.ClientBase, spec: SeedSpec): Promise<{ ids: string[]; seconds: number }> {
  const started = performance.now();
  const chunk = Math.min(spec.chunk ?? 500, Math.floor(65_535 / SEED_COLUMNS.length)); // PostgreSQL's limit on parameters
  const now = Date.now();
  const seedRun = randomUUID();
  const ids: string[] = [];
  const values = (rows: number, cols: number) =>
    Array.from({ length: rows }, (_, r) => `(${Array.from({ length: cols }, (_, c) => `$${r * cols + c + 1}`).join(',')})`).join(',');
  await client.query('BEGIN');
  try {
    for (let start = 0; start < spec.n; start += chunk) {
      const k = Math.min(chunk, spec.n - start);
      const ops: unknown[] = [];
      const events: unknown[] = [];
      for (let i = start; i < start + k; i++) {
        const r = seedRow(spec, i, now, seedRun);
        ids.push(r.id);
        ops.push(...r.op);
        events.push(...r.event);
      }
      await client.query(`INSERT INTO operations (${SEED_COLUMNS.join(',')}) VALUES ${values(k, SEED_COLUMNS.length)}`, ops);
      await client.query(`INSERT INTO operation_events (${SEED_EVENT_COLUMNS.join(',')}) VALUES ${values(k, SEED_EVENT_COLUMNS.length)}`, events);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
  return { ids, seconds: (performance.now() - started) / 1000 };
}
