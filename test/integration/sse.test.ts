/**
 * GET /v1/events over loopback: what a dashboard or `ops watch` sees. The tenant's
 * notifications arrive in order, each with `event:` its type, `id:` its id and
 * `data:` its body; a client dropped mid-stream resumes exactly after its
 * Last-Event-ID (no gap, no duplicate) even after a burst while it was away;
 * idle streams get heartbeats; streams stay within the tenant and need the key.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { openSse, type SseClient, type SseMessage } from '../helpers/sse-client.js';
import { createWebhookOperation, type WebhookOperation } from '../helpers/webhook-operation.js';

const HEARTBEAT_MS = 200;

let seller: SandboxSeller;
let orch: TestOrchestrator;
let agentId: string;
const clients: SseClient[] = [];

beforeAll(async () => {
  seller = await startSandboxSeller({ submittedDelayMs: 300 });
  orch = await startOrchestrator({ env: { ADCP_ORCH_SSE_HEARTBEAT_MS: String(HEARTBEAT_MS) } });
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

const of = (opId: string) => (m: SseMessage) => m.data.data.operation?.id === opId;
const ids = (ms: SseMessage[]) => ms.map((m) => m.id);

async function createBuy(product = 'sandbox_submitted', extra: Record<string, unknown> = {}): Promise<string> {
  const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(product), ...extra });
  expect(res.status).toBe(202);
  return res.body.id;
}

/** The tenant's notifications of these operations as stored, in seq order. */
async function stored(opIds: string[]) {
  return orch.app.store.db.kysely.selectFrom('notifications').selectAll().where('operation_id', 'in', opIds).orderBy('seq').execute();
}

/** A `completed` webhook for an operation, HMAC-signed as the seller would, posted over HTTP. */
async function completeByWebhook(op: WebhookOperation): Promise<void> {
  const body = JSON.stringify({
    idempotency_key: `whk_${randomBytes(12).toString('hex')}`,
    operation_id: op.id,
    task_id: op.taskId,
    task_type: 'create_media_buy',
    status: 'completed',
    timestamp: new Date().toISOString(),
    result: { media_buy_id: `mb_${op.taskId}`, packages: [] },
  });
  const ts = Math.floor(Date.now() / 1000);
  const mac = createHmac('sha256', op.secret).update(`${ts}.`).update(body).digest('hex');
  const res = await fetch(`${orch.url}/webhooks/adcp/${op.token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-adcp-timestamp': String(ts), 'x-adcp-signature': `sha256=${mac}` },
    body,
  });
  expect(res.status).toBe(200);
  await res.body?.cancel();
}

describe('GET /v1/events', () => {
  it('streams a media buy as notifications: event: the type, id: the notification id, data: the stored body', async () => {
    const sse = await events(orch.apiKey);
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(sse.headers.get('x-accel-buffering')).toBe('no');
    const op = await createBuy();
    await waitForStatus(orch, op, ['completed']);
    await sse.waitFor((m) => of(op)(m) && m.event === 'operation.completed');
    const mine = sse.messages.filter(of(op));

    expect(mine.map((m) => m.event)).toEqual(['operation.created', 'operation.submitted', 'operation.completed']);
    const rows = await stored([op]);
    expect(ids(mine)).toEqual(rows.map((r) => r.id));
    for (const [i, m] of mine.entries()) {
      expect(m.id).toMatch(/^ntf_/);
      expect(m.data).toEqual(JSON.parse(rows[i]!.body));
      expect(m.data).toMatchObject({ id: m.id, type: m.event, tenant_id: orch.tenantId });
      expect(m.data.data.operation).not.toHaveProperty('events');
    }
    // A buy sent at once is stored already calling_adcp (its created and requested → calling_adcp events
    // commit together), so the created notification shows the operation as committed.
    expect(mine[0]!.data.data).toMatchObject({ operation: { id: op, status: 'calling_adcp' }, event: { kind: 'created', source: 'user', to: 'requested' } });
    // Who caused it: the name of the key that created the buy.
    expect(mine[0]!.data.data.event.actor).toMatch(/^key-/);
    expect(mine[1]!.data.data.event.actor).toBeNull();
    expect(mine[1]!.data.data.event).toMatchObject({ kind: 'transition', to: 'submitted' });
    const completed = mine[2]!.data.data;
    expect(completed.operation).toMatchObject({ status: 'completed' });
    expect(completed.media_buy_id).toEqual(completed.operation.result.media_buy_id);
    expect(completed.link).toBe(`${orch.config.ADCP_ORCH_PUBLIC_URL}/operations/${op}`);
    // The event in the body is the one in the operation's history.
    const view = await orch.api('GET', `/v1/operations/${op}`);
    expect(view.body.events).toContainEqual(completed.event);
  });

  it('sends a heartbeat comment on an idle stream', async () => {
    const sse = await events(orch.apiKey);
    const opened = Date.now();
    await sse.waitForComments((t) => t === 'heartbeat', 2, 10_000);
    const beats = sse.comments.filter((c) => c.text === 'heartbeat');
    // Two beats take at least one interval between them (timers never fire early).
    expect(beats[1]!.at - opened).toBeGreaterThanOrEqual(HEARTBEAT_MS);
    expect(sse.comments[0]!.text).toBe('connected');
  });

  it('a client dropped mid-stream resumes with Last-Event-ID: no gap, no duplicate, after a burst while it was away', async () => {
    const reference = await events(orch.apiKey);
    const victim = await events(orch.apiKey);
    const hooked = await Promise.all(Array.from({ length: 24 }, () => createWebhookOperation(orch, agentId, 'hmac')));
    const burstOps: string[] = hooked.map((h) => h.id);

    // Burst, part one: webhooks and new buys at once; the victim is cut off while they stream in.
    const partOne = Promise.all([...hooked.slice(0, 12).map(completeByWebhook), ...Array.from({ length: 5 }, () => createBuy('sandbox_instant', { webhook: 'none' }).then((id) => burstOps.push(id)))]);
    await victim.waitFor((m) => m.event === 'operation.completed', 3);
    victim.close();
    const lastId = victim.lastEventId()!;
    expect(lastId).toMatch(/^ntf_/);
    await partOne;
    // Part two, with the victim away.
    await Promise.all([...hooked.slice(12).map(completeByWebhook), ...Array.from({ length: 5 }, () => createBuy('sandbox_instant', { webhook: 'none' }).then((id) => burstOps.push(id)))]);
    for (const id of burstOps) await waitForStatus(orch, id, ['completed']);

    // The reference stream, never dropped, has every notification of the burst, in seq order.
    const expected = await stored(burstOps);
    expect(expected.filter((r) => r.type === 'operation.completed')).toHaveLength(burstOps.length);
    await reference.waitFor((m) => burstOps.includes(m.data.data.operation?.id), expected.length);
    expect(ids(reference.messages.filter((m) => burstOps.includes(m.data.data.operation?.id)))).toEqual(expected.map((r) => r.id));

    // The victim saw a prefix of the reference; resuming gives exactly the rest.
    const cut = ids(reference.messages).indexOf(lastId);
    expect(cut).toBeGreaterThanOrEqual(0);
    expect(ids(victim.messages)).toEqual(ids(reference.messages).slice(0, cut + 1));
    const rest = ids(reference.messages).slice(cut + 1);
    expect(rest.length).toBeGreaterThan(0);
    const resumed = await events(orch.apiKey, { 'last-event-id': lastId });
    await resumed.waitFor(() => true, rest.length);
    expect(ids(resumed.messages).slice(0, rest.length)).toEqual(rest);
    const seen = [...ids(victim.messages), ...ids(resumed.messages)];
    expect(new Set(seen).size).toBe(seen.length);

    // Then live: a new operation's first notification follows directly.
    const next = await createBuy('sandbox_instant', { webhook: 'none' });
    const got = await resumed.waitFor(() => true, rest.length + 1);
    expect(got[rest.length]!.data).toMatchObject({ type: 'operation.created', data: { operation: { id: next } } });

    // ?after= does the same for a client that cannot set headers.
    const byQuery = await events(orch.apiKey, {}, `?after=${lastId}`);
    await byQuery.waitFor(() => true, rest.length);
    expect(ids(byQuery.messages).slice(0, rest.length)).toEqual(rest);
    await waitForStatus(orch, next, ['completed']);
  });

  it('keeps only the types asked for with ?types=, and refuses an unknown type', async () => {
    const sse = await events(orch.apiKey, {}, '?types=operation.completed,operation.failed');
    const op = await createBuy('sandbox_instant', { webhook: 'none' });
    await sse.waitFor(of(op));
    await waitForStatus(orch, op, ['completed']);
    // A later notification on another operation proves the earlier ones of `op` were skipped, not late.
    const other = await createBuy('sandbox_instant', { webhook: 'none' });
    await sse.waitFor(of(other));
    expect(sse.messages.map((m) => m.event)).toEqual(['operation.completed', 'operation.completed']);
    const bad = await events(orch.apiKey, {}, '?types=operation.completed,operation.exploded');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'invalid_types' } });
  });

  it("never shows another tenant's notifications", async () => {
    const tenantB = await orch.app.store.tenants.ensureTenant('other-tenant');
    const keyB = await orch.app.store.tenants.createApiKey(tenantB.id);
    const apiB = async (method: string, p: string, body: unknown) => {
      const res = await fetch(`${orch.url}${p}`, { method, headers: { authorization: `Bearer ${keyB}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: await res.json() };
    };
    const agentB = (await apiB('POST', '/v1/agents', { name: 'seller-b', role: 'seller', protocol: 'mcp', url: seller.url })).body.id;

    const sseA = await events(orch.apiKey);
    const sseB = await events(keyB);
    const opA = await createBuy('sandbox_instant');
    const resB = await apiB('POST', '/v1/media-buys', { agent_id: agentB, request: mediaBuyRequest('sandbox_instant'), webhook: 'none' });
    expect(resB.status).toBe(202);
    const opB = resB.body.id as string;

    await sseB.waitFor((m) => of(opB)(m) && m.event === 'operation.completed');
    await sseA.waitFor((m) => of(opA)(m) && m.event === 'operation.completed');
    // About B's buy: its operation, or the live buy it made.
    const aboutB = (m: SseMessage) => of(opB)(m) || m.data.data.media_buy?.operation_id === opB;
    expect(sseB.messages.every(aboutB)).toBe(true);
    expect(sseB.messages.every((m) => m.data.tenant_id === tenantB.id)).toBe(true);
    expect(sseA.messages.some(aboutB)).toBe(false);
    // B cannot resume from A's notification id: to B it does not exist.
    const probe = await openSse(`${orch.url}/v1/events`, { authorization: `Bearer ${keyB}`, 'last-event-id': sseA.messages[0]!.id! });
    expect(probe.status).toBe(400);
  });

  it('refuses a missing or wrong API key with 401, and a malformed or unknown cursor with 400', async () => {
    const wrong = await openSse(`${orch.url}/v1/events`, { authorization: 'Bearer not-a-real-key-0000000000' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ error: { code: 'unauthorized' } });
    const none = await openSse(`${orch.url}/v1/events`);
    expect(none.status).toBe(401);
    const bad = await openSse(`${orch.url}/v1/events`, { authorization: `Bearer ${orch.apiKey}`, 'last-event-id': 'abc' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'invalid_cursor' } });
    const unknown = await openSse(`${orch.url}/v1/events?after=ntf_00000000-0000-4000-8000-000000000000`, { authorization: `Bearer ${orch.apiKey}` });
    expect(unknown.status).toBe(400);
  });

  it('stops reading for a client that went away', async () => {
    const before = orch.app.live.feed.size;
    const sse = await events(orch.apiKey);
    expect(orch.app.live.feed.size).toBe(before + 1);
    sse.close();
    await eventually(async () => (orch.app.live.feed.size === before ? true : undefined), 5000, 20);
  });
});
