/**
 * The sandbox seller over real HTTP on loopback, seen through a plain MCP
 * client: every scripted behaviour's raw reply, task polling and listing,
 * idempotent replay, webhooks (HMAC, Bearer, RFC 9421, retries, faults) and
 * the transport faults meant for resilience tests.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  InMemoryReplayStore,
  InMemoryRevocationStore,
  StaticJwksResolver,
  verifyWebhookSignature,
} from '@adcp/sdk/signing/server';
import {
  SANDBOX_PRODUCTS,
  startSandboxSeller,
  type SandboxSeller,
  type SandboxSellerOptions,
} from '../../src/sandbox/seller.js';
import { whenBodyRead } from '../helpers/request-body.js';

type Body = Record<string, any>;
interface Reply {
  body: Body;
  isError: boolean;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function seller(opts: SandboxSellerOptions = {}): Promise<SandboxSeller> {
  const s = await startSandboxSeller({ submittedDelayMs: 150, workingDelayMs: 80, ...opts });
  cleanups.push(() => s.close());
  return s;
}

async function mcp(url: string, token?: string): Promise<(name: string, args?: Body) => Promise<Reply>> {
  const client = new Client({ name: 'sandbox-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
  );
  cleanups.push(() => client.close());
  return async (name, args = {}) => {
    const r = (await client.callTool({ name, arguments: args })) as { structuredContent?: Body; isError?: boolean };
    return { body: r.structuredContent ?? {}, isError: r.isError === true };
  };
}

let keySeq = 0;
const newKey = (): string => `test-key-${Date.now()}-${++keySeq}-abcdef`;

function buy(productId: string, extra: Body = {}): Body {
  return {
    idempotency_key: newKey(),
    account: { account_id: 'acc_test' },
    brand: { domain: 'example-brand.com' },
    start_time: 'asap',
    end_time: '2030-12-31T23:59:59Z',
    packages: [{ product_id: productId, pricing_option_id: 'cpm_usd_fixed', budget: 5000 }],
    ...extra,
  };
}

interface Delivery {
  headers: IncomingHttpHeaders;
  raw: string;
  body: Body;
  url: string;
}

/** A webhook receiver; `answer` picks the HTTP status per delivery (1-based). */
async function receiver(answer: (n: number) => number | [number, Record<string, string>] = () => 200) {
  const deliveries: Delivery[] = [];
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    whenBodyRead(req, (raw) => {
      deliveries.push({ headers: req.headers, raw, body: JSON.parse(raw) as Body, url: req.url ?? '' });
      const a = answer(deliveries.length);
      const [status, headers] = Array.isArray(a) ? a : [a, {}];
      res.writeHead(status, headers).end();
      waiters.splice(0).forEach((w) => w());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/op-1`;
  return {
    url,
    deliveries,
    /** Resolves once at least n deliveries have arrived. */
    async waitFor(n: number): Promise<Delivery[]> {
      while (deliveries.length < n) await new Promise<void>((r) => waiters.push(r));
      return deliveries;
    },
  };
}

async function pollUntil(call: (n: string, a?: Body) => Promise<Reply>, taskId: string, status: string): Promise<Body> {
  let last: Body = {};
  await vi.waitFor(
    async () => {
      last = (await call('tasks/get', { task_id: taskId })).body;
      expect(last.status).toBe(status);
    },
    { timeout: 5000, interval: 40 },
  );
  return last;
}

describe('sandbox seller: behaviours', () => {
  it('lists every sandbox product through get_products', async () => {
    const s = await seller();
    const call = await mcp(s.url);
    const r = await call('get_products', { buying_mode: 'brief', brief: 'anything' });
    expect(r.isError).toBe(false);
    expect(r.body.products.map((p: Body) => p.product_id)).toEqual(SANDBOX_PRODUCTS.map((p) => p.product_id));
    expect(r.body.products[0].pricing_options[0].pricing_option_id).toBe('cpm_usd_fixed');
  });

  it('sandbox_instant succeeds synchronously and echoes context', async () => {
    const s = await seller();
    const call = await mcp(s.url);
    const r = await call('create_media_buy', buy('sandbox_instant', { context: { op: 'o1' } }));
    expect(r.isError).toBe(false);
    expect(r.body.media_buy_id).toMatch(/^mb_/);
    expect(r.body.packages).toHaveLength(1);
    expect(r.body.packages[0].product_id).toBe('sandbox_instant');
    expect(r.body.context).toEqual({ op: 'o1' });
    expect(r.body.task_id).toBeUndefined();
    expect(s.stats().mediaBuysCreated).toBe(1);
  });

  it('sandbox_submitted replies submitted, then tasks/get shows it completed with the media buy', async () => {
    const s = await seller({ submittedDelayMs: 300 });
    const call = await mcp(s.url);
    const r = await call('create_media_buy', buy('sandbox_submitted'));
    expect(r.isError).toBe(false);
    expect(r.body.status).toBe('submitted');
    expect(r.body.task_id).toMatch(/^task_/);
    expect(r.body.media_buy_id).toBeUndefined();

    const first = (await call('tasks/get', { task_id: r.body.task_id, include_result: true })).body;
    expect(first).toMatchObject({ task_id: r.body.task_id, task_type: 'create_media_buy', protocol: 'media-buy', status: 'submitted' });
    expect(first.completed_at).toBeUndefined();
    expect(first.result).toBeUndefined();
    expect(s.stats().mediaBuysCreated).toBe(0);

    const done = await pollUntil(call, r.body.task_id, 'completed');
    expect(done.result.media_buy_id).toMatch(/^mb_/);
    expect(Date.parse(done.completed_at)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
    expect(done.updated_at).toBe(done.completed_at);
    const stats = s.stats();
    expect(stats.mediaBuysCreated).toBe(1);
    expect(stats.pollsByTask[r.body.task_id]).toBeGreaterThanOrEqual(2);
    expect(stats.pollLog.filter((p) => p.task_id === r.body.task_id).length).toBe(stats.pollsByTask[r.body.task_id]);
    expect(stats.pollLog[0]!.tool).toBe('tasks/get');
  });

  it('sandbox_working replies working and completes after workingDelayMs', async () => {
    const s = await seller({ workingDelayMs: 100 });
    const call = await mcp(s.url);
    const r = await call('create_media_buy', buy('sandbox_working'));
    expect(r.body).toMatchObject({ status: 'working' });
    const done = await pollUntil(call, r.body.task_id, 'completed');
    expect(done.result.media_buy_id).toMatch(/^mb_/);
  });

  it('sandbox_input_required waits for sandbox_respond; approve completes, reject rejects', async () => {
    const s = await seller();
    const call = await mcp(s.url);
    const a = await call('create_media_buy', buy('sandbox_input_required'));
    expect(a.body.status).toBe('input-required');
    expect(a.body.message).toContain('sandbox_respond');
    expect((await call('tasks/get', { task_id: a.body.task_id })).body.status).toBe('input-required');

    const approved = await call('sandbox_respond', { task_id: a.body.task_id, approve: true });
    expect(approved.isError).toBe(false);
    expect(approved.body.status).toBe('completed');
    expect(approved.body.result.media_buy_id).toMatch(/^mb_/);

    const again = await call('sandbox_respond', { task_id: a.body.task_id, approve: false });
    expect(again.isError).toBe(true);
    expect(again.body.adcp_error.code).toBe('INVALID_STATE');

    const b = await call('create_media_buy', buy('sandbox_input_required'));
    const rejected = await call('sandbox_respond', { task_id: b.body.task_id, approve: false, message: 'no' });
    expect(rejected.body.status).toBe('rejected');
    expect((await call('tasks/get', { task_id: b.body.task_id })).body.status).toBe('rejected');
  });

  it('sandbox_respond can route an approval through submitted before completion', async () => {
    const s = await seller({ submittedDelayMs: 100 });
    const call = await mcp(s.url);
    const a = await call('create_media_buy', buy('sandbox_input_required'));
    const r = await call('sandbox_respond', { task_id: a.body.task_id, approve: true, then: 'submitted' });
    expect(r.body.status).toBe('submitted');
    await pollUntil(call, a.body.task_id, 'completed');
  });

  it('sandbox_rejected, sandbox_failed and sandbox_auth_required answer as specified', async () => {
    const s = await seller();
    const call = await mcp(s.url);

    const rej = await call('create_media_buy', buy('sandbox_rejected'));
    expect(rej.isError).toBe(false);
    expect(rej.body.status).toBe('rejected');
    expect(rej.body.message).toBeTruthy();
    expect(rej.body.media_buy_id).toBeUndefined();

    const failed = await call('create_media_buy', buy('sandbox_failed'));
    expect(failed.isError).toBe(true);
    expect(failed.body.errors).toEqual([
      expect.objectContaining({ code: 'BUDGET_TOO_LOW', recovery: 'correctable', message: expect.any(String) }),
    ]);
    expect(failed.body.adcp_error.code).toBe('BUDGET_TOO_LOW');
    expect(failed.body.media_buy_id).toBeUndefined();

    const auth = await call('create_media_buy', buy('sandbox_auth_required'));
    expect(auth.body.status).toBe('auth-required');
    expect((await call('tasks/get', { task_id: auth.body.task_id })).body.status).toBe('auth-required');
    expect(s.stats().mediaBuysCreated).toBe(0);
  });

  it('rejects invalid requests and unknown products with AdCP errors', async () => {
    const s = await seller();
    const call = await mcp(s.url);
    const noKey = buy('sandbox_instant');
    delete noKey.idempotency_key;
    // Off the schema: refused as an SDK-built seller refuses it, naming where.
    const unkeyed = (await call('create_media_buy', noKey)).body.adcp_error;
    expect(unkeyed).toMatchObject({ code: 'VALIDATION_ERROR', recovery: 'correctable', field: '/idempotency_key' });
    expect(unkeyed.message).toMatch(/^create_media_buy request failed schema validation at \/idempotency_key/);
    expect((await call('create_media_buy', buy('nope'))).body.adcp_error.code).toBe('PRODUCT_NOT_FOUND');
    const badHook = buy('sandbox_submitted', {
      push_notification_config: { url: 'http://127.0.0.1:9/x', authentication: { schemes: ['Magic'], credentials: 'x'.repeat(40) } },
    });
    expect((await call('create_media_buy', badHook)).body.adcp_error).toMatchObject({ code: 'VALIDATION_ERROR', field: expect.stringMatching(/^\/push_notification_config\/authentication/) });
    // Nothing refused for its schema reached the sandbox's own handling: no task, no buy.
    expect(s.stats().calls.filter((c) => !c.valid).map((c) => c.tool)).toEqual(['create_media_buy', 'create_media_buy']);
    expect((await call('tasks/get', { task_id: 'task_missing' })).body.adcp_error.code).toBe('REFERENCE_NOT_FOUND');
  });
});

describe('sandbox seller: idempotency', () => {
  it('replays a sync success with replayed:true and conflicts on a different payload', async () => {
    const s = await seller();
    const call = await mcp(s.url);
    const req = buy('sandbox_instant', { context: { attempt: 1 } });
    const first = await call('create_media_buy', req);
    const second = await call('create_media_buy', { ...req, context: { attempt: 2 } });
    expect(first.body.replayed).toBeUndefined();
    expect(second.body.replayed).toBe(true);
    expect(second.body.media_buy_id).toBe(first.body.media_buy_id);
    expect(second.body.context).toEqual({ attempt: 2 });

    const changed = await call('create_media_buy', { ...req, end_time: '2031-01-01T00:00:00Z' });
    expect(changed.isError).toBe(true);
    expect(changed.body.adcp_error.code).toBe('IDEMPOTENCY_CONFLICT');

    const stats = s.stats();
    expect(stats.createCallsByKey[req.idempotency_key]).toBe(3);
    expect(stats.mediaBuysCreatedByKey[req.idempotency_key]).toBe(1);
    expect(stats.replaysByKey[req.idempotency_key]).toBe(1);
    expect(stats.mediaBuysCreated).toBe(1);
  });

  it('replays an async reply with the same task_id and creates one media buy', async () => {
    const s = await seller({ submittedDelayMs: 50 });
    const call = await mcp(s.url);
    const req = buy('sandbox_submitted');
    const first = await call('create_media_buy', req);
    const second = await call('create_media_buy', req);
    expect(second.body).toMatchObject({ status: 'submitted', task_id: first.body.task_id, replayed: true });
    await pollUntil(call, first.body.task_id, 'completed');
    // A retry after completion still gets the original (historical) reply.
    const third = await call('create_media_buy', req);
    expect(third.body).toMatchObject({ status: 'submitted', task_id: first.body.task_id, replayed: true });
    expect(s.stats().mediaBuysCreatedByKey[req.idempotency_key]).toBe(1);
    expect(s.stats().tasks).toBe(1);
  });

  it('does not cache errors: a retry of a failed call runs again', async () => {
    const s = await seller();
    const call = await mcp(s.url);
    const req = buy('sandbox_failed');
    await call('create_media_buy', req);
    const again = await call('create_media_buy', req);
    expect(again.body.replayed).toBeUndefined();
    expect(again.body.errors[0].code).toBe('BUDGET_TOO_LOW');
  });
});

describe('sandbox seller: transport faults', () => {
  it('sandbox_flaky_429 answers RATE_LIMITED (retry_after 1) twice per key, then succeeds', async () => {
    const s = await seller();
    const call = await mcp(s.url);
    const req = buy('sandbox_flaky_429');
    for (let i = 0; i < 2; i++) {
      const r = await call('create_media_buy', req);
      expect(r.body.errors[0]).toMatchObject({ code: 'RATE_LIMITED', recovery: 'transient', retry_after: 1 });
    }
    const ok = await call('create_media_buy', req);
    expect(ok.isError).toBe(false);
    expect(ok.body.media_buy_id).toMatch(/^mb_/);
    expect(s.stats().createCallsByKey[req.idempotency_key]).toBe(3);
  });

  it('sandbox_flaky_500 answers HTTP 500 before executing, then succeeds', async () => {
    const s = await seller({ flakyFailures: 1 });
    const call = await mcp(s.url);
    const req = buy('sandbox_flaky_500');
    await expect(call('create_media_buy', req)).rejects.toThrow(/injected server error/);
    expect(s.stats().mediaBuysCreated).toBe(0);
    const ok = await call('create_media_buy', req);
    expect(ok.body.media_buy_id).toMatch(/^mb_/);
    expect(ok.body.replayed).toBeUndefined();
    expect(s.stats().createCallsByKey[req.idempotency_key]).toBe(2);
  });

  it('sandbox_lost_reply executes but answers 500; the retry replays the original buy', async () => {
    const s = await seller();
    const call = await mcp(s.url);
    const req = buy('sandbox_lost_reply');
    await expect(call('create_media_buy', req)).rejects.toThrow(/reply lost/);
    expect(s.stats().mediaBuysCreated).toBe(1);
    const retry = await call('create_media_buy', req);
    expect(retry.body.replayed).toBe(true);
    expect(retry.body.media_buy_id).toMatch(/^mb_/);
    expect(s.stats().mediaBuysCreated).toBe(1);
  });

  it('sandbox_held_reply executes, holds the reply until released; a retry replays at once; every request is logged', async () => {
    const s = await seller();
    const first = await mcp(s.url);
    const req = buy('sandbox_held_reply');
    const pending = first('create_media_buy', req);
    await vi.waitFor(() => expect(s.heldReplies()).toBe(1));
    expect(s.stats().mediaBuysCreated).toBe(1);

    // Another caller with the same key and bytes is answered at once, with the same buy.
    const retry = await (await mcp(s.url))('create_media_buy', req);
    expect(retry.body.replayed).toBe(true);
    expect(s.heldReplies()).toBe(1);

    expect(s.releaseHeldReplies()).toBe(1);
    const original = await pending;
    expect(original.body.media_buy_id).toBe(retry.body.media_buy_id);
    expect(s.stats().mediaBuysCreated).toBe(1);

    const log = s.stats().createRequests.filter((r) => r.idempotency_key === req.idempotency_key);
    expect(log.map((r) => r.held)).toEqual([true, false]);
    expect(log[0]!.arguments).toBe(log[1]!.arguments);
    expect(JSON.parse(log[0]!.body).params.arguments).toEqual(req);
    // The held request's span covers the replay's.
    expect(log[0]!.started_at).toBeLessThanOrEqual(log[1]!.started_at);
    expect(log[0]!.ended_at!).toBeGreaterThanOrEqual(log[1]!.ended_at!);

    // Released as an error instead: the caller sees an HTTP 500.
    const again = buy('sandbox_held_reply');
    const failing = first('create_media_buy', again);
    await vi.waitFor(() => expect(s.heldReplies()).toBe(1));
    expect(s.releaseHeldReplies('error')).toBe(1);
    await expect(failing).rejects.toThrow(/held reply released as an error/);
  });

  it('requires the bearer token when authToken is set', async () => {
    const s = await seller({ authToken: 'sandbox-secret-token-0123456789' });
    await expect(mcp(s.url)).rejects.toThrow();
    const call = await mcp(s.url, 'sandbox-secret-token-0123456789');
    expect((await call('get_products', { buying_mode: 'wholesale' })).body.products.length).toBe(SANDBOX_PRODUCTS.length);
  });
});

describe('sandbox seller: list_tasks', () => {
  it('pages through tasks with cursors and filters by status', async () => {
    const s = await seller();
    const call = await mcp(s.url);
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add(s.createTaskBehindBuyersBack({ status: 'submitted' }));
    const doneId = s.createTaskBehindBuyersBack({ status: 'completed' });

    for (const tool of ['list_tasks', 'tasks/list']) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const r = await call(tool, {
          filters: { statuses: ['submitted', 'working', 'input-required'] },
          sort: { field: 'created_at', direction: 'asc' },
          pagination: { max_results: 2, ...(cursor && { cursor }) },
        });
        expect(r.isError).toBe(false);
        pages++;
        for (const t of r.body.tasks) {
          expect(t).toMatchObject({ task_type: 'create_media_buy', domain: 'media-buy', status: 'submitted' });
          expect(t.created_at).toBeTruthy();
          expect(t.updated_at).toBeTruthy();
          seen.push(t.task_id);
        }
        expect(r.body.query_summary.total_matching).toBe(5);
        cursor = r.body.pagination.has_more ? r.body.pagination.cursor : undefined;
        if (r.body.pagination.has_more) expect(typeof cursor).toBe('string');
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual([...ids]);
    }

    const all = await call('list_tasks', { pagination: { max_results: 100 } });
    expect(all.body.tasks).toHaveLength(6);
    expect(all.body.tasks[0].task_id).toBe(doneId); // default sort: created_at desc
    expect(all.body.pagination.has_more).toBe(false);

    const bad = await call('list_tasks', { pagination: { cursor: 'garbage' } });
    expect(bad.body.adcp_error.code).toBe('INVALID_REQUEST');
  });

  it('updated_after finds tasks that changed since a point in time', async () => {
    const s = await seller();
    const call = await mcp(s.url);
    const a = s.createTaskBehindBuyersBack();
    const b = s.createTaskBehindBuyersBack();
    const since = s.getTask(b)!.updated_at;
    s.completeTask(a);
    const r = await call('list_tasks', { filters: { updated_after: since } });
    expect(r.body.tasks.map((t: Body) => t.task_id)).toEqual([a]);
    expect(r.body.tasks[0].status).toBe('completed');
  });
});

describe('sandbox seller: webhooks', () => {
  const HMAC_SECRET = 'hmac-secret-that-is-at-least-32-chars!!';

  it('POSTs the terminal status with a valid legacy HMAC-SHA256 signature', async () => {
    const s = await seller({ submittedDelayMs: 50 });
    const call = await mcp(s.url);
    const hook = await receiver();
    const r = await call(
      'create_media_buy',
      buy('sandbox_submitted', {
        context: { op: 'op-42' },
        push_notification_config: {
          url: hook.url,
          operation_id: 'op-42',
          token: 'client-token-0123456789',
          authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC_SECRET },
        },
      }),
    );
    const [d] = await hook.waitFor(1);
    const ts = d!.headers['x-adcp-timestamp'] as string;
    expect(Math.abs(Date.now() / 1000 - Number(ts))).toBeLessThan(60);
    const expected = `sha256=${createHmac('sha256', HMAC_SECRET).update(`${ts}.${d!.raw}`).digest('hex')}`;
    expect(d!.headers['x-adcp-signature']).toBe(expected);
    expect(d!.headers['content-type']).toContain('application/json');
    expect(d!.url).toBe('/hooks/op-1');
    expect(d!.body).toMatchObject({
      task_id: r.body.task_id,
      task_type: 'create_media_buy',
      status: 'completed',
      operation_id: 'op-42',
      token: 'client-token-0123456789',
      context: { op: 'op-42' },
    });
    expect(d!.body.idempotency_key).toMatch(/^[A-Za-z0-9_.:-]{16,255}$/);
    expect(d!.body.result.media_buy_id).toMatch(/^mb_/);
    expect(Date.parse(d!.body.timestamp)).not.toBeNaN();
    await s.webhooksSettled();
    expect(s.stats().webhooks).toEqual([
      expect.objectContaining({ task_id: r.body.task_id, status: 'completed', auth: 'hmac', delivered: true, attempts: 1 }),
    ]);
  });

  it('signs with RFC 9421 by default, verifiable with the JWKS served at /.well-known/jwks.json', async () => {
    const s = await seller({ workingDelayMs: 30 });
    const call = await mcp(s.url);
    const hook = await receiver();
    const jwks = (await (await fetch(s.jwksUrl)).json()) as { keys: Body[] };
    expect(jwks).toEqual(s.jwks);
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', adcp_use: 'webhook-signing' });
    expect(jwks.keys[0]!.d).toBeUndefined();

    await call('create_media_buy', buy('sandbox_working', { push_notification_config: { url: hook.url, operation_id: 'op-9421' } }));
    const [d] = await hook.waitFor(1);
    expect(d!.headers['signature-input']).toContain('tag="adcp/webhook-signing/v1"');
    const verified = await verifyWebhookSignature(
      { method: 'POST', url: hook.url, headers: d!.headers as Record<string, string>, body: d!.raw },
      {
        jwks: new StaticJwksResolver(jwks.keys as never),
        replayStore: new InMemoryReplayStore(),
        revocationStore: new InMemoryRevocationStore(),
      },
    );
    expect(verified.keyid).toBe(jwks.keys[0]!.kid);
    expect(d!.body.status).toBe('completed');
  });

  it('sends Bearer credentials when the buyer registered the Bearer scheme', async () => {
    const s = await seller({ workingDelayMs: 10 });
    const call = await mcp(s.url);
    const hook = await receiver();
    const credentials = 'bearer-credentials-at-least-32-characters';
    await call('create_media_buy', buy('sandbox_working', {
      push_notification_config: { url: hook.url, operation_id: 'op-b', authentication: { schemes: ['Bearer'], credentials } },
    }));
    const [d] = await hook.waitFor(1);
    expect(d!.headers.authorization).toBe(`Bearer ${credentials}`);
  });

  it('retries 5xx with the same idempotency_key and stops on 409', async () => {
    const s = await seller({ workingDelayMs: 10, webhookRetry: { initialDelayMs: 20, maxAttempts: 4 } });
    const call = await mcp(s.url);
    const flaky = await receiver((n) => (n === 1 ? 503 : 200));
    await call('create_media_buy', buy('sandbox_working', { push_notification_config: { url: flaky.url, operation_id: 'op-r' } }));
    const [a, b] = await flaky.waitFor(2);
    expect(b!.body.idempotency_key).toBe(a!.body.idempotency_key);
    expect(b!.raw).toBe(a!.raw);
    expect(b!.headers.signature).not.toBe(a!.headers.signature);

    const conflicting = await receiver(() => 409);
    await call('create_media_buy', buy('sandbox_working', { push_notification_config: { url: conflicting.url, operation_id: 'op-c' } }));
    await conflicting.waitFor(1);
    await s.webhooksSettled();
    expect(conflicting.deliveries).toHaveLength(1);
    const last = s.stats().webhooks.at(-1)!;
    expect(last).toMatchObject({ delivered: false, attempts: 1, final_status: 409 });
  });

  it('many deliveries retrying at once (a receiver restarting) wait without piling listeners on one signal', async () => {
    // The retry sleeps once each added an abort listener to one shutdown signal: more than
    // ten retrying together printed MaxListenersExceededWarning (which fails this test).
    const s = await seller({ workingDelayMs: 10, webhookRetry: { initialDelayMs: 50, maxAttempts: 3 } });
    const call = await mcp(s.url);
    const seen = new Set<string>();
    const restarting = await receiver(() => 503);
    const n = 16;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        call('create_media_buy', buy('sandbox_working', { push_notification_config: { url: restarting.url, operation_id: `op-many-${i}` } })),
      ),
    );
    await s.webhooksSettled();
    for (const d of restarting.deliveries) seen.add(d.body.idempotency_key);
    expect(seen.size).toBeGreaterThanOrEqual(n);
    // Each one tried three times (two retries), none delivered.
    expect(restarting.deliveries.length).toBe(seen.size * 3);
    expect(s.stats().webhooks.every((w) => !w.delivered && w.final_status === 503)).toBe(true);
  });

  it('stops on a 401 whose WWW-Authenticate names a webhook_ error', async () => {
    const s = await seller({ workingDelayMs: 10, webhookRetry: { initialDelayMs: 20 } });
    const call = await mcp(s.url);
    const hook = await receiver(() => [401, { 'www-authenticate': 'Signature error="webhook_signature_invalid"' }]);
    await call('create_media_buy', buy('sandbox_working', { push_notification_config: { url: hook.url, operation_id: 'op-401' } }));
    await hook.waitFor(1);
    await s.webhooksSettled();
    expect(hook.deliveries).toHaveLength(1);
  });

  it('can drop webhooks, duplicate them, and send stale out-of-order ones', async () => {
    const dropping = await seller({ workingDelayMs: 10, dropWebhooks: true });
    const dropCall = await mcp(dropping.url);
    const lost = await receiver();
    const d = await dropCall('create_media_buy', buy('sandbox_working', { push_notification_config: { url: lost.url, operation_id: 'op-d' } }));
    await pollUntil(dropCall, d.body.task_id, 'completed');
    await dropping.webhooksSettled();
    expect(lost.deliveries).toHaveLength(0);
    expect(dropping.stats().webhooks).toEqual([expect.objectContaining({ dropped: true, delivered: false })]);

    const dup = await seller({ workingDelayMs: 10, duplicateWebhooks: true });
    const dupCall = await mcp(dup.url);
    const twice = await receiver();
    const r = await dupCall('create_media_buy', buy('sandbox_working', { push_notification_config: { url: twice.url, operation_id: 'op-2x' } }));
    const [first, second] = await twice.waitFor(2);
    expect(second!.body.idempotency_key).toBe(first!.body.idempotency_key);
    expect(second!.raw).toBe(first!.raw);

    // A stale non-terminal delivery after the terminal one, with its own key.
    dup.sendWebhook(r.body.task_id, { status: 'working', timestamp: '2000-01-01T00:00:00.000Z' });
    const all = await twice.waitFor(3);
    expect(all[2]!.body).toMatchObject({ status: 'working', timestamp: '2000-01-01T00:00:00.000Z' });
    expect(all[2]!.body.idempotency_key).not.toBe(first!.body.idempotency_key);
    await dup.webhooksSettled();
  });

  it('sends no webhook for a synchronous terminal reply', async () => {
    const s = await seller();
    const call = await mcp(s.url);
    const hook = await receiver();
    await call('create_media_buy', buy('sandbox_instant', { push_notification_config: { url: hook.url, operation_id: 'op-s' } }));
    await call('create_media_buy', buy('sandbox_rejected', { push_notification_config: { url: hook.url, operation_id: 'op-s2' } }));
    await s.webhooksSettled();
    expect(hook.deliveries).toHaveLength(0);
  });
});

describe('sandbox seller: A2A', () => {
  it('answers an AdCP skill invocation over A2A message/send', async () => {
    const s = await seller();
    expect(s.a2aUrl).toBeDefined();
    const card = (await (await fetch(`${s.origin}/.well-known/agent-card.json`)).json()) as Body;
    expect(card.skills.map((k: Body) => k.id)).toEqual(expect.arrayContaining(['create_media_buy', 'get_adcp_capabilities', 'tasks/get']));

    const res = await fetch(s.a2aUrl!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            messageId: 'm-1',
            role: 'user',
            parts: [{ kind: 'data', data: { skill: 'create_media_buy', input: buy('sandbox_submitted') } }],
          },
        },
      }),
    });
    const rpc = (await res.json()) as Body;
    const data = rpc.result.artifacts[0].parts[0].data;
    expect(data.status).toBe('submitted');
    expect(data.task_id).toMatch(/^task_/);
    expect(s.getTask(data.task_id)?.status).toBe('submitted');
  });
});
