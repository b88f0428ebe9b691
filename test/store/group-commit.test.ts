/**
 * Group commit (src/store/tx.ts, docs/ARCHITECTURE.md, Storage): write jobs queued together share one
 * transaction, each in its own savepoint. A job that fails leaves no trace and fails
 * alone; every promise settles only after the commit, so what a caller is told has
 * been written is already visible to (and durable for) every other connection.
 */
import { randomUUID } from 'node:crypto';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, sqlitePathFromUrl, SQLITE_SERVE_BUSY_TIMEOUT_MS, type Db } from '../../src/store/db.js';
import type { OperationRow, Store } from '../../src/store/index.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { inWriteTransaction } from '../../src/store/tx.js';
import { dialects, tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { openSellerStore } from '../helpers/seller-store.js';

function newOperation(tenantId: string, agentId: string, over: Partial<OperationRow> = {}): OperationRow {
  return newOperationRow(
    { id: randomUUID(), tenant_id: tenantId, agent_id: agentId, type: 'create_media_buy', idempotency_key: randomUUID(), request_body: '{}', created_at: Date.now() },
    // Submitted with no timer: nothing but the test itself touches it.
    { status: 'submitted', ...over },
  );
}

describe.each(dialects)('group commit on $name', ({ name, make }) => {
  let database: TestDatabase;
  let store: Store;
  let other: Db;
  let tenantId: string;
  let agentId: string;

  beforeAll(async () => {
    database = await make();
    ({ store, tenantId, agentId } = await openSellerStore(database));
    other = openDb(database.url);
  });
  afterAll(async () => {
    await other?.close();
    await store?.close();
    await database?.drop();
  });

  async function seed(n: number): Promise<OperationRow[]> {
    const ops = Array.from({ length: n }, () => newOperation(tenantId, agentId));
    await Promise.all(ops.map((op) => store.operations.insert(op, { source: 'user', kind: 'created', to: 'submitted' })));
    return ops;
  }

  const statusSeenByOther = async (id: string) =>
    (await other.kysely.selectFrom('operations').select('status').where('id', '=', id).executeTakeFirst())?.status;
  const eventsSeenByOther = async (id: string) =>
    (await other.kysely.selectFrom('operation_events').select('kind').where('operation_id', '=', id).execute()).map((e) => e.kind);

  it('commits the others when one concurrent mutate throws in its plan; the thrower leaves nothing', async () => {
    const ops = await seed(6);
    const thrower = 3;
    const settled: Array<{ i: number; ok: boolean; visibleAtSettle: (string | undefined)[] }> = [];
    // On SQLite the other connection can read synchronously at the very moment a promise settles.
    const raw = name === 'sqlite' ? new SQLite(sqlitePathFromUrl(database.url), { readonly: true }) : undefined;
    const seenNow = () =>
      raw ? ops.map((op) => (raw.prepare('SELECT status FROM operations WHERE id = ?').get(op.id) as { status: string }).status) : [];

    const calls = ops.map((op, i) =>
      store.operations
        .mutate(op.id, null, (row) => {
          if (i === thrower) throw new Error('plan failed');
          return {
            patch: { status: 'completed', completed_at: Date.now() },
            events: [{ source: 'poll', kind: 'transition', from: row.status, to: 'completed' }],
            value: i,
          };
        })
        .then(
          (r) => settled.push({ i, ok: r.outcome === 'applied', visibleAtSettle: seenNow() }),
          (err: Error) => {
            expect(err.message).toBe('plan failed');
            settled.push({ i, ok: false, visibleAtSettle: seenNow() });
          },
        ),
    );
    await Promise.all(calls);
    raw?.close();

    expect(settled.map((s) => s.ok).sort()).toEqual([false, true, true, true, true, true]);
    for (const [i, op] of ops.entries()) {
      expect(await statusSeenByOther(op.id)).toBe(i === thrower ? 'submitted' : 'completed');
      expect(await eventsSeenByOther(op.id)).toEqual(i === thrower ? ['created'] : ['created', 'transition']);
    }
    if (raw) {
      // Every promise, the thrower's included, settled after the one commit of all the others.
      const expected = ops.map((_, i) => (i === thrower ? 'submitted' : 'completed'));
      for (const s of settled) expect(s.visibleAtSettle).toEqual(expected);
    }
  });

  it('a job that throws after writing leaves nothing, and the jobs before and after it in the group commit', async () => {
    const ops = await seed(5);
    const throwers = new Set([1, 3]);
    const results = await Promise.allSettled(
      ops.map((op, i) =>
        inWriteTransaction(store.db, async (trx) => {
          const r = await store.operations.mutateIn(trx, op.id, null, (row) => ({
            patch: { status: 'working' },
            events: [{ source: 'poll', kind: 'transition', from: row.status, to: 'working' }],
            value: i,
          }));
          if (throwers.has(i)) throw new Error(`job ${i} failed after writing`);
          return r.outcome;
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    for (const [i, op] of ops.entries()) {
      expect(await statusSeenByOther(op.id)).toBe(throwers.has(i) ? 'submitted' : 'working');
      expect(await eventsSeenByOther(op.id)).toEqual(throwers.has(i) ? ['created'] : ['created', 'transition']);
    }
  });

  it('a read on the top-level instance while a write transaction is open sees only what is committed', async () => {
    const [op] = await seed(1);
    let read: Promise<OperationRow | undefined> | undefined;
    await expect(
      inWriteTransaction(store.db, async (trx) => {
        await store.operations.mutateIn(trx, op!.id, null, () => ({ patch: { status: 'working' }, value: null }));
        // Not awaited inside the job (a job awaits only its own connection): it must not see this job's write.
        read = store.operations.get(op!.id);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await read!)?.status).toBe('submitted');
  });

  it('rolls back only the job whose statement failed (unique violation) in a group of inserts', async () => {
    const a = newOperation(tenantId, agentId, { task_id: `t-${randomUUID()}` });
    const clash = newOperation(tenantId, agentId, { task_id: a.task_id });
    const b = newOperation(tenantId, agentId);
    const results = await Promise.allSettled([
      store.operations.insert(a, { source: 'user', kind: 'created' }),
      store.operations.insert(clash, { source: 'user', kind: 'created' }),
      store.operations.insert(b, { source: 'user', kind: 'created' }),
    ]);
    // SQLite runs the group in order (the second fails); PostgreSQL commits concurrently (either may win).
    const [first, second, third] = results.map((r) => r.status);
    expect([first, second].sort()).toEqual(['fulfilled', 'rejected']);
    expect(third).toBe('fulfilled');
    const [winner, loser] = first === 'fulfilled' ? [a, clash] : [clash, a];
    expect(await statusSeenByOther(winner.id)).toBe('submitted');
    expect(await statusSeenByOther(b.id)).toBe('submitted');
    expect(await statusSeenByOther(loser.id)).toBeUndefined();
    expect(await eventsSeenByOther(loser.id)).toEqual([]);
  });

  it('leases are still checked per job inside a group', async () => {
    const [op] = await seed(1);
    await store.db.kysely.updateTable('operations').set({ next_check_at: 1 }).where('id', '=', op!.id).execute();
    const [claimed] = await store.operations.claimDue('w', 2, 60_000, 1);
    expect(claimed!.id).toBe(op!.id);
    const write = (epoch: number) =>
      store.operations.mutate(op!.id, { owner: 'w', epoch }, () => ({ patch: { status: 'working', lease_owner: null, lease_until: null }, value: epoch }));
    const [stale, fresh] = await Promise.all([write(claimed!.lease_epoch - 1), write(claimed!.lease_epoch)]);
    expect(stale.outcome).toBe('lease_lost');
    expect(fresh.outcome).toBe('applied');
    expect(await statusSeenByOther(op!.id)).toBe('working');
  });

  it('can still run a write on its own, outside any group', async () => {
    const [op] = await seed(1);
    const value = await inWriteTransaction(
      store.db,
      async (trx) => {
        await trx.updateTable('operations').set({ status: 'working' }).where('id', '=', op!.id).execute();
        return 7;
      },
      { group: false },
    );
    expect(value).toBe(7);
    expect(await statusSeenByOther(op!.id)).toBe('working');
    await expect(
      inWriteTransaction(
        store.db,
        async (trx) => {
          await trx.updateTable('operations').set({ status: 'failed' }).where('id', '=', op!.id).execute();
          throw new Error('nope');
        },
        { group: false },
      ),
    ).rejects.toThrow('nope');
    expect(await statusSeenByOther(op!.id)).toBe('working');
  });

  it('runs more jobs than one group holds, all committed', async () => {
    const ops = await seed(450);
    const results = await Promise.all(ops.map((op) => store.operations.mutate(op.id, null, () => ({ patch: { status: 'working' }, value: null }))));
    expect(results.every((r) => r.outcome === 'applied')).toBe(true);
    const { count } = (await other.kysely
      .selectFrom('operations')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('id', 'in', ops.map((o) => o.id))
      .where('status', '=', 'working')
      .executeTakeFirstOrThrow()) as { count: number | string };
    expect(Number(count)).toBe(450);
  });
});

describe('group commit on sqlite while another connection holds the write lock', () => {
  let database: TestDatabase;
  let store: Store;
  let tenantId: string;
  let agentId: string;

  beforeAll(async () => {
    database = tempSqlite();
    // As `serve` opens it: a short synchronous wait, then the asynchronous one under test.
    ({ store, tenantId, agentId } = await openSellerStore(database, { sqliteBusyTimeoutMs: SQLITE_SERVE_BUSY_TIMEOUT_MS }));
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('waits for it off the connection: reads go on meanwhile, later writes join, all commit once it is free', async () => {
    const ops = [newOperation(tenantId, agentId), newOperation(tenantId, agentId)];
    for (const op of ops) await store.operations.insert(op, { source: 'user', kind: 'created', to: 'submitted' });
    const holder = new SQLite(sqlitePathFromUrl(database.url));
    holder.exec('BEGIN IMMEDIATE');
    try {
      let settled = false;
      const first = store.operations.mutate(ops[0]!.id, null, () => ({ patch: { status: 'working' }, value: null }));
      void first.finally(() => (settled = true));
      // Through Kysely's single connection: answered only because the waiting write does not hold it.
      const read = await store.db.kysely.selectFrom('operations').select('status').where('id', '=', ops[1]!.id).executeTakeFirstOrThrow();
      expect(read.status).toBe('submitted');
      expect(settled).toBe(false);
      const second = store.operations.mutate(ops[1]!.id, null, () => ({ patch: { status: 'working' }, value: null }));
      holder.exec('COMMIT');
      expect((await Promise.all([first, second])).map((r) => r.outcome)).toEqual(['applied', 'applied']);
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK');
      holder.close();
    }
    for (const op of ops) expect((await store.operations.get(op.id))!.status).toBe('working');
  });
});
