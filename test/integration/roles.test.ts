/**
 * Roles over real HTTP with the sandbox seller: every role reads; creating and
 * reconciling needs operator; registering agents needs admin. A refused request
 * gets 403 `forbidden` and changes nothing (no operation, no call to the seller,
 * no Idempotency-Key record, no reconcile report). The `created` event names the
 * key that asked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/server.js';
import type { Role } from '../../src/domain/roles.js';
import { createLogger } from '../../src/logger.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import type { Database } from '../../src/store/schema.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';

describe('API key roles', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;
  let operationId: string;
  const keys = {} as Record<Role, string>;

  beforeAll(async () => {
    seller = await startSandboxSeller({ port: 0 });
    orch = await startOrchestrator();
    agentId = await orch.registerAgent({ url: seller.url });
    for (const role of ['viewer', 'operator', 'approver', 'admin'] as const) {
      keys[role] = await orch.app.store.tenants.createApiKey(orch.tenantId, { name: `${role}-key`, role });
    }
    const made = await orch.api('POST', '/v1/operations', { agent_id: agentId, task: 'get_products', params: { buying_mode: 'brief', brief: 'roles' }, webhook: 'none' });
    expect(made.status).toBe(202);
    operationId = made.body.id;
    // Settled before any test counts rows: on a loaded machine its first call may time out and
    // be resent, and those events must not be mistaken for something a refused write did.
    await waitForStatus(orch, operationId, ['completed']);
  });
  afterAll(async () => {
    await orch?.close();
    await seller?.close();
  });

  async function call(key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${orch.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }

  const count = async (table: keyof Database) =>
    Number((await orch.app.store.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const counts = async () => ({
    operations: await count('operations'),
    events: await count('operation_events'),
    agents: await count('agents'),
    idempotency: await count('api_idempotency'),
    reports: await count('reconcile_reports'),
    sellerCalls: seller.stats().mediaBuysCreated,
  });

  const forbidden = (need: Role, role: Role) => ({ error: { code: 'forbidden', message: `this action needs the ${need} role; key '${role}-key' has ${role}` } });
  const newAgent = (name: string) => ({ name, role: 'seller', url: seller.url, protocol: 'mcp' });
  const mediaBuy = () => ({ agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), webhook: 'none' });

  it('lets every role read agents, operations and the event stream', async () => {
    for (const role of ['viewer', 'operator', 'approver', 'admin'] as const) {
      for (const path of ['/v1/agents', `/v1/agents/${agentId}`, '/v1/operations', `/v1/operations/${operationId}`]) {
        const res = await call(keys[role], 'GET', path);
        expect(res.status, `${role} GET ${path}`).toBe(200);
      }
      const stream = new AbortController();
      const sse = await fetch(`${orch.url}/v1/events`, { headers: { authorization: `Bearer ${keys[role]}` }, signal: stream.signal });
      expect(sse.status, `${role} GET /v1/events`).toBe(200);
      stream.abort();
    }
  });

  it('refuses a viewer every write with 403 forbidden, before anything is stored or sent', async () => {
    const before = await counts();
    const attempts = [
      ['/v1/operations', { agent_id: agentId, task: 'get_products', params: { buying_mode: 'brief', brief: 'x' }, webhook: 'none' }, 'operator'],
      ['/v1/media-buys', mediaBuy(), 'operator'],
      ['/v1/reconcile', { agent_id: agentId }, 'operator'],
      ['/v1/agents', newAgent('viewer-made'), 'admin'],
    ] as const;
    for (const [path, body, need] of attempts) {
      const res = await call(keys.viewer, 'POST', path, body, { 'idempotency-key': `viewer-${path}` });
      expect(res.status, path).toBe(403);
      expect(res.body).toEqual(forbidden(need, 'viewer'));
    }
    expect(await counts()).toEqual(before);

    // No Idempotency-Key was reserved: an operator using the same one gets a fresh answer, not a replay.
    const retried = await call(keys.operator, 'POST', '/v1/media-buys', mediaBuy(), { 'idempotency-key': 'viewer-/v1/media-buys' });
    expect(retried.status).toBe(202);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  it('lets operators and approvers start operations and reconcile, but not register agents', async () => {
    for (const role of ['operator', 'approver'] as const) {
      const buy = await call(keys[role], 'POST', '/v1/media-buys', mediaBuy());
      expect(buy.status, role).toBe(202);
      const task = await call(keys[role], 'POST', '/v1/operations', { agent_id: agentId, task: 'get_products', params: { buying_mode: 'brief', brief: role }, webhook: 'none' });
      expect(task.status, role).toBe(202);
      const reconciled = await call(keys[role], 'POST', '/v1/reconcile', { agent_id: agentId });
      expect(reconciled.status, role).toBe(200);
      expect(reconciled.body.reports).toHaveLength(1);

      const before = await counts();
      const agent = await call(keys[role], 'POST', '/v1/agents', newAgent(`${role}-made`), { 'idempotency-key': `agent-by-${role}` });
      expect(agent.status).toBe(403);
      expect(agent.body).toEqual(forbidden('admin', role));
      expect(await counts()).toEqual(before);
    }
    const names = (await call(keys.viewer, 'GET', '/v1/agents')).body.agents.map((a: { name: string }) => a.name);
    expect(names).toEqual(['seller']);
  });

  it('lets an admin do all of it', async () => {
    const agent = await call(keys.admin, 'POST', '/v1/agents', newAgent('admin-made'));
    expect(agent.status).toBe(201);
    expect((await call(keys.admin, 'POST', '/v1/media-buys', mediaBuy())).status).toBe(202);
    expect((await call(keys.admin, 'POST', '/v1/reconcile', {})).status).toBe(200);
  });

  it("records the creating key's name as the actor of the created event, and no actor on what the seller did", async () => {
    const buy = await call(keys.operator, 'POST', '/v1/media-buys', mediaBuy());
    expect(buy.status).toBe(202);
    const done = await waitForStatus(orch, buy.body.id, ['completed']);
    const [created, ...rest] = done.events;
    expect(created).toMatchObject({ kind: 'created', source: 'user', to: 'requested', actor: 'operator-key' });
    expect(rest.length).toBeGreaterThan(0);
    for (const e of rest) expect(e.actor).toBeNull();

    const task = await call(keys.approver, 'POST', '/v1/operations', { agent_id: agentId, task: 'get_products', params: { buying_mode: 'brief', brief: 'who' }, webhook: 'none' });
    const shown = await call(keys.viewer, 'GET', `/v1/operations/${task.body.id}`);
    expect(shown.body.events[0]).toMatchObject({ kind: 'created', actor: 'approver-key' });
  });

  it('gives a key whose stored role this version does not know no rights at all', async () => {
    const key = await orch.app.store.tenants.createApiKey(orch.tenantId, { name: 'odd-key', role: 'viewer' });
    await orch.app.store.db.kysely.updateTable('api_keys').set({ role: 'superuser' }).where('name', '=', 'odd-key').execute();
    const res = await call(key, 'GET', '/v1/operations');
    expect(res.status).toBe(403);
    expect(res.body.error).toEqual({ code: 'forbidden', message: "this action needs the viewer role; key 'odd-key' has superuser" });
  });

  it('refuses to build an API with a /v1 route that states no role', async () => {
    const { app } = orch;
    const deps = { store: app.store, secrets: app.secrets, operations: app.operations, metrics: app.metrics, logger: createLogger('silent'), isReady: () => true };
    await expect(buildApi({ ...deps, plugins: [(api) => void api.get('/v1/naked', async () => ({}))] })).rejects.toThrow('route GET /v1/naked has no requireRole preHandler');
  });
});
