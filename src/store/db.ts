/**
 * Opens the database named by a URL: `sqlite:<path>` (embedded, the default) or
 * `postgres://…`. The rest of the store sees one Kysely instance plus a dialect
 * flag for the few queries that must differ (claiming work, locking a row).
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { DirectSqlite } from './direct.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_STALL_CHECK_MS, GuardedPool } from './pg-pool.js';
import { setBounded } from '../bounded-map.js';

export type DialectName = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: DialectName;
  /** Where it lives, without credentials, for logs. */
  describe: string;
  close(): Promise<void>;
  /**
   * SQLite only: `PRAGMA data_version` of our connection, which changes when another
   * connection (another process, another store on the same file) has committed.
   */
  dataVersion?: () => number;
  /** SQLite only: hot statements run on better-sqlite3 where that is safe (src/store/direct.ts). */
  direct?: DirectSqlite;
}

// PostgreSQL returns BIGINT as text to avoid precision loss; our BIGINTs are epoch
// milliseconds and counters, far inside Number's exact range.
pg.types.setTypeParser(20, (v) => Number(v));

export function sqlitePathFromUrl(url: string): string {
  const path = url.replace(/^sqlite:(\/\/)?/, '');
  if (!path) throw new Error('sqlite URL needs a file path, e.g. sqlite:./data/orchestrator.db');
  return path;
}

/** Where a lost PostgreSQL connection (idle or in use) is reported (the app passes its logger). */
export type ConnectionLostReport = (err: Error) => void;

/**
 * How long a statement waits, synchronously (better-sqlite3 blocks the whole process
 * meanwhile), for a lock another process holds on the SQLite file. A command-line tool
 * does nothing else meanwhile and may wait long; `serve` waits briefly
 * (SQLITE_SERVE_BUSY_TIMEOUT_MS) and its write transactions wait for the lock
 * asynchronously instead (src/store/tx.ts), so it keeps answering.
 */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;
export const SQLITE_SERVE_BUSY_TIMEOUT_MS = 250;

export interface OpenDbOptions {
  poolSize?: number;
  onConnectionLost?: ConnectionLostReport;
  /** SQLite: the connection's busy_timeout (default SQLITE_BUSY_TIMEOUT_MS). */
  sqliteBusyTimeoutMs?: number;
}

export function openDb(url: string, opts: OpenDbOptions = {}): Db {
  if (url.startsWith('sqlite:')) {
    const path = sqlitePathFromUrl(url);
    if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
    const database = new SQLite(path);
    // WAL for concurrent readers; synchronous=FULL so an acknowledged write survives
    // power loss (docs/ARCHITECTURE.md, Storage); busy_timeout so that a lock another process
    // holds a moment is waited for rather than failed on.
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = FULL');
    database.pragma(`busy_timeout = ${Math.max(0, Math.round(opts.sqliteBusyTimeoutMs ?? SQLITE_BUSY_TIMEOUT_MS))}`);
    database.pragma('foreign_keys = ON');
    const cached = withStatementCache(database);
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: cached }) });
    const direct = new DirectSqlite(database, (sql) => cached.prepare(sql) as SQLite.Statement, kysely);
    const dataVersion = database.prepare('PRAGMA data_version').pluck();
    return {
      kysely,
      dialect: 'sqlite',
      describe: `sqlite:${path}`,
      close: () => kysely.destroy(),
      dataVersion: () => dataVersion.get() as number,
      direct,
    };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    // Every connection listens for errors, lost connections fail their statement with a
    // typed error, and nothing waits on an absent server for long (src/store/pg-pool.ts).
    // A lost connection is an operational event, not a fault of this process: it goes to
    // the log (never a process warning, which tests rightly treat as a bug where it is born).
    const pool = new GuardedPool({
      url,
      max: opts.poolSize ?? 10,
      connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS,
      stallCheckMs: DEFAULT_STALL_CHECK_MS,
      onConnectionLost: (err) => opts.onConnectionLost?.(err),
    });
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const parsed = new URL(url);
    return {
      kysely,
      dialect: 'postgres',
      describe: `postgres://${parsed.host}${parsed.pathname}`,
      close: () => kysely.destroy(),
    };
  }
  throw new Error(`Unsupported database URL (want sqlite:<path> or postgres://…): ${url.split('@').pop()}`);
}

/**
 * Kysely's SQLite driver calls `prepare()` for every query; on the hot paths that
 * was ~0.03 ms per statement, 8 per webhook. Statements are reusable, so keep them
 * by SQL text (bounded; the least recently used is dropped first: the batched
 * writes' multi-row statements differ by their number of rows, and dropping a hot
 * one for a cold one showed as 3 % of the webhook path in prepare()). Safe because
 * Kysely hands the single connection out under a mutex and nothing here streams:
 * one statement is never executing twice at once.
 */
function withStatementCache(database: SQLite.Database, max = 1_000): SqliteDatabase & { prepare(sql: string): SQLite.Statement } {
  const cache = new Map<string, SQLite.Statement>();
  return {
    prepare(sql: string) {
      let stmt = cache.get(sql);
      // Most recently used goes last (a Map keeps insertion order): a hit is taken out and set again.
      if (stmt) cache.delete(sql);
      else stmt = database.prepare(sql);
      setBounded(cache, sql, stmt, max);
      return stmt;
    },
    close() {
      cache.clear();
      database.close();
    },
  };
}

/** True for a unique-constraint violation on either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string } | undefined;
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
