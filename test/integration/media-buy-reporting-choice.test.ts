/**
 * Which reporting webhook a buy gets: ours by default (HMAC, or Bearer when asked,
 * fires applied either way), at the tenant's default frequency; the caller's own
 * kept as it is (the buy is then polled for its delivery); and a request that
 * asks for both refused before anything is sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, waitForStatus } from '../helpers/orchestrator.js';
import { startReportReceiver } from '../helpers/report-receiver.js';
import { buyLive, buyOf, buyWhen, liveBuyRequest, sellerCalls, startLiveBuyStack, type LiveBuyStack } from '../helpers/live-buys.js';

let stack: LiveBuyStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('the reporting webhook of a buy', () => {
  it('takes Bearer-authenticated fires when asked, and the tenant default frequency when none is asked', async () => {
    stack = await startLiveBuyStack();
    const { seller, orch, agentId } = stack;
    const bearer = await buyLive(orch, agentId, { reporting: { frequency: 'hourly', authentication: 'bearer' } });
    expect(bearer.reports).toMatchObject({ webhook: 'bearer', frequency: 'hourly' });
    const fire = (await seller.reporting.fireNow(bearer.media_buy_id))!;
    expect([fire.auth, fire.final_status]).toEqual(['bearer', 200]);
    await buyWhen(orch, bearer.id, (b) => b.reports.received === 1);

    expect((await orch.api('PUT', '/v1/settings', { reporting: { frequency: 'monthly' } })).status).toBe(200);
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: liveBuyRequest(['sandbox_instant']) });
    expect(created.body.request.reporting_webhook.reporting_frequency).toBe('monthly');
    await waitForStatus(orch, created.body.id, ['completed']);
    expect((await buyOf(orch, created.body.id)).reports).toMatchObject({ webhook: 'hmac', frequency: 'monthly' });
  });

  it("keeps the caller's own reporting_webhook and polls the buy's delivery instead", async () => {
    stack = await startLiveBuyStack({ env: { ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: '300' } });
    const { seller, orch, agentId } = stack;
    // The caller's own receiver (on loopback): it gets the fires, we do not.
    const credentials = 'their-own-credential-of-32-chars-or-more';
    const receiver = await startReportReceiver({ bearer: credentials });
    const close = stack.close;
    stack.close = async () => {
      await close();
      await receiver.close();
    };
    const theirs = { url: `${receiver.url}/in/acme`, reporting_frequency: 'daily', authentication: { schemes: ['Bearer'], credentials } };
    const refused = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: liveBuyRequest(['sandbox_instant'], { reporting_webhook: theirs }), reporting: { frequency: 'hourly' } });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'reporting_conflict']);
    expect(seller.stats().calls.filter((c) => c.tool === 'create_media_buy')).toHaveLength(0);

    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: liveBuyRequest(['sandbox_instant'], { reporting_webhook: theirs }) });
    expect(created.body.request.reporting_webhook).toEqual({ ...theirs, authentication: { schemes: ['Bearer'], credentials: '[redacted]' } });
    await waitForStatus(orch, created.body.id, ['completed']);
    const buy = await buyOf(orch, created.body.id);
    expect(buy.reports).toMatchObject({ webhook: 'none', frequency: 'daily' });
    await seller.reporting.fireNow(buy.media_buy_id); // delivers a period, reported to their URL
    expect(receiver.fires.map((f) => [f.verified, f.path])).toEqual([[true, '/in/acme']]);
    await eventually(async () => (sellerCalls(seller, 'get_media_buy_delivery', buy.media_buy_id).length > 0 ? true : undefined));
    const after = await buyWhen(orch, buy.id, (b) => b.delivery.source === 'poll' && b.delivery.spend > 0);
    expect(after.reports.received).toBe(0);
  });
});
