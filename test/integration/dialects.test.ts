/**
 * Every main flow runs against a seller speaking AdCP 3.0 and one speaking 3.1
 * (the sandbox seller with adcpVersion '3.0' or '3.1', registered through the API,
 * so its capabilities choose the dialect): a create answered at once, a submitted
 * create finished by webhook or by polling, pause and resume, a cancel by a child
 * update, creatives for a buy waiting for them. In both, what the buy and the
 * operations end as is the same; what reached the seller is each version's own
 * (3.0: no release pin, `tasks/get`; 3.1: the 3.1 pin, `get_task_status`), and
 * every request passed the seller's schema check for it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { displayCreative } from '../helpers/creatives.js';
import { buyLive, buyWhen, LIVE_BUY_ENV, liveBuyRequest, sellerCalls } from '../helpers/live-buys.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';

let seller: SandboxSeller | undefined;
let orch: TestOrchestrator | undefined;
afterEach(async () => {
  await orch?.close();
  await seller?.close();
  orch = seller = undefined;
});

describe.each(['3.0', '3.1'] as const)('against a seller speaking AdCP %s', (version) => {
  async function start(env: Record<string, string> = {}) {
    seller = await startSandboxSeller({
      adcpVersion: version,
      reportClock: true,
      statusStepMs: 100,
      reportIntervalMs: 600_000,
      creativeReviewMs: 300,
      submittedDelayMs: 300,
      flightPeriods: 8,
    });
    orch = await startOrchestrator({ env: { ...LIVE_BUY_ENV, ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: '200', ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: '300', ...env } });
    const agent = await orch.api('POST', '/v1/agents', { name: `seller-${version}`, role: 'seller', protocol: 'mcp', url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
    expect(agent.body.adcp_version).toBe(version);
    return { seller, orch, agentId: agent.body.id as string };
  }

  /** What each request carried: the 3.1 pin to a 3.1 seller, the major only to a 3.0 one; all valid. */
  function expectEveryCallInDialect(s: SandboxSeller): void {
    const calls = s.stats().calls;
    expect(calls.length).toBeGreaterThan(0);
    const release = version === '3.1' ? '3.1' : undefined;
    expect(calls.map((c) => [c.tool, c.args.adcp_major_version, c.args.adcp_version, c.valid])).toEqual(calls.map((c) => [c.tool, 3, release, true]));
  }

  it('a create answered at once makes a buy waiting for creatives; creatives move it on', async () => {
    const { seller: s, orch: o, agentId } = await start();
    const buy = await buyLive(o, agentId, {}, ['sandbox_awaiting_creatives']);
    expect(buy.status).toBe('pending_creatives');
    const sent = await o.api('POST', `/v1/media-buys/${buy.id}/creatives`, {
      creatives: [displayCreative('cr_main', 'Main banner', s.url)],
      assignments: [{ creative_id: 'cr_main', package_id: buy.packages[0].package_id }],
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await buyWhen(o, buy.id, (b) => b.status === 'active');
    expectEveryCallInDialect(s);
  });

  it('a submitted create finishes by webhook, and by polling without one', async () => {
    const { seller: s, orch: o, agentId } = await start();
    const byHook = await o.api('POST', '/v1/media-buys', { agent_id: agentId, request: liveBuyRequest(['sandbox_submitted']) });
    const done = await waitForStatus(o, byHook.body.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.events.some((e: any) => e.kind === 'transition' && e.to === 'completed' && e.source === 'webhook')).toBe(true);

    const polled = await o.api('POST', '/v1/media-buys', { agent_id: agentId, request: liveBuyRequest(['sandbox_submitted']), webhook: 'none' });
    const polledDone = await waitForStatus(o, polled.body.id, ['completed', 'failed']);
    expect(polledDone.status).toBe('completed');
    expect(polledDone.result.media_buy_id).toMatch(/^mb_/);
    const pollTools = new Set(s.stats().pollLog.map((p) => p.tool));
    expect([...pollTools]).toEqual([version === '3.1' ? 'get_task_status' : 'tasks/get']);
    expectEveryCallInDialect(s);
  });

  it('pause and resume reach the seller and the buy follows', async () => {
    const { seller: s, orch: o, agentId } = await start();
    const buy = await buyLive(o, agentId);
    await buyWhen(o, buy.id, (b) => b.status === 'active');
    const paused = await o.api('POST', `/v1/media-buys/${buy.id}/pause`);
    expect(paused.status, JSON.stringify(paused.body)).toBe(202);
    expect((await waitForStatus(o, paused.body.id, ['completed', 'failed'])).status).toBe('completed');
    expect((await o.api('GET', `/v1/media-buys/${buy.id}`)).body.status).toBe('paused');
    const resumed = await o.api('POST', `/v1/media-buys/${buy.id}/resume`);
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(202);
    expect((await waitForStatus(o, resumed.body.id, ['completed', 'failed'])).status).toBe('completed');
    expect((await o.api('GET', `/v1/media-buys/${buy.id}`)).body.status).toBe('active');
    expect(sellerCalls(s, 'update_media_buy', buy.media_buy_id).map((a) => a.paused)).toEqual([true, false]);
    expectEveryCallInDialect(s);
  });

  it('a cancel goes to the seller as a child update, and the buy ends canceled', async () => {
    const { seller: s, orch: o, agentId } = await start();
    const buy = await buyLive(o, agentId);
    const res = await o.api('POST', `/v1/operations/${buy.operation_id}/cancel`, { reason: 'campaign pulled' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const child = await waitForStatus(o, res.body.seller_cancel.id, ['completed', 'failed']);
    expect(child.status).toBe('completed');
    expect(s.mediaBuys().find((b) => b.media_buy_id === buy.media_buy_id)).toMatchObject({ status: 'canceled', cancellation_reason: 'campaign pulled' });
    await buyWhen(o, buy.id, (b) => b.status === 'canceled');
    expectEveryCallInDialect(s);
  });
});
