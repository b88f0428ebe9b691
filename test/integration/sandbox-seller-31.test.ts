/**
 * The sandbox seller speaking AdCP 3.1 (adcpVersion: '3.1'), seen through a plain
 * MCP client: what it declares, which tools it serves, each reply in its 3.1.19
 * shape (every one of them checked by the seller against the 3.1.19 response
 * schemas before it is sent; here, what the shapes say), a request served in the
 * release it pins, 3.1 webhooks, windowed delivery, reports in the 3.1 envelope.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startSandboxSeller, type SandboxSeller, type SandboxSellerOptions } from '../../src/sandbox/seller.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

type Body = Record<string, any>;
interface Reply {
  body: Body;
  isError: boolean;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const PIN = { adcp_major_version: 3, adcp_version: '3.1' };

async function seller31(opts: SandboxSellerOptions = {}) {
  const seller = await startSandboxSeller({ adcpVersion: '3.1', submittedDelayMs: 150, workingDelayMs: 80, reportClock: false, statusStepMs: 0, ...opts });
  cleanups.push(() => seller.close());
  const client = new Client({ name: 'sandbox-31-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(seller.url)));
  cleanups.push(() => client.close());
  /** A call pinned to 3.1 unless `args` pins otherwise. */
  const call = async (name: string, args: Body = {}): Promise<Reply> => {
    const r = (await client.callTool({ name, arguments: { ...PIN, ...args } })) as { structuredContent?: Body; isError?: boolean };
    return { body: r.structuredContent ?? {}, isError: r.isError === true };
  };
  return { seller, client, call };
}

let keySeq = 0;
const newKey = (): string => `test-31-key-${Date.now()}-${++keySeq}-abcdef`;

function buy(productId: string, extra: Body = {}): Body {
  return {
    idempotency_key: newKey(),
    account: { account_id: 'acc_31' },
    brand: { domain: 'example-brand.com' },
    start_time: 'asap',
    // Ten days, reported daily: six periods, so one tick leaves the buy active.
    end_time: new Date(Date.now() + 10 * 86_400_000).toISOString(),
    packages: [{ product_id: productId, pricing_option_id: 'cpm_usd_fixed', budget: 5000 }],
    ...extra,
  };
}

async function waitUntil<T>(check: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 30));
  }
}

describe('sandbox seller 3.1: what it says of itself', () => {
  it('declares 3.0 and 3.1, its replay window, governance_aware and webhook reporting, in the 3.1 envelope', async () => {
    const { call } = await seller31();
    const caps = (await call('get_adcp_capabilities')).body;
    expect(caps).toMatchObject({
      status: 'completed',
      adcp_version: '3.1',
      adcp: { major_versions: [3], supported_versions: ['3.0', '3.1'], idempotency: { supported: true, replay_ttl_seconds: 86400 } },
      media_buy: { governance_aware: false, reporting_delivery_methods: ['webhook'] },
      webhook_signing: { supported: true },
    });
  });

  it('declares what it is told: no replay protection, a short window, governance_aware', async () => {
    const none = (await (await seller31({ idempotency: { supported: false }, governanceAware: true })).call('get_adcp_capabilities')).body;
    expect(none.adcp.idempotency).toEqual({ supported: false });
    expect(none.media_buy.governance_aware).toBe(true);
    const short = (await (await seller31({ idempotency: { supported: true, replay_ttl_seconds: 3600 } })).call('get_adcp_capabilities')).body;
    expect(short.adcp.idempotency).toEqual({ supported: true, replay_ttl_seconds: 3600 });
  });

  it('serves the 3.1 task tools only, the 3.0 names too when asked', async () => {
    const { client } = await seller31();
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['get_task_status', 'list_tasks', 'get_products', 'create_media_buy']));
    expect(names.filter((n) => ['tasks/get', 'tasks_get', 'tasks/list'].includes(n))).toEqual([]);
    const legacy = (await (await seller31({ legacyTaskTools: true })).client.listTools()).tools.map((t) => t.name);
    expect(legacy).toEqual(expect.arrayContaining(['tasks/get', 'tasks_get', 'tasks/list', 'get_task_status', 'list_tasks']));
  });

  it('get_products: cache_scope, and the daily windowed pulls each product honours', async () => {
    const { call } = await seller31();
    const r = (await call('get_products', { buying_mode: 'brief', brief: 'anything' })).body;
    expect(r).toMatchObject({ status: 'completed', adcp_version: '3.1', cache_scope: 'public' });
    expect(r.products[0].reporting_capabilities.windowed_pull_granularities).toEqual(['daily']);
  });
});

describe('sandbox seller 3.1: replies', () => {
  it('a synchronous create: the task completed, the buy pending_creatives in media_buy_status', async () => {
    const { call, seller } = await seller31();
    const r = await call('create_media_buy', buy('sandbox_instant', { context: { op: 'o1' } }));
    expect(r.isError).toBe(false);
    expect(r.body).toMatchObject({ status: 'completed', media_buy_status: 'pending_creatives', adcp_version: '3.1', context: { op: 'o1' }, revision: 1 });
    expect(r.body.media_buy_id).toMatch(/^mb_/);
    expect(r.body.confirmed_at).toEqual(expect.any(String));
    expect(seller.stats().calls[0]).toMatchObject({ tool: 'create_media_buy', valid: true });
  });

  it('async and refused creates: submitted, working, input-required as they were; rejected and auth-required with errors[]; failed marked failed', async () => {
    const { call } = await seller31();
    expect((await call('create_media_buy', buy('sandbox_submitted'))).body).toMatchObject({ status: 'submitted', task_id: expect.any(String), adcp_version: '3.1' });
    expect((await call('create_media_buy', buy('sandbox_working'))).body).toMatchObject({ status: 'working', task_id: expect.any(String) });
    expect((await call('create_media_buy', buy('sandbox_input_required'))).body).toMatchObject({ status: 'input-required', task_id: expect.any(String) });
    expect((await call('create_media_buy', buy('sandbox_rejected'))).body).toMatchObject({ status: 'rejected', errors: [{ code: 'POLICY_VIOLATION' }] });
    expect((await call('create_media_buy', buy('sandbox_auth_required'))).body).toMatchObject({ status: 'auth-required', errors: [{ code: 'AUTH_REQUIRED' }] });
    const failed = await call('create_media_buy', buy('sandbox_failed'));
    expect(failed).toMatchObject({ isError: true, body: { status: 'failed', adcp_version: '3.1', adcp_error: { code: 'BUDGET_TOO_LOW' } } });
  });

  it('get_task_status gives the result only when asked for it, in the 3.1 shape of its task', async () => {
    const { call } = await seller31();
    const { task_id } = (await call('create_media_buy', buy('sandbox_submitted'))).body;
    const done = await waitUntil(async () => {
      const r = (await call('get_task_status', { task_id })).body;
      return r.status === 'completed' ? r : undefined;
    });
    expect(done.result).toBeUndefined();
    const full = (await call('get_task_status', { task_id, include_result: true })).body;
    expect(full).toMatchObject({ task_id, task_type: 'create_media_buy', status: 'completed', adcp_version: '3.1' });
    expect(full.result).toMatchObject({ status: 'completed', media_buy_status: 'pending_creatives', media_buy_id: expect.stringMatching(/^mb_/) });
    const listed = (await call('list_tasks', { filters: { task_ids: [task_id] } })).body;
    expect(listed).toMatchObject({ status: 'completed', adcp_version: '3.1', tasks: [{ task_id, status: 'completed' }] });
  });

  it('update_media_buy: the task completed, the buy paused (then canceled) in media_buy_status', async () => {
    const { call, seller } = await seller31();
    const created = (await call('create_media_buy', buy('sandbox_instant'))).body;
    await seller.reporting.fireNow(created.media_buy_id).catch(() => undefined);
    const update = (extra: Body) => call('update_media_buy', { idempotency_key: newKey(), account: { account_id: 'acc_31' }, media_buy_id: created.media_buy_id, ...extra });
    expect((await update({ paused: true })).body).toMatchObject({ status: 'completed', media_buy_status: 'paused', adcp_version: '3.1' });
    expect((await update({ canceled: true })).body).toMatchObject({ status: 'completed', media_buy_status: 'canceled' });
  });

  it('get_media_buys: each buy ok, with no impairments', async () => {
    const { call } = await seller31();
    const created = (await call('create_media_buy', buy('sandbox_instant'))).body;
    const r = (await call('get_media_buys', { account: { account_id: 'acc_31' }, media_buy_ids: [created.media_buy_id] })).body;
    expect(r).toMatchObject({ status: 'completed', media_buys: [{ media_buy_id: created.media_buy_id, status: 'pending_creatives', health: 'ok', impairments: [] }] });
  });
});

describe('sandbox seller 3.1: the version a call is served in', () => {
  it('checks a request against the schema of the release it pins: 3.1 refuses what 3.0 took', async () => {
    const { call, seller } = await seller31();
    const weekly = { account: { account_id: 'acc_31' }, time_granularity: 'weekly' };
    const refused = await call('get_media_buy_delivery', weekly);
    expect(refused).toMatchObject({ isError: true, body: { status: 'failed', adcp_error: { code: 'VALIDATION_ERROR', field: '/time_granularity' } } });
    // Pinned to 3.0: served in 3.0, where the field is not known, and in 3.0's shape (no envelope status).
    const old = await call('get_media_buy_delivery', { ...weekly, adcp_version: '3.0' });
    expect(old.isError).toBe(false);
    expect(old.body.status).toBeUndefined();
    expect(old.body.adcp_version).toBeUndefined();
    expect(seller.stats().calls.map((c) => c.valid)).toEqual([false, true]);
    // A 3.0 create is answered the 3.0 way: the buy's status at the root.
    expect((await call('create_media_buy', buy('sandbox_instant', { adcp_version: '3.0' }))).body).toMatchObject({ status: 'pending_creatives' });
  });

  it('refuses a pin of another major with VERSION_UNSUPPORTED', async () => {
    const { call } = await seller31();
    const r = await call('list_tasks', { adcp_major_version: 4, adcp_version: '4.0' });
    expect(r).toMatchObject({ isError: true, body: { adcp_error: { code: 'VERSION_UNSUPPORTED', details: { supported_versions: ['3.0', '3.1'] } } } });
  });

  it('refuses a webhook registration without operation_id: every 3.1 webhook must echo one', async () => {
    const { call, seller } = await seller31();
    const r = await call('create_media_buy', buy('sandbox_submitted', { push_notification_config: { url: 'https://buyer.example/hooks/1' } }));
    expect(r).toMatchObject({ isError: true, body: { adcp_error: { code: 'INVALID_REQUEST', field: 'push_notification_config.operation_id' } } });
    expect(seller.stats().mediaBuysCreated).toBe(0);
  });
});

describe('sandbox seller 3.1: webhooks and delivery', () => {
  it('a task webhook: operation_id and token echoed, a notification_id, the result in its 3.1 shape', async () => {
    const receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    const { call, seller } = await seller31({ duplicateWebhooks: true });
    const push = { url: `${receiver.url}/op`, operation_id: 'op_31_a', token: 'token-0123456789abcdef' };
    const { task_id } = (await call('create_media_buy', buy('sandbox_submitted', { push_notification_config: push, context: { trace: 't1' } }))).body;
    await receiver.waitFor(() => (receiver.requests.length >= 2 ? true : undefined));
    await seller.webhooksSettled();
    const [first, again] = receiver.requests.map((r) => JSON.parse(r.body));
    expect(first).toMatchObject({
      operation_id: 'op_31_a',
      token: 'token-0123456789abcdef',
      task_id,
      task_type: 'create_media_buy',
      status: 'completed',
      notification_id: `${task_id}.completed`,
      context: { trace: 't1' },
      result: { status: 'completed', media_buy_status: 'pending_creatives' },
    });
    expect(first.idempotency_key).toEqual(expect.any(String));
    // The same event twice: one notification_id, one idempotency_key.
    expect([again.notification_id, again.idempotency_key]).toEqual([first.notification_id, first.idempotency_key]);
  });

  it('delivery by day: contiguous daily windows whose figures add up to the buy’s; hourly is UNSUPPORTED_GRANULARITY', async () => {
    const { call, seller } = await seller31({ flightPeriods: 6 });
    const start = new Date(Date.now() - 2 * 86_400_000);
    const end = new Date(Date.now() + 4 * 86_400_000);
    const created = (await call('create_media_buy', buy('sandbox_instant', { start_time: start.toISOString(), end_time: end.toISOString() }))).body;
    for (let i = 0; i < 3; i++) await seller.reporting.fireNow(created.media_buy_id).catch(() => undefined);
    const ask = (extra: Body) => call('get_media_buy_delivery', { account: { account_id: 'acc_31' }, media_buy_ids: [created.media_buy_id], ...extra });
    const r = (await ask({ time_granularity: 'daily', include_window_breakdown: true })).body;
    expect(r.status).toBe('completed');
    const [row] = r.media_buy_deliveries;
    const windows = row.windows as Body[];
    expect(windows.length).toBeGreaterThanOrEqual(3);
    for (const [i, w] of windows.entries()) {
      expect(Date.parse(w.window_end) - Date.parse(w.window_start)).toBe(86_400_000);
      if (i > 0) expect(w.window_start).toBe(windows[i - 1]!.window_end);
    }
    const spend = windows.reduce((n, w) => n + w.totals.spend, 0);
    expect(Math.abs(spend - row.totals.spend)).toBeLessThan(0.05 * windows.length);
    // Without include_window_breakdown, no windows.
    expect((await ask({ time_granularity: 'daily' })).body.media_buy_deliveries[0].windows).toBeUndefined();
    expect(await ask({ time_granularity: 'hourly' })).toMatchObject({ isError: true, body: { adcp_error: { code: 'UNSUPPORTED_GRANULARITY', field: 'time_granularity' } } });
  });

  it('reports in the 3.1 envelope', async () => {
    const receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    const { call, seller } = await seller31();
    const reporting_webhook = { url: `${receiver.url}/reports`, reporting_frequency: 'hourly', authentication: { schemes: ['Bearer'], credentials: 'b'.repeat(40) } };
    const created = (await call('create_media_buy', buy('sandbox_instant', { reporting_webhook }))).body;
    const fire = await seller.reporting.fireNow(created.media_buy_id);
    expect(fire).toMatchObject({ style: 'envelope', delivered: true });
    const body = JSON.parse(receiver.requests[0]!.body);
    expect(body).toMatchObject({ task_type: 'media_buy_delivery', status: 'completed', operation_id: `reporting_${created.media_buy_id}`, result: { notification_type: 'scheduled', sequence_number: 1 } });
  });
});
