/**
 * Idempotency by capability, against the sandbox seller: a reply lost after the seller
 * committed (sandbox_lost_reply: the buy is made, the answer is HTTP 500) is resent under
 * its key only within the replay window the seller declared. At a seller declaring
 * `{supported: false}`, past a short declared window, or on an IDEMPOTENCY_EXPIRED answer,
 * the outcome is looked up first and, the seller's buy not telling whose it is, the
 * operation waits for a person: the seller's book ends with exactly one buy either way.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller, type SandboxSellerOptions } from '../../src/sandbox/seller.js';
import { displayCreative } from '../helpers/creatives.js';
import { buyLive } from '../helpers/live-buys.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { forwardTo } from '../helpers/proxy-forward.js';
import { peekJsonRpc, readBody } from '../helpers/request-body.js';
import { startToolFaultProxy } from '../helpers/tool-fault-proxy.js';

const HOUR = 3_600_000;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** Our clock, `skew` ms ahead of the wall clock once a test moves it. */
const clock = { skew: 0, now: () => Date.now() + clock.skew, random: Math.random };

async function setUp(sellerOpts: SandboxSellerOptions, env: Record<string, string> = {}, agentUrl?: (seller: SandboxSeller) => Promise<string>) {
  clock.skew = 0;
  const seller = await startSandboxSeller(sellerOpts);
  cleanups.push(() => seller.close());
  const orch = await startOrchestrator({ env, clock });
  cleanups.push(() => orch.close());
  const agentId = await orch.registerAgent({ url: agentUrl ? await agentUrl(seller) : seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
  return { seller, orch, agentId };
}

const buyLostReply = async (orch: TestOrchestrator, agentId: string) =>
  (await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_lost_reply'), webhook: 'none' })).body;

const opWhen = (orch: TestOrchestrator, id: string, check: (op: any) => boolean) =>
  eventually(async () => {
    const op = (await orch.api('GET', `/v1/operations/${id}`)).body;
    return check(op) ? op : undefined;
  });

/**
 * The operation once it is settled (stalled for a person, or ended), and its `stalled` event.
 * Settled either way, so a test shows what went wrong (a second buy, a failure) rather than a timeout.
 */
async function stalledForAPerson(orch: TestOrchestrator, id: string) {
  const op = await opWhen(orch, id, (o) => o.stalled === true || ['completed', 'failed'].includes(o.status));
  const event = op.events.find((e: any) => e.kind === 'stalled');
  return { op, event };
}

describe('a create whose reply was lost after the seller committed', () => {
  it('at a seller declaring idempotency supported:false: never resent blindly; one buy at the seller, the operation left to a person', async () => {
    const { seller, orch, agentId } = await setUp({ idempotency: { supported: false } });
    const agent = (await orch.api('GET', `/v1/agents/${agentId}`)).body;
    expect(agent.capabilities.adcp.idempotency).toEqual({ supported: false });

    const created = await buyLostReply(orch, agentId);
    const { op, event } = await stalledForAPerson(orch, created.id);
    // The seller's book: the one buy its first (lost) reply was about. A blind resend made a second.
    expect(seller.mediaBuys()).toHaveLength(1);
    expect(seller.stats().createCallsByKey[op.idempotency_key]).toBe(1);
    expect(op.status).toBe('unknown');
    expect(op.next_check_at).toBeNull();
    expect(op.stalled_reason).toMatch(/^create_media_buy not sent again: the seller declares it does not honour idempotency keys \(idempotency.supported: false\)/);
    expect(op.stalled_reason).toContain(`may be this one (${seller.mediaBuys()[0]!.media_buy_id})`);
    expect(event.detail).toMatchObject({ reason: 'idempotency_unknown', lookup: 'candidates', candidates: [seller.mediaBuys()[0]!.media_buy_id] });
    expect(op.events.some((e: any) => e.kind === 'resend')).toBe(false);
    // Nothing goes to the seller by itself after that.
    await new Promise((r) => setTimeout(r, 1500));
    expect(seller.stats().createCallsByKey[op.idempotency_key]).toBe(1);
    expect(seller.mediaBuys()).toHaveLength(1);
  });

  it('at a seller declaring a one-hour window, once the window has passed: looked up, not resent; one buy', async () => {
    const { seller, orch, agentId } = await setUp({ idempotency: { supported: true, replay_ttl_seconds: 3600 } });
    const created = await buyLostReply(orch, agentId);
    // The lost reply is in; two hours pass (on our clock) before the resend comes due.
    await opWhen(orch, created.id, (o) => o.events.some((e: any) => e.kind === 'send_failed'));
    clock.skew = 2 * HOUR;
    const { op, event } = await stalledForAPerson(orch, created.id);
    expect(seller.mediaBuys()).toHaveLength(1);
    expect(seller.stats().createCallsByKey[op.idempotency_key]).toBe(1);
    expect(op.stalled_reason).toMatch(/past the seller's declared replay window \(replay_ttl_seconds 3600/);
    expect(event.detail.reason).toBe('idempotency_unknown');
  });

  it('at the same seller within its window: resent under the same key and replayed, one buy', async () => {
    const { seller, orch, agentId } = await setUp({ idempotency: { supported: true, replay_ttl_seconds: 3600 } });
    const created = await buyLostReply(orch, agentId);
    const done = await waitForStatus(orch, created.id, ['completed']);
    expect(seller.stats().createCallsByKey[done.idempotency_key]).toBe(2);
    expect(seller.stats().replaysByKey[done.idempotency_key]).toBe(1);
    expect(seller.mediaBuys()).toHaveLength(1);
    expect(done.result.media_buy_id).toBe(seller.mediaBuys()[0]!.media_buy_id);
  });

  it('answered IDEMPOTENCY_EXPIRED on its resend: looked up and left to a person, not failed', async () => {
    let proxy!: Awaited<ReturnType<typeof startToolFaultProxy>>;
    const { seller, orch, agentId } = await setUp({}, {}, async (s) => {
      proxy = await startToolFaultProxy(s.origin);
      cleanups.push(() => proxy.close());
      return `${proxy.origin}/mcp`;
    });
    const created = await buyLostReply(orch, agentId);
    await opWhen(orch, created.id, (o) => o.events.some((e: any) => e.kind === 'send_failed'));
    // The seller says it forgot the key (its clock ran ahead of its window, say).
    proxy.set('create_media_buy', { adcpError: { code: 'IDEMPOTENCY_EXPIRED', message: 'idempotency_key is past the replay window', recovery: 'correctable' } });
    const { op, event } = await stalledForAPerson(orch, created.id);
    expect(op.status).toBe('unknown');
    expect(op.error.code).toBe('IDEMPOTENCY_EXPIRED');
    expect(op.stalled_reason).toMatch(/the seller answered IDEMPOTENCY_EXPIRED.*may be this one \(mb_/);
    expect(event.detail.reason).toBe('idempotency_unknown');
    expect(seller.mediaBuys()).toHaveLength(1);
  });
});

/** A proxy that passes everything on, but answers the first `sync_creatives` HTTP 500 after the seller carried it out. */
async function losingFirstSync(target: string): Promise<string> {
  let lost = false;
  const server: Server = createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      const rpc = peekJsonRpc(body);
      const answer = await forwardTo(target, req, body);
      if (!lost && rpc?.method === 'tools/call' && rpc.params?.name === 'sync_creatives') {
        lost = true;
        res.writeHead(500, { 'content-type': 'text/plain' }).end('proxy: the reply was lost');
        return;
      }
      res.writeHead(answer.status, answer.headers).end(answer.body);
    } catch {
      res.destroy(); // a connection cut while closing
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => (server.closeAllConnections(), server.close(r))));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe('a sync_creatives whose reply was lost after the seller committed', () => {
  it('at a seller declaring supported:false: looked up by its creative ids, not synced twice', async () => {
    const { seller, orch, agentId } = await setUp({ idempotency: { supported: false }, reportClock: false, creativeReviewMs: 60_000 }, {}, (s) => losingFirstSync(s.origin));
    const buy = await buyLive(orch, agentId);
    const res = await orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, { creatives: [displayCreative('cr_lost', 'Lost reply', seller.url)] });
    expect(res.status).toBe(202);
    const { op, event } = await stalledForAPerson(orch, res.body.id);
    expect(seller.stats().calls.filter((c) => c.tool === 'sync_creatives')).toHaveLength(1);
    expect(seller.stats().calls.filter((c) => c.tool === 'list_creatives').length).toBeGreaterThan(0);
    expect(op.stalled_reason).toMatch(/^sync_creatives not sent again: .*supported: false.*may be this one \(cr_lost\)/);
    expect(event.detail).toMatchObject({ reason: 'idempotency_unknown', candidates: ['cr_lost'] });
  });
});
