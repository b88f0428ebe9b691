/** The same repository tests on SQLite and (when TEST_DATABASE_URL is set) PostgreSQL. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store, OperationRow } from '../../src/store/index.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { openDb } from '../../src/store/db.js';
import { hashApiKey } from '../../src/store/tenants-repo.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';
import { closeSellerStore, openSellerStore } from '../helpers/seller-store.js';

function newOperation(tenantId: string, agentId: string, over: Partial<OperationRow> = {}): OperationRow {
  const now = Date.now();
  return newOperationRow(
    { id: randomUUID(), tenant_id: tenantId, agent_id: agentId, type: 'create_media_buy', idempotency_key: randomUUID(), request_body: '{"a":1}', created_at: now },
    // Due to be sent now, as a freshly created operation is.
    { next_check_at: now, check_kind: 'send', ...over },
  );
}

describe.each(dialects)('store on $name', ({ make }) => {
  let database: TestDatabase;
  let store: Store;
  let tenantId: string;
  let agentId: string;

  beforeAll(async () => {
    database = await make();
    ({ store, tenantId, agentId } = await openSellerStore(database));
  });
  afterAll(() => closeSellerStore(store, database));

  it('migrations are idempotent and safe when several run at once', async () => {
    const others = [openDb(database.url), openDb(database.url), openDb(database.url)];
    const applied = await Promise.all(others.map((db) => migrateToLatest(db)));
    expect(applied.flat()).toEqual([]);
    await Promise.all(others.map((db) => db.close()));
  });

  it('stores API keys hashed and finds the tenant by key', async () => {
    const key = await store.tenants.createApiKey(tenantId);
    const rows = await store.db.kysely.selectFrom('api_keys').selectAll().execute();
    expect(rows.some((r) => r.key_hash === hashApiKey(key))).toBe(true);
    expect(rows.some((r) => r.key_hash === key)).toBe(false);
    expect(await store.tenants.findTenantByApiKey(key)).toEqual({ id: tenantId, name: 'acme' });
    expect(await store.tenants.findTenantByApiKey(key + 'x')).toBeUndefined();
  });

  it("keeps a label of a minted key's first characters, and nothing of an operator's own key", async () => {
    const minted = await store.tenants.createApiKey(tenantId);
    const chosen = await store.tenants.createApiKey(tenantId, { key: 'operator-chosen-key-1234' });
    const rows = await store.db.kysely.selectFrom('api_keys').selectAll().execute();
    expect(rows.find((r) => r.key_hash === hashApiKey(minted))!.prefix).toBe(minted.slice(0, 8));
    const chosenRow = rows.find((r) => r.key_hash === hashApiKey(chosen))!;
    expect(chosenRow.prefix).toBe('');
    expect(chosenRow.name).toMatch(/^key-[0-9a-f]{8}$/);
    expect(chosenRow.name).not.toContain('operator');
    expect(await store.tenants.findTenantByApiKey(chosen)).toEqual({ id: tenantId, name: 'acme' });
  });

  it('inserts an operation with its first event and reads it per tenant', async () => {
    const op = newOperation(tenantId, agentId);
    await store.operations.insert(op, { source: 'user', kind: 'created', to: 'requested' });
    const read = await store.operations.getForTenant(tenantId, op.id);
    expect(read).toMatchObject({ id: op.id, status: 'requested', request_body: '{"a":1}', next_check_at: op.next_check_at });
    expect(typeof read!.created_at).toBe('number');
    expect(await store.operations.getForTenant(randomUUID(), op.id)).toBeUndefined();
    const events = await store.operations.events(op.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'created', to_status: 'requested', source: 'user' });
  });

  it('inserts each operation with its own values when the statement is reused (compiled once per set of columns)', async () => {
    const first = newOperation(tenantId, agentId, { request_body: '{"n":1}' });
    const second = newOperation(tenantId, agentId, { request_body: '{"n":2}', next_check_at: first.next_check_at! + 1 });
    await store.operations.insert(first, { source: 'user', kind: 'created', to: 'requested' });
    await store.operations.insert(second, { source: 'user', kind: 'created', to: 'requested' });
    for (const op of [first, second]) {
      expect(await store.operations.getForTenant(tenantId, op.id)).toMatchObject({ id: op.id, idempotency_key: op.idempotency_key, request_body: op.request_body, next_check_at: op.next_check_at });
    }
  });

  it('claims due work exclusively, even when two workers race', async () => {
    const now = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const op = newOperation(tenantId, agentId, { next_check_at: now - 1000 + i });
      ids.push(op.id);
      await store.operations.insert(op, { source: 'user', kind: 'created' });
    }
    const [a, b] = await Promise.all([
      store.operations.claimDue('worker-a', now + 10_000, 30_000, 100),
      store.operations.claimDue('worker-b', now + 10_000, 30_000, 100),
    ]);
    const claimed = [...a, ...b].map((r) => r.id);
    expect(new Set(claimed).size).toBe(claimed.length);
    for (const id of ids) expect(claimed).toContain(id);
    for (const r of a) expect(r).toMatchObject({ lease_owner: 'worker-a', attempt: 1 });
    // Leased rows are not due again until the lease expires...
    expect(await store.operations.claimDue('worker-c', now + 10_000, 30_000, 100)).toHaveLength(0);
    // ...and then they come back on their own, with the attempt counted again.
    const again = await store.operations.claimDue('worker-c', now + 50_000, 30_000, 1000);
    expect(again.map((r) => r.id)).toEqual(expect.arrayContaining(ids));
    expect(again.find((r) => r.id === ids[0])).toMatchObject({ lease_owner: 'worker-c', attempt: 2 });
    // Finish them so later tests start clean.
    for (const r of again) {
      await store.operations.mutate(r.id, { owner: 'worker-c', epoch: r.lease_epoch }, () => ({
        patch: { next_check_at: null, lease_owner: null, lease_until: null },
        value: null,
      }));
    }
  });

  it('refuses a write made under a lease that moved on', async () => {
    const op = newOperation(tenantId, agentId, { next_check_at: 1 });
    await store.operations.insert(op, { source: 'user', kind: 'created' });
    const [first] = await store.operations.claimDue('old', 2, 10, 1);
    expect(first.id).toBe(op.id);
    const [second] = await store.operations.claimDue('new', 100, 10, 1);
    expect(second.id).toBe(op.id);
    const stale = await store.operations.mutate(op.id, { owner: 'old', epoch: first.lease_epoch }, () => ({
      patch: { status: 'failed' },
      events: [{ source: 'poll', kind: 'transition', from: 'requested', to: 'failed' }],
      value: null,
    }));
    expect(stale.outcome).toBe('lease_lost');
    expect((await store.operations.get(op.id))!.status).toBe('requested');
    expect(await store.operations.events(op.id)).toHaveLength(1);
    const fresh = await store.operations.mutate(op.id, { owner: 'new', epoch: second.lease_epoch }, () => ({
      patch: { status: 'calling_adcp', next_check_at: null },
      events: [{ source: 'call', kind: 'transition', from: 'requested', to: 'calling_adcp' }],
      value: 1,
    }));
    expect(fresh.outcome).toBe('applied');
    expect((await store.operations.events(op.id)).map((e) => e.to_status)).toEqual([null, 'calling_adcp']);
  });

  it('keeps one operation per (agent, task_id)', async () => {
    const a = newOperation(tenantId, agentId, { task_id: 'task-1', next_check_at: null });
    const b = newOperation(tenantId, agentId, { task_id: 'task-1', next_check_at: null });
    await store.operations.insert(a, { source: 'user', kind: 'created' });
    await expect(store.operations.insert(b, { source: 'user', kind: 'created' })).rejects.toThrow();
    expect((await store.operations.findByTask(agentId, 'task-1'))!.id).toBe(a.id);
    expect(await store.operations.get(b.id)).toBeUndefined();
  });

  it('lists newest first with a keyset cursor and filters', async () => {
    const t2 = (await store.tenants.ensureTenant('list-tenant')).id;
    const a2 = (await store.agents.insert({ tenantId: t2, name: 's', role: 'seller', url: 'http://x', protocol: 'mcp' })).id;
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const op = newOperation(t2, a2, { created_at: 1000 + i, status: i % 2 ? 'submitted' : 'completed', next_check_at: null });
      made.push(op.id);
      await store.operations.insert(op, { source: 'user', kind: 'created' });
    }
    const page1 = await store.operations.list(t2, {}, 2);
    expect(page1.map((r) => r.id)).toEqual([made[4], made[3]]);
    const page2 = await store.operations.list(t2, {}, 2, { createdAt: page1[1].created_at, id: page1[1].id });
    expect(page2.map((r) => r.id)).toEqual([made[2], made[1]]);
    expect((await store.operations.list(t2, { status: 'submitted' }, 10)).map((r) => r.id)).toEqual([made[3], made[1]]);
  });

  it('reserves, replays and refuses API idempotency keys', async () => {
    expect(await store.idempotency.reserve(tenantId, 'k1', 'h1')).toEqual({ kind: 'reserved' });
    expect(await store.idempotency.reserve(tenantId, 'k1', 'h1')).toEqual({ kind: 'in_progress', abandoned: false });
    expect(await store.idempotency.reserve(tenantId, 'k1', 'h1', Date.now() + 200_000)).toEqual({ kind: 'in_progress', abandoned: true });
    expect(await store.idempotency.reserve(tenantId, 'k1', 'h2')).toEqual({ kind: 'mismatch' });
    await store.idempotency.complete(tenantId, 'k1', 202, '{"x":1}');
    expect(await store.idempotency.reserve(tenantId, 'k1', 'h1')).toEqual({ kind: 'replay', statusCode: 202, body: '{"x":1}' });
  });
});
