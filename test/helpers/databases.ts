/**
 * Databases for tests: a fresh SQLite file, and when TEST_DATABASE_URL is set a
 * fresh PostgreSQL database created for the test and dropped after it.
 * REQUIRE_POSTGRES=1 turns a missing TEST_DATABASE_URL into a failure, not a skip.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  url: string;
  drop(): Promise<void>;
}

export const postgresAdminUrl = process.env.TEST_DATABASE_URL;

if (process.env.REQUIRE_POSTGRES === '1' && !postgresAdminUrl) {
  throw new Error('REQUIRE_POSTGRES=1 but TEST_DATABASE_URL is not set');
}

export function tempSqlite(): TestDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'orch-test-'));
  return {
    name: 'sqlite',
    url: `sqlite:${join(dir, 'orchestrator.db')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

export async function tempPostgres(): Promise<TestDatabase> {
  if (!postgresAdminUrl) throw new Error('TEST_DATABASE_URL is not set');
  const dbName = `orch_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${dbName}`;
  return {
    name: 'postgres',
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: postgresAdminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** The dialects to run a store test on: SQLite always, PostgreSQL when configured. */
export const dialects: Array<{ name: 'sqlite' | 'postgres'; make: () => Promise<TestDatabase> }> = [
  { name: 'sqlite', make: async () => tempSqlite() },
  ...(postgresAdminUrl ? [{ name: 'postgres' as const, make: tempPostgres }] : []),
];
