/**
 * "The database is away", told apart from every other error (src/store/db-errors.ts), and
 * what the process does with it (src/engine/database-outage.ts): counted each time, logged
 * once per outage, loops paused a little longer the longer it lasts.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DatabaseOutage, FLAP_MS, MAX_PAUSE_MS, MIN_PAUSE_MS } from '../../../src/engine/database-outage.js';
import { databaseUnavailable, DatabaseUnavailableError } from '../../../src/store/db-errors.js';

const coded = (code: string, message = 'boom') => Object.assign(new Error(message), { code });

describe('databaseUnavailable', () => {
  it.each([
    ['a connection refused', coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a connection reset', coded('ECONNRESET')],
    ['the server shutting down (57P01)', coded('57P01', 'terminating connection due to administrator command')],
    ['the server starting up (57P03)', coded('57P03', 'the database system is starting up')],
    ['a connection exception (08006)', coded('08006')],
    ['too many connections (53300)', coded('53300')],
    ['a disk full (53100)', coded('53100')],
    ['a standby refusing a write (25006)', coded('25006', 'cannot execute INSERT in a read-only transaction')],
    ['node-postgres losing its connection', new Error('Connection terminated unexpectedly')],
    ['node-postgres on a broken client', new Error('Client has encountered a connection error and is not queryable')],
    ['pg-pool waiting too long for a connection', new Error('timeout exceeded when trying to connect')],
    ['SQLite busy past busy_timeout', coded('SQLITE_BUSY', 'database is locked')],
    ['SQLite busy, extended code', coded('SQLITE_BUSY_SNAPSHOT')],
    ['SQLite failing its I/O', coded('SQLITE_IOERR_FSYNC')],
    ['SQLite full', coded('SQLITE_FULL', 'database or disk is full')],
    ['SQLite read-only', coded('SQLITE_READONLY')],
    ['one address of several refusing', new AggregateError([coded('ECONNREFUSED')], 'all failed')],
    ['a cause further down', new Error('while storing', { cause: coded('57P01') })],
  ])('is %s', (_what, err) => {
    const typed = databaseUnavailable(err);
    expect(typed).toBeInstanceOf(DatabaseUnavailableError);
    expect(typed!.code).toBe('database_unavailable');
    expect(typed!.cause).toBe(err);
  });

  it('passes a typed error through as it is', () => {
    const typed = new DatabaseUnavailableError('gone');
    expect(databaseUnavailable(typed)).toBe(typed);
  });

  it.each([
    ['a unique violation', coded('23505')],
    ['a syntax error', coded('42601')],
    ['a serialization failure (retried by whoever asked, not a pause)', coded('40001')],
    ['a statement cancelled', coded('57014')],
    ['a database dropped (57P04: not coming back)', coded('57P04')],
    ['an SQLite constraint', coded('SQLITE_CONSTRAINT_UNIQUE')],
    ['an SQLite corrupt file', coded('SQLITE_CORRUPT')],
    ['a plain error', new Error('something else')],
    ['not an error at all', 'text'],
    ['nothing', undefined],
  ])('is not %s', (_what, err) => {
    expect(databaseUnavailable(err)).toBeUndefined();
  });
});

function recorder() {
  const lines: Array<{ level: string; msg: string; obj: Record<string, unknown> }> = [];
  const log = pino({ level: 'debug' });
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    log[level] = ((obj: Record<string, unknown>, msg: string) => void lines.push({ level, msg, obj })) as never;
  }
  return { log, lines };
}

describe('DatabaseOutage', () => {
  it('counts every failure, logs the first of an outage and its end once, and ignores other errors', () => {
    const { log, lines } = recorder();
    const counted: string[] = [];
    let now = 1_000;
    const outage = new DatabaseOutage(log, { databaseUnavailable: (where) => void counted.push(where) }, { now: () => now, random: () => 0.5 });

    expect(outage.failed('api', new Error('a bug'))).toBe(false);
    expect(outage.down).toBe(false);
    for (let i = 0; i < 5; i++) expect(outage.failed(i % 2 ? 'scheduler' : 'api', coded('ECONNREFUSED'))).toBe(true);
    expect(outage.down).toBe(true);
    now += 7_000;
    outage.succeeded();
    outage.succeeded();

    expect(counted).toEqual(['api', 'scheduler', 'api', 'scheduler', 'api']);
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(lines.find((l) => l.level === 'warn')!.msg).toMatch(/^database unavailable/);
    expect(lines.filter((l) => l.level === 'debug')).toHaveLength(4);
    expect(lines.filter((l) => l.level === 'info')).toEqual([expect.objectContaining({ obj: { down_ms: 7_000 } })]);
    expect(outage.down).toBe(false);

    // A failure just after the return is the same outage flapping: counted, not announced,
    // and its end not announced either.
    now += 1_000;
    expect(outage.failed('webhook', coded('57P03'))).toBe(true);
    expect(outage.down).toBe(true);
    now += 500;
    outage.succeeded();
    expect(counted).toHaveLength(6);
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(lines.filter((l) => l.level === 'info')).toHaveLength(1);

    // A later outage is news again.
    now += FLAP_MS + 1;
    outage.failed('webhook', coded('57P01'));
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(2);
  });

  it('pauses loops briefly at first and at most a couple of seconds, however long it lasts', () => {
    let now = 0;
    const outage = new DatabaseOutage(pino({ level: 'silent' }), undefined, { now: () => now, random: () => 0.5 });
    expect(outage.pauseMs()).toBe(MIN_PAUSE_MS);
    outage.failed('scheduler', coded('ECONNREFUSED'));
    expect(outage.pauseMs()).toBe(MIN_PAUSE_MS);
    now += 4_000;
    expect(outage.pauseMs()).toBe(1_000);
    now += 60_000;
    expect(outage.pauseMs()).toBe(MAX_PAUSE_MS);
  });

  it('logs lost connections once together: a restart drops them all at the same moment', () => {
    const { log, lines } = recorder();
    let now = 0;
    const outage = new DatabaseOutage(log, undefined, { now: () => now, random: () => 0.5 });
    for (let i = 0; i < 10; i++) outage.connectionLost(new Error('terminating connection due to administrator command'));
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    now += 6_000;
    outage.connectionLost(new Error('terminating connection due to administrator command'));
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(2);
  });
});
