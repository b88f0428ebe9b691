/**
 * The scheduler on a real SQLite file: the final writes of a claimed page share one
 * commit, and the next page is claimed in that same commit (src/engine/scheduler.ts,
 * src/store/write-batch.ts). Commits are counted at the driver, with and without
 * pages in the same run; every row is done and none is left leased either way.
 */
import { randomUUID } from 'node:crypto';
import SQLite from 'better-sqlite3';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaseOf, releasedLease } from '../../src/engine/call-outcomes.js';
import { systemClock } from '../../src/engine/clock.js';
import { Scheduler } from '../../src/engine/scheduler.js';
import type { OperationRow, Store } from '../../src/store/index.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import type { Tx } from '../../src/store/tx.js';
import type { WriteSlot } from '../../src/store/write-batch.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { openSellerStore } from '../helpers/seller-store.js';

// Count COMMITs, and the other statements run, at the driver: statements are prepared (and cached) after this patch.
let commits = 0;
let statements = 0;
type Stmt = Record<'run' | 'all' | 'get', (...a: unknown[]) => unknown>;
const proto = (SQLite as unknown as { prototype: { prepare: (sql: string) => Stmt } }).prototype;
const originalPrepare = proto.prepare;
proto.prepare = function (this: unknown, text: string) {
  const stmt = originalPrepare.call(this, text);
  const control = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA)\b/i.test(text);
  for (const m of ['run', 'all', 'get'] as const) {
    const original = stmt[m];
    stmt[m] = function (this: unknown, ...args: unknown[]) {
      if (/^\s*COMMIT\b/i.test(text)) commits++;
      else if (!control) statements++;
      return original.apply(this, args);
    };
  }
  return stmt;
};

describe('scheduler pages on sqlite', () => {
  let database: TestDatabase;
  let store: Store;
  let tenantId: string;
  let agentId: string;

  beforeAll(async () => {
    database = tempSqlite();
    ({ store, tenantId, agentId } = await openSellerStore(database));
  });
  afterAll(async () => {
    proto.prepare = originalPrepare;
    await store?.close();
    await database?.drop();
  });

  async function runAll(n: number, pageWriteWaitMs: number, opts: { concurrency?: number; hold?: boolean } = {}): Promise<{ commits: number; statements: number; done: number; held: number }> {
    const ids: string[] = [];
    const now = Date.now();
    for (let i = 0; i < n; i++) {
      const id = randomUUID();
      ids.push(id);
      await store.operations.insert(
        newOperationRow(
          { id, tenant_id: tenantId, agent_id: agentId, type: 'create_media_buy', idempotency_key: randomUUID(), request_body: '{}', created_at: now },
          { status: 'submitted', next_check_at: now - 1000, check_kind: 'poll' },
        ),
        { source: 'user', kind: 'created', to: 'submitted' },
      );
    }
    let done = 0;
    let held = 0;
    // A poll: a reply after a short, uneven wait, then its write (through the page's slot when given).
    const run = async (row: OperationRow, writes?: WriteSlot) => {
      await new Promise((r) => setTimeout(r, 1 + (row.id.charCodeAt(0) % 5)));
      if (writes) held++;
      const plan = () => ({ patch: { next_check_at: null, check_kind: null, ...releasedLease() }, value: null });
      const write = (trx: Tx) => store.operations.mutateIn(trx, row.id, leaseOf(row), plan);
      // `hold`: the way a poll's reply is written (OperationService.observe), batched with the page's others.
      const result = !writes
        ? await store.operations.mutate(row.id, leaseOf(row), plan)
        : opts.hold
          ? await writes.hold(() => store.operations.mutate(row.id, leaseOf(row), plan))
          : await writes.write(write);
      if (result.outcome === 'applied') done++;
    };
    const scheduler = new Scheduler(store, run, systemClock, pino({ level: 'silent' }), {
      instanceId: 'me',
      leaseMs: 60_000,
      concurrency: opts.concurrency ?? 10,
      tickMs: 20,
      pageWriteWaitMs,
    });
    const before = commits;
    const statementsBefore = statements;
    scheduler.start();
    const until = Date.now() + 10_000;
    while (done < n && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    await scheduler.stop();
    const used = commits - before;
    const ran = statements - statementsBefore;
    const leased = await store.db.kysely.selectFrom('operations').select('id').where('id', 'in', ids).where('lease_owner', 'is not', null).execute();
    expect(leased).toEqual([]);
    return { commits: used, statements: ran, done, held };
  }

  it('commits each page of writes once, with the next page claimed in it', async () => {
    const single = await runAll(60, 0);
    const paged = await runAll(60, 200);
    expect(single.done).toBe(60);
    expect(paged.done).toBe(60);
    expect(single.held).toBe(0);
    expect(paged.held).toBe(60);
    // 60 rows in pages of 10: the first claim, one commit per page (its writes and the next claim), and a last empty claim or two.
    expect(paged.commits).toBeLessThanOrEqual(6 + 3);
    expect(paged.commits).toBeLessThan(single.commits);
  });

  it('writes a page held in its slots with a constant number of statements, whatever its size (the page is one batch)', async () => {
    const small = await runAll(60, 200, { concurrency: 10, hold: true });
    const large = await runAll(60, 200, { concurrency: 30, hold: true });
    expect([small.done, large.done]).toEqual([60, 60]);
    expect([small.held, large.held]).toEqual([60, 60]);
    // Per commit: the page's claim, its rows read at once, their update at once (and a last empty claim).
    const perCommit = (r: { statements: number; commits: number }) => r.statements / r.commits;
    expect(perCommit(small)).toBeLessThanOrEqual(4);
    expect(perCommit(large)).toBeLessThanOrEqual(4);
    // Written one by one instead, each row costs a read and an update of its own.
    const oneByOne = await runAll(60, 200, { concurrency: 30, hold: false });
    expect(oneByOne.done).toBe(60);
    expect(perCommit(oneByOne)).toBeGreaterThan(2 * perCommit(large));
  });
});
