/**
 * The store queries behind the dashboard, on SQLite and PostgreSQL: keyset pages
 * that cover every operation exactly once in order (ties on created_at included),
 * search by any id a person holds, the inbox oldest first, and sessions (hashed,
 * expiring, ending with their key).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type OperationRow, type Store } from '../../src/store/index.js';
import { DashboardReads } from '../../src/store/dashboard-reads.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { hashSessionToken } from '../../src/store/sessions-repo.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';

describe.each(dialects)('dashboard store on $name', ({ make }) => {
  let database: TestDatabase;
  let store: Store;
  let reads: DashboardReads;
  let tenantId: string;
  let otherTenant: string;
  let agentId: string;
  let otherAgent: string;

  beforeAll(async () => {
    database = await make();
    store = await openStore(database.url);
    reads = new DashboardReads(store.db);
    tenantId = (await store.tenants.ensureTenant('dash')).id;
    otherTenant = (await store.tenants.ensureTenant('dash-other')).id;
    agentId = (await store.agents.insert({ tenantId, name: 's', role: 'seller', url: 'http://x', protocol: 'mcp' })).id;
    otherAgent = (await store.agents.insert({ tenantId: otherTenant, name: 's', role: 'seller', url: 'http://x', protocol: 'mcp' })).id;
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  const op = (tenant: string, agent: string, over: Partial<OperationRow>) => {
    const id = randomUUID();
    return newOperationRow({ id, tenant_id: tenant, agent_id: agent, type: 'create_media_buy', idempotency_key: randomUUID(), request_body: '{}', created_at: 1000 }, over);
  };

  it('pages through every operation exactly once, newest first, when many share a created_at', async () => {
    const made: OperationRow[] = [];
    for (let i = 0; i < 23; i++) {
      const row = op(tenantId, agentId, { created_at: 5000 + Math.floor(i / 5) });
      made.push(row);
      await store.operations.insert(row, { source: 'user', kind: 'created' });
    }
    const expected = [...made].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1)).map((r) => r.id);
    const seen: string[] = [];
    let cursor: { createdAt: number; id: string } | undefined;
    for (;;) {
      const page = await store.operations.list(tenantId, {}, 4, cursor);
      seen.push(...page.map((r) => r.id));
      if (page.length < 4) break;
      const last = page[page.length - 1]!;
      cursor = { createdAt: last.created_at, id: last.id };
    }
    expect(seen).toEqual(expected);
  });

  it('finds an operation by its id, its seller task id or its idempotency key, only in its own tenant', async () => {
    const mine = op(tenantId, agentId, { task_id: 'task-shared', idempotency_key: 'key-shared' });
    const theirs = op(otherTenant, otherAgent, { task_id: 'task-shared', idempotency_key: 'key-shared' });
    await store.operations.insert(mine, { source: 'user', kind: 'created' });
    await store.operations.insert(theirs, { source: 'user', kind: 'created' });
    for (const term of [mine.id, 'task-shared', 'key-shared']) expect((await reads.search(tenantId, term)).map((r) => r.id)).toEqual([mine.id]);
    expect(await reads.search(tenantId, theirs.id)).toEqual([]);
    expect(await reads.search(tenantId, 'nothing-like-it')).toEqual([]);
  });

  it('lists what waits for a person oldest first, and counts it', async () => {
    const before = await reads.countWaiting(tenantId);
    const late = op(tenantId, agentId, { needs_input: 1, status: 'input-required', created_at: 9000 });
    const early = op(tenantId, agentId, { needs_input: 1, status: 'input-required', created_at: 8000 });
    await store.operations.insert(late, { source: 'user', kind: 'created' });
    await store.operations.insert(early, { source: 'user', kind: 'created' });
    await store.operations.insert(op(otherTenant, otherAgent, { needs_input: 1, created_at: 1 }), { source: 'user', kind: 'created' });
    const waiting = (await reads.waiting(tenantId, 100)).map((r) => r.id);
    expect(waiting.indexOf(early.id)).toBeLessThan(waiting.indexOf(late.id));
    expect(await reads.countWaiting(tenantId)).toBe(before + 2);
  });

  it('keeps sessions as hashes that expire and end with their key', async () => {
    const key = await store.tenants.addApiKey(tenantId, { name: 'session-key', role: 'approver' });
    const opened = await store.sessions.open(tenantId, key.info.id, 60_000, 1_000_000);
    expect(opened.expiresAt).toBe(1_060_000);
    const rows = await store.db.kysely.selectFrom('sessions').selectAll().execute();
    expect(rows.map((r) => r.token_hash)).toContain(hashSessionToken(opened.token));
    expect(JSON.stringify(rows)).not.toContain(opened.token);

    const active = await store.sessions.lookup(opened.token, 1_059_999);
    expect(active).toMatchObject({ state: 'active', holder: { tenant: { id: tenantId, name: 'dash' }, key: { name: 'session-key', role: 'approver' } } });
    expect(await store.sessions.lookup(opened.token, 1_060_000)).toEqual({ state: 'expired' });
    expect(await store.sessions.lookup('aos_never-issued', 1_000_001)).toEqual({ state: 'unknown' });
    expect(await store.sessions.sweepExpired(1_060_000)).toBeGreaterThanOrEqual(1);
    expect(await store.sessions.lookup(opened.token, 1_000_001)).toEqual({ state: 'unknown' });

    const again = await store.sessions.open(tenantId, key.info.id, 60_000, 2_000_000);
    await store.db.kysely.deleteFrom('api_keys').where('id', '=', key.info.id).execute();
    expect(await store.sessions.lookup(again.token, 2_000_001)).toEqual({ state: 'unknown' });
    const other = await store.tenants.addApiKey(tenantId, { name: 'session-key-2' });
    const third = await store.sessions.open(tenantId, other.info.id, 60_000, 3_000_000);
    expect(await store.sessions.closeForKey(other.info.id)).toBe(1);
    expect(await store.sessions.lookup(third.token, 3_000_001)).toEqual({ state: 'unknown' });
  });
});
