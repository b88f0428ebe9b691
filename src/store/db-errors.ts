/**
 * "The database is away" as one typed error, whatever the driver said.
 *
 * A PostgreSQL restart, failover or network cut, or an SQLite file that is locked
 * past busy_timeout, read-only, full or failing its I/O, is not a bug in the
 * statement that met it: the same statement succeeds once the database is back.
 * Callers tell it apart from every other error with `databaseUnavailable(err)`,
 * so the API answers 503 `database_unavailable` (not 500) and the background loops
 * pause and resume instead of logging a failure per attempt.
 *
 * PostgreSQL errors are turned into DatabaseUnavailableError where they arise (the
 * pool, src/store/pg-pool.ts); SQLite's are thrown synchronously by better-sqlite3
 * on paths too hot to wrap, so `databaseUnavailable` also recognises them as raw.
 */

export class DatabaseUnavailableError extends Error {
  readonly code = 'database_unavailable';

  constructor(
    /** What the driver said, for logs (never secrets: no connection string, no statement parameters). */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`database unavailable: ${reason}`, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * PostgreSQL SQLSTATEs that mean "not now", not "not ever": the connection class
 * (08…), the server shutting down or starting (57P01–57P03), resources exhausted
 * (53…: disk full, out of memory, too many connections), an I/O error (58030), and a
 * read-only transaction (25006: we reached a standby, as after a failover).
 */
const PG_UNAVAILABLE = /^(08[0-9A-Z]{3}|57P0[123]|53[0-9A-Z]{3}|58030|25006)$/;

/** Socket-level failures reaching the server. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);

/**
 * node-postgres reports a lost or unobtainable connection with a bare Error and no
 * code; these are its words (pg 8, pg-pool 3) and Kysely's for a discarded one.
 */
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect|Postgres connection has been discarded)/;

/**
 * SQLite result codes (better-sqlite3's `code`, extended codes included: SQLITE_BUSY_SNAPSHOT,
 * SQLITE_IOERR_FSYNC, SQLITE_READONLY_DBMOVED …) that a later attempt may not meet.
 */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|READONLY|CANTOPEN|PROTOCOL)(_|$)/;

function describeRaw(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, message } = err as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (typeof code === 'string') {
    if (PG_UNAVAILABLE.test(code) || NETWORK_CODES.has(code) || SQLITE_UNAVAILABLE.test(code)) return text ? `${text} (${code})` : code;
  }
  if (PG_CONNECTION_MESSAGES.test(text)) return text;
  // A pool connect error may be an AggregateError of one attempt per resolved address.
  if (err instanceof AggregateError) for (const inner of err.errors) if (describeRaw(inner)) return describeRaw(inner);
  return undefined;
}

/**
 * The typed error when `err` (or an error it was caused by) means the database is
 * unavailable; undefined for any other error, which callers handle as before.
 */
export function databaseUnavailable(err: unknown): DatabaseUnavailableError | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof DatabaseUnavailableError) return current;
    const reason = describeRaw(current);
    if (reason) return new DatabaseUnavailableError(reason, { cause: err });
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** `err` as a DatabaseUnavailableError when it is one in substance; otherwise `err` itself. */
export function asDatabaseError(err: unknown): unknown {
  return databaseUnavailable(err) ?? err;
}
