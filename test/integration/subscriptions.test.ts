/**
 * Outbound subscriptions end to end (docs/ARCHITECTURE.md, Telling users): real operations against
 * the sandbox seller write notifications; a real HTTP receiver on loopback gets
 * them, signed per Standard Webhooks and verified with the reference library.
 * The receiver fails as a user's would (500, a hang past the timeout, 503 with
 * Retry-After, 410) and the orchestrator is restarted between attempts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { sqlitePathFromUrl } from '../../src/store/db.js';
import { tempSqlite } from '../helpers/databases.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const FAST = {
  ADCP_ORCH_SUBSCRIPTION_TIMEOUT_MS: '1000',
  ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS: '50,100,150,200,250,300',
};

let seller: SandboxSeller;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  seller = await startSandboxSeller({ submittedDelayMs: 300 });
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  await seller?.close();
});

async function orchestrator(env: Record<string, string> = {}, opts: Parameters<typeof startOrchestrator>[0] = {}): Promise<TestOrchestrator> {
  const orch = await startOrchestrator({ ...opts, env: { ...FAST, ...env } });
  cleanups.push(() => orch.close());
  return orch;
}

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  cleanups.push(() => r.close());
  return r;
}

async function subscribe(orch: TestOrchestrator, body: Record<string, unknown>) {
  const res = await orch.api('POST', '/v1/subscriptions', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; secret: string; url: string; events: string[] | null; format: string };
}

/** Runs a media buy for each product and waits for every one to end. */
async function runBuys(orch: TestOrchestrator, agentId: string, products: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const p of products) {
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(p), webhook: 'none' });
    expect(res.status).toBe(202);
    ids.push(res.body.id);
  }
  for (const id of ids) await waitForStatus(orch, id, ['completed', 'failed', 'rejected']);
  return ids;
}

/** The notifications written for these operations, in seq order: what a subscriber to everything must get. */
async function notificationsOf(orch: TestOrchestrator, operationIds: string[]) {
  const rows = await orch.app.store.notifications.after(orch.tenantId, 0, 10_000);
  return rows.filter((n) => n.operation_id !== null && operationIds.includes(n.operation_id));
}

const answeredOk = (r: ReceivedRequest) => typeof r.answered === 'number' && r.answered >= 200 && r.answered < 300;

/** Waits until every id has been answered 2xx at least once. */
function allDelivered(rcv: WebhookReceiver, ids: string[], timeoutMs = 30_000) {
  return rcv.waitFor(() => (ids.every((id) => rcv.requests.some((r) => r.headers['webhook-id'] === id && answeredOk(r))) ? true : undefined), timeoutMs);
}

describe('subscriptions: delivery', () => {
  it('every notification of several operations arrives signed, once after dedupe, in order per operation, through a 500 and a timeout', async () => {
    const orch = await orchestrator();
    const rcv = await receiver();
    // The first notification's first attempt fails with 500, its second hangs past the 1 s timeout; all
    // else succeeds. Keyed on that notification, not on arrival order: a buy's own notifications
    // (another subject, not held behind it) may go out in between.
    let firstId: string | undefined;
    let firstAttempts = 0;
    rcv.script = (req) => {
      firstId ??= req.headers['webhook-id'];
      if (req.headers['webhook-id'] !== firstId) return { status: 204 };
      firstAttempts++;
      return firstAttempts === 1 ? { status: 500 } : firstAttempts === 2 ? 'hang' : { status: 204 };
    };
    const agentId = await orch.registerAgent({ url: seller.url });
    const sub = await subscribe(orch, { url: `${rcv.url}/hooks/adcp` });
    expect(sub.secret).toMatch(/^whsec_/);

    const ops = await runBuys(orch, agentId, ['sandbox_instant', 'sandbox_submitted', 'sandbox_instant', 'sandbox_submitted']);
    const expected = await notificationsOf(orch, ops);
    expect(expected.length).toBeGreaterThanOrEqual(10);
    await allDelivered(rcv, expected.map((n) => n.id));

    const wh = new Webhook(sub.secret);
    for (const r of rcv.requests) {
      // Every attempt is signed for its own timestamp; the body is the notification's stored text, byte for byte.
      expect(wh.verify(r.body, r.headers)).toEqual(JSON.parse(r.body));
      expect(r.path).toBe('/hooks/adcp');
      expect(r.headers['content-type']).toBe('application/json');
    }
    const byId = new Map(expected.map((n) => [n.id, n]));
    const aboutOperations = rcv.requests.filter((r) => !(JSON.parse(r.body).type as string).startsWith('media_buy.')); // buys notify of their own
    for (const r of aboutOperations) expect(r.body).toBe(byId.get(r.headers['webhook-id']!)!.body);
    // After dedupe by webhook-id: each notification exactly once, nothing else.
    const delivered = new Set(aboutOperations.filter(answeredOk).map((r) => r.headers['webhook-id']));
    expect([...delivered].sort()).toEqual(expected.map((n) => n.id).sort());
    // In order per operation: the distinct ids, as they first arrived, follow the outbox order.
    for (const op of ops) {
      const arrived = [...new Set(rcv.requests.map((r) => r.headers['webhook-id']!).filter((id) => byId.get(id)?.operation_id === op))];
      expect(arrived).toEqual(expected.filter((n) => n.operation_id === op).map((n) => n.id));
    }
    // The notification that met the 500 went out again under the same webhook-id, met the hang, then got through.
    expect(rcv.requests[0]!.headers['webhook-id']).toBe(firstId);
    expect(rcv.requests.filter((r) => r.headers['webhook-id'] === firstId).map((r) => r.answered)).toEqual([500, 'hang', 204]);

    // What a user sees of it.
    // (The receiver answered before the orchestrator recorded it: wait for the record.)
    const list = await eventually(async () => {
      const res = await orch.api('GET', `/v1/subscriptions/${sub.id}/deliveries?limit=500`);
      return res.body.deliveries.every((d: any) => d.status === 'delivered') ? res : undefined;
    });
    expect(list.status).toBe(200);
    expect(list.body.deliveries.filter((d: any) => !d.type.startsWith('media_buy.'))).toHaveLength(expected.length);
    expect(list.body.deliveries.every((d: any) => d.next_attempt_at === null && d.delivered_at !== null)).toBe(true);
    const retried = list.body.deliveries.find((d: any) => d.notification_id === firstId);
    expect(retried.attempts.map((a: any) => [a.http_status, a.outcome])).toEqual([
      [500, 'retry'],
      [null, 'retry'],
      [204, 'delivered'],
    ]);
    expect(retried.attempts[1].error).toMatch(/timed out after 1000 ms/);
    expect(retried).toMatchObject({ attempt_count: 3, last_status: 204, last_error: null });
  });

  it('a 410 disables the subscription, visibly, and nothing more is sent to it', async () => {
    const orch = await orchestrator();
    const gone = await receiver();
    gone.script = () => ({ status: 410 });
    const agentId = await orch.registerAgent({ url: seller.url });
    const sub = await subscribe(orch, { url: gone.url, events: ['operation.created'] });
    const [op1] = await runBuys(orch, agentId, ['sandbox_instant']);
    await gone.waitFor(() => (gone.requests.length >= 1 ? true : undefined));
    const shown = await eventually(async () => {
      const res = await orch.api('GET', `/v1/subscriptions/${sub.id}`);
      return res.body.status === 'disabled' ? res.body : undefined;
    });
    expect(shown).toMatchObject({ status: 'disabled', disabled_reason: 'the receiver answered 410 Gone' });
    expect(shown.disabled_at).toMatch(/^\d{4}-/);
    expect(shown).not.toHaveProperty('secret');

    // A second subscriber is the sentinel: once it has the next operation's notification, fan-out has run past it for both.
    const sentinel = await receiver();
    await subscribe(orch, { url: sentinel.url, events: ['operation.created'] });
    const [op2] = await runBuys(orch, agentId, ['sandbox_instant']);
    const [created2] = await notificationsOf(orch, [op2!]);
    await allDelivered(sentinel, [created2!.id]);
    expect(gone.requests).toHaveLength(1);
    expect(gone.requests[0]!.headers['webhook-id']).toBe((await notificationsOf(orch, [op1!]))[0]!.id);
    const deliveries = await orch.api('GET', `/v1/subscriptions/${sub.id}/deliveries`);
    expect(deliveries.body.deliveries.map((d: any) => [d.status, d.last_status])).toEqual([['failed', 410]]);
  });

  it('honours Retry-After: the next attempt waits as long as the receiver asked, not the 50 ms of the schedule', async () => {
    const orch = await orchestrator();
    const rcv = await receiver();
    rcv.script = (req) => (req.index === 0 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 });
    const agentId = await orch.registerAgent({ url: seller.url });
    await subscribe(orch, { url: rcv.url, events: ['operation.created'] });
    await runBuys(orch, agentId, ['sandbox_instant']);
    await rcv.waitFor(() => (rcv.requests.length >= 2 ? true : undefined), 20_000);
    expect(rcv.requests[1]!.headers['webhook-id']).toBe(rcv.requests[0]!.headers['webhook-id']);
    expect(rcv.requests[1]!.at - rcv.requests[0]!.at).toBeGreaterThanOrEqual(2_000 - 5);
    expect(Number(rcv.requests[1]!.headers['webhook-timestamp'])).toBeGreaterThan(Number(rcv.requests[0]!.headers['webhook-timestamp']));
  });

  it('a restart between attempts loses nothing: the next instance on the same database makes the retry', async () => {
    const database = tempSqlite();
    cleanups.push(() => database.drop());
    // One retry, far enough out that the first instance is gone before it is due.
    const env = { ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS: '3000' };
    const first = await startOrchestrator({ database, keepDatabase: true, env: { ...FAST, ...env } });
    const rcv = await receiver();
    let failing = true;
    rcv.script = () => (failing ? { status: 500 } : { status: 204 });
    const agentId = await first.registerAgent({ url: seller.url });
    const sub = await subscribe(first, { url: rcv.url, events: ['operation.created', 'operation.completed'] });
    const [op] = await runBuys(first, agentId, ['sandbox_instant']);
    const expected = (await notificationsOf(first, [op!])).filter((n) => n.type === 'operation.created' || n.type === 'operation.completed');
    expect(expected).toHaveLength(2);
    await rcv.waitFor(() => (rcv.requests.length >= 1 ? true : undefined));
    await eventually(async () => {
      const res = await first.api('GET', `/v1/subscriptions/${sub.id}/deliveries`);
      return res.body.deliveries.some((d: any) => d.attempts.length === 1 && d.status === 'pending') ? true : undefined;
    });
    await first.close();
    failing = false;
    const second = await startOrchestrator({ database, keepDatabase: true, env: { ...FAST, ...env } });
    cleanups.push(() => second.close());
    await allDelivered(rcv, expected.map((n) => n.id));
    const res = await eventually(async () => {
      const r = await second.api('GET', `/v1/subscriptions/${sub.id}/deliveries`);
      return r.body.deliveries.every((d: any) => d.status === 'delivered') ? r : undefined;
    });
    expect(res.body.deliveries).toHaveLength(2);
    // The failed first attempt is on record beside the retry the second instance made.
    expect(res.body.deliveries.flatMap((d: any) => d.attempts.map((a: any) => a.http_status)).filter((x: number) => x === 500).length).toBeGreaterThanOrEqual(1);
    expect(new Set(rcv.requests.filter(answeredOk).map((r) => r.headers['webhook-id'])).size).toBe(2);
  });

  it('stopping mid-attempt records it as interrupted, and the next instance sends it at once', async () => {
    const database = tempSqlite();
    cleanups.push(() => database.drop());
    // A long timeout and a long retry: only the interruption path can make the second instance send quickly.
    const env = { ...FAST, ADCP_ORCH_SUBSCRIPTION_TIMEOUT_MS: '20000', ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS: '600000' };
    const first = await startOrchestrator({ database, keepDatabase: true, env });
    const rcv = await receiver();
    rcv.script = (req) => (req.index === 0 ? 'hang' : { status: 204 });
    const agentId = await first.registerAgent({ url: seller.url });
    const sub = await subscribe(first, { url: rcv.url, events: ['operation.created'] });
    await runBuys(first, agentId, ['sandbox_instant']);
    await rcv.waitFor(() => (rcv.requests.length >= 1 ? true : undefined));
    await first.close();
    const second = await startOrchestrator({ database, keepDatabase: true, env });
    cleanups.push(() => second.close());
    await rcv.waitFor(() => (rcv.requests.length >= 2 ? true : undefined), 15_000);
    expect(rcv.requests[1]!.headers['webhook-id']).toBe(rcv.requests[0]!.headers['webhook-id']);
    const done = await eventually(async () => {
      const res = await second.api('GET', `/v1/subscriptions/${sub.id}/deliveries`);
      return res.body.deliveries[0]?.status === 'delivered' ? res.body.deliveries[0] : undefined;
    });
    expect(done.attempts.map((a: any) => [a.outcome, a.error])).toEqual([
      ['interrupted', 'interrupted'],
      ['delivered', null],
    ]);
    expect(done.attempts[0].sent_by).toBe(first.app.instanceId);
    expect(done.attempts[1].sent_by).toBe(second.app.instanceId);
  });

  it('format "slack" posts a readable message: type, operation, status and a link to it', async () => {
    const orch = await orchestrator();
    const rcv = await receiver();
    const agentId = await orch.registerAgent({ url: seller.url });
    const sub = await subscribe(orch, { url: `${rcv.url}/services/T000/B000/XYZ`, format: 'slack', events: ['operation.completed'] });
    expect(sub.format).toBe('slack');
    const [op] = await runBuys(orch, agentId, ['sandbox_instant']);
    const [completed] = (await notificationsOf(orch, [op!])).filter((n) => n.type === 'operation.completed');
    await allDelivered(rcv, [completed!.id]);
    const req = rcv.requests.find((r) => r.headers['webhook-id'] === completed!.id)!;
    const message = new Webhook(sub.secret).verify(req.body, req.headers) as { text: string; blocks: any[] };
    expect(Object.keys(message).sort()).toEqual(['blocks', 'text']);
    expect(message.text).toContain('Operation completed');
    expect(message.text).toContain('create_media_buy');
    expect(message.text).toContain(op);
    expect(message.text).toContain('status *completed*');
    expect(message.text).toContain(`<${orch.url}/operations/${op}|Open the operation>`);
    expect(message.blocks.find((b) => b.type === 'actions').elements[0].url).toBe(`${orch.url}/operations/${op}`);
    // The Slack URL is a credential: listings show its origin only.
    const listed = await orch.api('GET', `/v1/subscriptions/${sub.id}`);
    expect(listed.body.url).toBe(`${rcv.url}/…`);
  });

  it('redelivers a failed delivery on request; a delivered one is refused with 409', async () => {
    const orch = await orchestrator({ ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS: '50' });
    const rcv = await receiver();
    let status = 500;
    rcv.script = () => ({ status });
    const agentId = await orch.registerAgent({ url: seller.url });
    const sub = await subscribe(orch, { url: rcv.url, events: ['operation.created'] });
    await runBuys(orch, agentId, ['sandbox_instant']);
    const failed = await eventually(async () => {
      const res = await orch.api('GET', `/v1/subscriptions/${sub.id}/deliveries?status=failed`);
      return res.body.deliveries[0];
    });
    expect(failed.attempts.map((a: any) => a.outcome)).toEqual(['retry', 'failed']);
    expect(rcv.requests).toHaveLength(2);
    status = 202;
    const asked = await orch.api('POST', `/v1/subscriptions/${sub.id}/deliveries/${failed.id}/redeliver`);
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({ id: failed.id, status: 'pending' });
    await allDelivered(rcv, [failed.notification_id]);
    const done = await eventually(async () => {
      const res = await orch.api('GET', `/v1/subscriptions/${sub.id}/deliveries`);
      return res.body.deliveries[0].status === 'delivered' ? res.body.deliveries[0] : undefined;
    });
    expect(done.attempts.map((a: any) => [a.http_status, a.outcome])).toEqual([
      [500, 'retry'],
      [500, 'failed'],
      [202, 'delivered'],
    ]);
    const again = await orch.api('POST', `/v1/subscriptions/${sub.id}/deliveries/${failed.id}/redeliver`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('already_delivered');
  });
});

describe('subscriptions: the API', () => {
  it('roles: a viewer reads, only an admin creates, deletes and redelivers (403 changes nothing); the actor is recorded', async () => {
    const orch = await orchestrator();
    const rcv = await receiver();
    const keyOf = async (name: string, role: 'viewer' | 'operator' | 'approver' | 'admin') => orch.app.store.tenants.createApiKey(orch.tenantId, { name, role });
    const as = (key: string) => (method: string, path: string, body?: unknown) => orch.api(method, path, body, { authorization: `Bearer ${key}` });
    const admin = as(await keyOf('ops-admin', 'admin'));
    const viewer = as(await keyOf('dash-viewer', 'viewer'));
    const approver = as(await keyOf('desk-approver', 'approver'));

    for (const who of [viewer, approver]) {
      const res = await who('POST', '/v1/subscriptions', { url: rcv.url });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    expect((await admin('GET', '/v1/subscriptions')).body.subscriptions).toEqual([]);
    const created = await admin('POST', '/v1/subscriptions', { url: rcv.url });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(created.body.created_by).toBe('ops-admin');
    expect((await viewer('GET', `/v1/subscriptions/${id}`)).body).toMatchObject({ id, created_by: 'ops-admin' });
    expect((await viewer('GET', `/v1/subscriptions/${id}/deliveries`)).status).toBe(200);
    expect((await viewer('POST', `/v1/subscriptions/${id}/deliveries/dlv_x/redeliver`)).status).toBe(403);
    expect((await approver('DELETE', `/v1/subscriptions/${id}`)).status).toBe(403);
    expect((await viewer('GET', `/v1/subscriptions/${id}`)).status).toBe(200);
    expect((await admin('DELETE', `/v1/subscriptions/${id}`)).status).toBe(204);
    const row = await orch.app.store.db.kysely.selectFrom('subscriptions').select(['deleted_by', 'deleted_at']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.deleted_by).toBe('ops-admin');
  });

  it('bad input is a 400 that changes nothing: not http(s), unknown event type, private address, credentials in the URL', async () => {
    const orch = await orchestrator({ ADCP_ORCH_ALLOW_PRIVATE_NETWORK: 'false' });
    const cases: Array<[unknown, string]> = [
      [{ url: 'ftp://hooks.example.com/x' }, 'invalid_url'],
      [{ url: 'not a url' }, 'invalid_url'],
      [{ url: 'https://hooks.example.com/x', events: ['operation.nope'] }, 'invalid_request'],
      [{ url: 'https://hooks.example.com/x', events: [] }, 'invalid_request'],
      [{ url: 'https://hooks.example.com/x', format: 'teams' }, 'invalid_request'],
      [{ url: 'https://hooks.example.com/x', extra: 1 }, 'invalid_request'],
      [{ url: 'http://127.0.0.1:9/hook' }, 'url_not_allowed'],
      [{ url: 'http://localhost:9/hook' }, 'url_not_allowed'],
      [{ url: 'http://[::1]:9/hook' }, 'url_not_allowed'],
      [{ url: 'http://10.0.0.1/hook' }, 'url_not_allowed'],
      [{ url: 'http://169.254.169.254/latest/meta-data' }, 'url_not_allowed'],
      [{ url: 'https://user:pw@hooks.example.com/x' }, 'invalid_url'],
      [{ url: 'https://no-such-host.invalid/x' }, 'url_unresolvable'],
    ];
    for (const [body, code] of cases) {
      const res = await orch.api('POST', '/v1/subscriptions', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code, JSON.stringify(body)).toBe(code);
      expect(typeof res.body.error.message).toBe('string');
    }
    const list = await orch.api('GET', '/v1/subscriptions');
    expect(list.body).toEqual({ subscriptions: [] });
    const rows = await orch.app.store.db.kysely.selectFrom('subscriptions').select('id').execute();
    expect(rows).toEqual([]);
  });

  it('shows the secret once, stores it only sealed, and gives another tenant 404 for everything', async () => {
    const orch = await orchestrator();
    const rcv = await receiver();
    const created = await orch.api('POST', '/v1/subscriptions', { url: `${rcv.url}/h?token=abc` }, { 'idempotency-key': 'sub-1' });
    expect(created.status).toBe(201);
    const sub = created.body;
    expect(sub).toMatchObject({ url: `${rcv.url}/h?token=abc`, events: null, format: 'standard', status: 'active', created_at: expect.any(String) });
    expect(sub.id).toMatch(/^sub_/);
    expect(sub.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // The same Idempotency-Key replays the same answer (secret included) and creates nothing more.
    const replay = await orch.api('POST', '/v1/subscriptions', { url: `${rcv.url}/h?token=abc` }, { 'idempotency-key': 'sub-1' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(sub);

    const shown = await orch.api('GET', `/v1/subscriptions/${sub.id}`);
    expect(shown.body).toEqual({ id: sub.id, url: `${rcv.url}/h?…`, events: null, format: 'standard', status: 'active', disabled_at: null, disabled_reason: null, created_at: sub.created_at, created_by: shown.body.created_by });
    const list = await orch.api('GET', '/v1/subscriptions');
    expect(list.body.subscriptions.map((s: any) => s.id)).toEqual([sub.id]);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');

    // Neither the secret nor the token in the URL is anywhere in the database files in clear.
    const dir = dirname(sqlitePathFromUrl(orch.database.url));
    for (const f of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, f)).toString('latin1');
      expect(bytes.includes(sub.secret.slice(6)), f).toBe(false);
      expect(bytes.includes('token=abc'), f).toBe(false);
    }

    const tenant2 = await orch.app.store.tenants.ensureTenant('other-tenant');
    const key2 = await orch.app.store.tenants.createApiKey(tenant2.id);
    const as2 = (method: string, path: string) => orch.api(method, path, undefined, { authorization: `Bearer ${key2}` });
    for (const [method, path] of [
      ['GET', `/v1/subscriptions/${sub.id}`],
      ['GET', `/v1/subscriptions/${sub.id}/deliveries`],
      ['DELETE', `/v1/subscriptions/${sub.id}`],
      ['POST', `/v1/subscriptions/${sub.id}/deliveries/dlv_x/redeliver`],
    ] as const) {
      expect((await as2(method, path)).status, `${method} ${path}`).toBe(404);
    }
    expect((await as2('GET', '/v1/subscriptions')).body).toEqual({ subscriptions: [] });

    const del = await orch.api('DELETE', `/v1/subscriptions/${sub.id}`);
    expect(del.status).toBe(204);
    expect((await orch.api('GET', `/v1/subscriptions/${sub.id}`)).status).toBe(404);
    expect((await orch.api('DELETE', `/v1/subscriptions/${sub.id}`)).status).toBe(404);
  });
});
