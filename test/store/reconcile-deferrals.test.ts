/**
 * Reconcile deferrals on SQLite and (with TEST_DATABASE_URL) PostgreSQL: one row per agent,
 * never overwritten or cleared by a run that started before the one that recorded it, and
 * the query that tells which waited-on sends are still unresolved.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';
import { closeSellerStore, openSellerStore } from '../helpers/seller-store.js';

describe.each(dialects)('reconcile deferrals on $name', ({ make }) => {
  let database: TestDatabase;
  let store: Store;
  let tenantId: string;
  let agentId: string;

  beforeAll(async () => {
    database = await make();
    ({ store, tenantId, agentId } = await openSellerStore(database));
  });
  afterAll(() => closeSellerStore(store, database));

  const insertOp = async (over: { status: string; task_id?: string | null; created_at: number; type?: string }) => {
    const row = newOperationRow(
      { id: randomUUID(), tenant_id: tenantId, agent_id: agentId, type: over.type ?? 'create_media_buy', idempotency_key: randomUUID(), request_body: '{}', created_at: over.created_at },
      { status: over.status, task_id: over.task_id ?? null },
    );
    await store.operations.insert(row, { source: 'user', kind: 'created', to: over.status });
    return row.id;
  };

  it('records, replaces only with a later run, and clears only what ran before', async () => {
    const repo = store.reconcile;
    await repo.recordDeferral(agentId, { create_media_buy: ['a'] }, 1_000);
    expect(await repo.deferral(agentId)).toEqual({ agent_id: agentId, waiting_on: { create_media_buy: ['a'] }, deferred_at: 1_000 });
    // An older run (it started first, finished last) does not overwrite the newer record.
    await repo.recordDeferral(agentId, { create_media_buy: ['old'] }, 900);
    expect((await repo.deferral(agentId))?.waiting_on).toEqual({ create_media_buy: ['a'] });
    await repo.recordDeferral(agentId, { update_media_buy: ['b', 'c'] }, 2_000);
    expect(await repo.deferral(agentId)).toMatchObject({ waiting_on: { update_media_buy: ['b', 'c'] }, deferred_at: 2_000 });
    expect((await repo.deferrals()).map((d) => d.agent_id)).toEqual([agentId]);
    // A run that started before the record cannot have seen what it defers: the record stays.
    await repo.clearDeferral(agentId, 1_999);
    expect(await repo.deferral(agentId)).toBeDefined();
    await repo.clearDeferral(agentId, 2_000);
    expect(await repo.deferral(agentId)).toBeUndefined();
    expect(await repo.deferrals()).toEqual([]);
  });

  it('lists the calls in flight a listed task may be the reply of, and tells which are still unresolved', async () => {
    const t0 = 5_000_000;
    const early = await insertOp({ status: 'calling_adcp', created_at: t0 });
    const late = await insertOp({ status: 'calling_adcp', created_at: t0 + 10_000 });
    await insertOp({ status: 'calling_adcp', created_at: t0, type: 'update_media_buy' });
    const bound = await insertOp({ status: 'calling_adcp', task_id: 'task_bound', created_at: t0 });
    const done = await insertOp({ status: 'submitted', task_id: 'task_done', created_at: t0 });

    expect(await store.reconcile.callsInFlight(agentId, 'create_media_buy', t0 + 5_000, 100)).toEqual([early]);
    expect(await store.reconcile.callsInFlight(agentId, 'create_media_buy', undefined, 100)).toEqual([early, late]);
    expect(await store.reconcile.callsInFlight(agentId, 'create_media_buy', undefined, 1)).toEqual([early]);

    const many = Array.from({ length: 1200 }, () => randomUUID());
    const still = await store.reconcile.stillInFlight([early, late, bound, done, ...many]);
    expect([...still].sort()).toEqual([early, late].sort());
    await store.db.kysely.updateTable('operations').set({ status: 'submitted', task_id: 'task_late' }).where('id', '=', late).execute();
    expect([...(await store.reconcile.stillInFlight([early, late]))]).toEqual([early]);
  });
});
