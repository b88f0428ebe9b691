/** Bad input to the HTTP API: a clear 4xx with an error code, and nothing stored. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';

describe('API input handling', () => {
  let orch: TestOrchestrator;
  let agentId: string;

  beforeAll(async () => {
    orch = await startOrchestrator();
    // An agent at an address nothing listens on: these tests never get as far as calling it.
    agentId = await orch.registerAgent({ url: 'http://127.0.0.1:9/mcp' });
  });
  afterAll(async () => orch?.close());

  const countOperations = async () => (await orch.app.store.db.kysely.selectFrom('operations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;

  it('answers an unknown agent with 404 agent_not_found and stores nothing', async () => {
    const before = await countOperations();
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: '00000000-0000-0000-0000-000000000000', request: {} });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('agent_not_found');
    expect(await countOperations()).toBe(before);
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const before = await countOperations();
    const res = await orch.api('POST', '/v1/media-buys', '{"agent_id": ');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_json');
    expect(await countOperations()).toBe(before);
  });

  it('answers a missing field with 400 invalid_request naming it', async () => {
    const before = await countOperations();
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(JSON.stringify(res.body.error)).toContain('request');
    const unknownField = await orch.api('POST', '/v1/operations', { agent_id: agentId, task: 'get_products', params: {}, surprise: 1 });
    expect(unknownField.status).toBe(400);
    expect(await countOperations()).toBe(before);
  });

  it('refuses an agent URL carrying credentials, without echoing them', async () => {
    for (const url of ['http://user:pa55word-in-url@127.0.0.1:9/mcp', 'http://pa55word-in-url@127.0.0.1:9/mcp']) {
      const res = await orch.api('POST', '/v1/agents', { name: 'x', role: 'seller', protocol: 'mcp', url });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(JSON.stringify(res.body)).toContain('must not carry credentials');
      expect(JSON.stringify(res.body)).not.toContain('pa55word-in-url');
    }
    const signing = await orch.api('POST', '/v1/agents', { name: 'x', role: 'seller', protocol: 'mcp', url: 'http://127.0.0.1:9/mcp', webhook_signing: { jwks_uri: 'https://u:pa55word-in-url@keys.example/jwks.json' } });
    expect(signing.status).toBe(400);
    expect((await orch.api('GET', '/v1/agents')).body.agents).toHaveLength(1);
  });

  it('answers a wrong or missing API key with 401 unauthorized', async () => {
    for (const authorization of ['Bearer not-a-key', 'Basic abc', '']) {
      const res = await fetch(`${orch.url}/v1/operations`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('unauthorized');
    }
    const post = await fetch(`${orch.url}/v1/agents`, {
      method: 'POST',
      headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x', role: 'seller', url: 'http://127.0.0.1:9/mcp', protocol: 'mcp' }),
    });
    expect(post.status).toBe(401);
    expect((await orch.api('GET', '/v1/agents')).body.agents).toHaveLength(1);
  });

  it("answers another tenant's agent and operation with 404", async () => {
    const other = await orch.app.store.tenants.ensureTenant('other-tenant');
    const otherKey = await orch.app.store.tenants.createApiKey(other.id);
    const asOther = (method: string, path: string, body?: unknown) =>
      fetch(`${orch.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${otherKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    expect((await asOther('GET', `/v1/agents/${agentId}`)).status).toBe(404);
    const created = await asOther('POST', '/v1/media-buys', { agent_id: agentId, request: {} });
    expect(created.status).toBe(404);
    expect((await created.json()).error.code).toBe('agent_not_found');
    // An operation of ours, looked up by the other tenant.
    const mine = await orch.api('POST', '/v1/operations', { agent_id: agentId, task: 'get_products', params: { buying_mode: 'brief', brief: 'x' }, webhook: 'none' });
    expect(mine.status).toBe(202);
    const peek = await asOther('GET', `/v1/operations/${mine.body.id}`);
    expect(peek.status).toBe(404);
    expect((await peek.json()).error.code).toBe('operation_not_found');
    expect((await asOther('GET', '/v1/operations')).status).toBe(200);
  });

  it('rejects a bad agent registration and keeps secrets out of answers', async () => {
    const bad = await orch.api('POST', '/v1/agents', { name: 'x', role: 'buyer', url: 'ftp://x', protocol: 'mcp' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    const ok = await orch.api('POST', '/v1/agents', { name: 'tok', role: 'seller', url: 'http://127.0.0.1:9/mcp', protocol: 'mcp', auth: { scheme: 'bearer', token: 'super-secret-agent-token' } });
    expect(ok.status).toBe(201);
    expect(JSON.stringify(ok.body)).not.toContain('super-secret-agent-token');
    const row = await orch.app.store.agents.get(ok.body.id);
    expect(row!.auth_token_enc).not.toContain('super-secret-agent-token');
    const listed = await orch.api('GET', '/v1/agents');
    expect(JSON.stringify(listed.body)).not.toContain('super-secret-agent-token');
  });

  it('replays the first answer for a repeated Idempotency-Key and refuses a different body', async () => {
    const body = { name: 'idem', role: 'seller', url: 'http://127.0.0.1:9/mcp', protocol: 'mcp' };
    const first = await orch.api('POST', '/v1/agents', body, { 'idempotency-key': 'agent-key-1' });
    const again = await orch.api('POST', '/v1/agents', body, { 'idempotency-key': 'agent-key-1' });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    const changed = await orch.api('POST', '/v1/agents', { ...body, name: 'other' }, { 'idempotency-key': 'agent-key-1' });
    expect(changed.status).toBe(409);
    expect(changed.body.error.code).toBe('idempotency_key_reused');
    expect((await orch.api('GET', '/v1/agents')).body.agents.filter((a: any) => a.name === 'idem')).toHaveLength(1);
  });

  it('serves health, readiness, metrics and OpenAPI', async () => {
    expect((await fetch(`${orch.url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${orch.url}/readyz`)).json()).toMatchObject({ status: 'ready' });
    const metrics = await (await fetch(`${orch.url}/metrics`)).text();
    expect(metrics).toContain('adcp_orch_operations_pending');
    const spec = await (await fetch(`${orch.url}/openapi.json`)).json();
    expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(['/v1/agents', '/v1/operations', '/v1/media-buys', '/v1/operations/{id}']));
  });
});
