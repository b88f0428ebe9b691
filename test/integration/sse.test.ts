/**
 * GET /v1/events over loopback: what a dashboard or `ops watch` sees. Events
 * arrive in order with their ids, resume exactly after Last-Event-ID, stay
 * within the tenant, and need the API key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { openSse, type SseClient, type SseMessage } from '../helpers/sse-client.js';

let seller: SandboxSeller;
let orch: TestOrchestrator;
let agentId: string;
const clients: SseClient[] = [];

beforeAll(async () => {
  seller = await startSandboxSeller({ submittedDelayMs: 300 });
  orch = await startOrchestrator();
  agentId = await orch.registerAgent({ url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await orch?.close();
  await seller?.close();
});

async function events(key: string, headers: Record<string, string> = {}, query = ''): Promise<SseClient> {
  const c = await openSse(`${orch.url}/v1/events${query}`, { authorization: `Bearer ${key}`, ...headers });
  clients.push(c);
  return c;
}

const of = (opId: string) => (m: SseMessage) => m.data.operation_id === opId;
const path = (ms: SseMessage[]) => ms.filter((m) => m.data.kind === 'created' || m.data.kind === 'transition').map((m) => m.data.to);

async function createBuy(product = 'sandbox_submitted', api = orch.api): Promise<string> {
  const res = await api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(product) });
  expect(res.status).toBe(202);
  return res.body.id;
}

describe('GET /v1/events', () => {
  let firstOp: string;
  let firstEvents: SseMessage[];

  it('streams a media buy through created → calling_adcp → submitted → completed, in order, with ids', async () => {
    const sse = await events(orch.apiKey);
    expect(sse.status).toBe(200);
    firstOp = await createBuy();
    const done = await waitForStatus(orch, firstOp, ['completed']);
    await sse.waitFor((m) => of(firstOp)(m) && m.data.to === 'completed');
    firstEvents = sse.messages.filter(of(firstOp));

    expect(path(firstEvents)).toEqual(['requested', 'calling_adcp', 'submitted', 'completed']);
    // The same rows, in the same order, as the operation's own history.
    expect(firstEvents.map((m) => Number(m.id))).toEqual(done.events.map((e: { id: number }) => e.id));
    expect(firstEvents.map((m) => m.data.id)).toEqual(done.events.map((e: { id: number }) => e.id));
    expect(firstEvents[0]!.data).toMatchObject({ kind: 'created', source: 'user', to: 'requested', operation_id: firstOp });
    expect(firstEvents.at(-1)!.data).toMatchObject({ to: 'completed', status: 'completed' });
    expect(typeof firstEvents[0]!.data.at).toBe('string');
  });

  it('resumes with Last-Event-ID exactly after that event, from the database', async () => {
    const cut = firstEvents[1]!;
    const resumed = await events(orch.apiKey, { 'last-event-id': cut.id! });
    const expected = firstEvents.slice(2).map((m) => m.id);
    // Then a new operation: its first event must directly follow, proving nothing extra came in between.
    const next = await createBuy('sandbox_instant');
    const got = await resumed.waitFor(() => true, expected.length + 1);
    expect(got.slice(0, expected.length).map((m) => m.id)).toEqual(expected);
    expect(got[expected.length]!.data).toMatchObject({ operation_id: next, kind: 'created' });

    // ?after= does the same for a client that cannot set headers.
    const byQuery = await events(orch.apiKey, {}, `?after=${cut.id}`);
    const again = await byQuery.waitFor(() => true, expected.length);
    expect(again.map((m) => m.id)).toEqual(expected);
    await waitForStatus(orch, next, ['completed']);
  });

  it("never shows another tenant's events", async () => {
    const tenantB = await orch.app.store.tenants.ensureTenant('other-tenant');
    const keyB = await orch.app.store.tenants.createApiKey(tenantB.id);
    const apiB: TestOrchestrator['api'] = async (method, p, body) => {
      const res = await fetch(`${orch.url}${p}`, { method, headers: { authorization: `Bearer ${keyB}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: await res.json(), headers: res.headers };
    };
    const agentB = (await apiB('POST', '/v1/agents', { name: 'seller-b', role: 'seller', protocol: 'mcp', url: seller.url })).body.id;

    const sseA = await events(orch.apiKey);
    const sseB = await events(keyB, {}, '?after=0');
    const opA = await createBuy('sandbox_instant');
    const resB = await apiB('POST', '/v1/media-buys', { agent_id: agentB, request: mediaBuyRequest('sandbox_instant'), webhook: 'none' });
    expect(resB.status).toBe(202);
    const opB = resB.body.id as string;

    await sseB.waitFor((m) => of(opB)(m) && m.data.to === 'completed');
    await sseA.waitFor((m) => of(opA)(m) && m.data.to === 'completed');
    // B replayed from the very start of time (after=0) and still saw only its own operation.
    expect(sseB.messages.length).toBeGreaterThan(0);
    expect(sseB.messages.every(of(opB))).toBe(true);
    expect(sseA.messages.some(of(opB))).toBe(false);
  });

  it('refuses a missing or wrong API key with 401, and a malformed cursor with 400', async () => {
    const wrong = await openSse(`${orch.url}/v1/events`, { authorization: 'Bearer not-a-real-key-0000000000' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ error: { code: 'unauthorized' } });
    const none = await openSse(`${orch.url}/v1/events`);
    expect(none.status).toBe(401);
    const bad = await openSse(`${orch.url}/v1/events`, { authorization: `Bearer ${orch.apiKey}`, 'last-event-id': 'abc' });
    expect(bad.status).toBe(400);
  });

  it('stops reading for a client that went away', async () => {
    const before = orch.app.live.feed.size;
    const sse = await events(orch.apiKey);
    expect(orch.app.live.feed.size).toBe(before + 1);
    sse.close();
    await waitFor(() => orch.app.live.feed.size === before);
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 20));
  }
}
