/**
 * A live buy's watchdogs and reads against a real sandbox seller: a skipped
 * sequence number and a silent seller each lead to get_media_buy_delivery at
 * the seller and one media_buy.report_missing; under-pacing raises one
 * media_buy.underpacing however many reports say so; pause and resume reach the
 * seller as update_media_buy; refresh reads the buy now, as operations.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, waitForStatus } from '../helpers/orchestrator.js';
import { buyLive, buyNotifications, buyWhen, metric, sellerCalls, startLiveBuyStack, type LiveBuyStack } from '../helpers/live-buys.js';

let stack: LiveBuyStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('missing reports', () => {
  it('a skipped sequence number leads to get_media_buy_delivery at the seller and one media_buy.report_missing', async () => {
    stack = await startLiveBuyStack();
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    await seller.reporting.fireNow(buy.media_buy_id);
    await seller.reporting.skipSequenceNumber(buy.media_buy_id);
    expect(sellerCalls(seller, 'get_media_buy_delivery', buy.media_buy_id)).toHaveLength(0);
    await seller.reporting.fireNow(buy.media_buy_id);
    await eventually(async () => (sellerCalls(seller, 'get_media_buy_delivery', buy.media_buy_id).length === 1 ? true : undefined));
    const after = await buyWhen(orch, buy.id, (b) => b.delivery.source === 'poll');
    expect(after.reports).toMatchObject({ missing: 1, last_sequence: 3, received: 2 });
    // The seller's own lifetime figure, which covers the lost period too.
    const lifetime = seller.reporting.buy(buy.media_buy_id)!.delivered.reduce((n, d) => n + d.packages.reduce((m, p) => m + p.spend, 0), 0);
    expect(after.delivery.spend).toBeCloseTo(lifetime, 2);
    const missing = await buyNotifications(orch, buy.id, 'media_buy.report_missing');
    expect(missing).toHaveLength(1);
    expect(missing[0].data.event.detail).toMatchObject({ reason: 'sequence_gap', expected_sequence: 2, received_sequence: 3 });
    expect(await metric(orch, 'delivery_reports_missing_total')).toBe(1);
    // The next fire in sequence is no gap.
    await seller.reporting.fireNow(buy.media_buy_id);
    await buyWhen(orch, buy.id, (b) => b.reports.received === 3);
    expect(await buyNotifications(orch, buy.id, 'media_buy.report_missing')).toHaveLength(1);
  });

  it('a seller gone silent past next_expected_at + grace leads to get_media_buy_delivery and one media_buy.report_missing', async () => {
    stack = await startLiveBuyStack({ seller: { reportIntervalMs: 200 }, env: { ADCP_ORCH_REPORT_GRACE_MS: '300' } });
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    await seller.reporting.fireNow(buy.media_buy_id);
    seller.reporting.goSilent(buy.media_buy_id);
    // Silenced fires are never sent: the orchestrator only sees time pass.
    expect((await seller.reporting.fireNow(buy.media_buy_id))!.outcome).toBe('silenced');
    await eventually(async () => (sellerCalls(seller, 'get_media_buy_delivery', buy.media_buy_id).length >= 1 ? true : undefined));
    const after = await buyWhen(orch, buy.id, (b) => b.delivery.source === 'poll');
    expect(after.reports).toMatchObject({ missing: 1, received: 1 });
    const missing = await buyNotifications(orch, buy.id, 'media_buy.report_missing');
    expect(missing).toHaveLength(1);
    expect(missing[0].data.event.detail).toMatchObject({ reason: 'overdue', grace_ms: 300 });
    expect(after.events.filter((e: any) => e.kind === 'report_missing')).toHaveLength(1);
    // While the silence lasts it is not told again; the next fire ends it.
    seller.reporting.goSilent(buy.media_buy_id, false);
    await seller.reporting.fireNow(buy.media_buy_id);
    await buyWhen(orch, buy.id, (b) => b.reports.received === 2);
    expect(await buyNotifications(orch, buy.id, 'media_buy.report_missing')).toHaveLength(1);
  });
});

describe('pacing', () => {
  it('an under-pacing buy raises one media_buy.underpacing, not one per report', async () => {
    stack = await startLiveBuyStack();
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId, {}, ['sandbox_underpacing']);
    await seller.reporting.fireNow(buy.media_buy_id);
    const first = await buyWhen(orch, buy.id, (b) => b.reports.received === 1);
    expect(first.delivery.pacing.state).toBe('under');
    expect(first.delivery.pacing.ratio).toBeLessThan(0.8);
    await seller.reporting.fireNow(buy.media_buy_id);
    await buyWhen(orch, buy.id, (b) => b.reports.received === 2 && b.delivery.pacing.state === 'under');
    const alerts = await buyNotifications(orch, buy.id, 'media_buy.underpacing');
    expect(alerts).toHaveLength(1);
    expect(alerts[0].data.media_buy.delivery.pacing.state).toBe('under');
    expect(await metric(orch, 'pacing_alerts_total', { state: 'under' })).toBe(1);
    const list = (await orch.api('GET', '/v1/media-buys?pacing=under')).body.media_buys;
    expect(list.map((b: any) => b.id)).toEqual([buy.id]);
  });
});

describe('pause, resume, refresh', () => {
  it('pause and resume reach the seller as update_media_buy, and the buy follows its status', async () => {
    stack = await startLiveBuyStack();
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    await seller.reporting.fireNow(buy.media_buy_id); // moves it active
    await buyWhen(orch, buy.id, (b) => b.status === 'active');

    const paused = await orch.api('POST', `/v1/media-buys/${buy.id}/pause`);
    expect(paused.status).toBe(202);
    expect(paused.body).toMatchObject({ type: 'update_media_buy', parent_id: buy.operation_id });
    expect(paused.body.request).toMatchObject({ media_buy_id: buy.media_buy_id, paused: true, account: { account_id: 'acc_live' } });
    await waitForStatus(orch, paused.body.id, ['completed']);
    expect(sellerCalls(seller, 'update_media_buy', buy.media_buy_id).map((a) => a.paused)).toEqual([true]);
    await buyWhen(orch, buy.id, (b) => b.status === 'paused');
    expect(await buyNotifications(orch, buy.id, 'media_buy.paused')).toHaveLength(1);
    expect((await orch.api('POST', `/v1/media-buys/${buy.id}/pause`)).body.error.code).toBe('already_paused');

    const resumed = await orch.api('POST', `/v1/media-buys/${buy.id}/resume`);
    expect(resumed.status).toBe(202);
    await waitForStatus(orch, resumed.body.id, ['completed']);
    expect(sellerCalls(seller, 'update_media_buy', buy.media_buy_id).map((a) => a.paused)).toEqual([true, false]);
    const after = await buyWhen(orch, buy.id, (b) => b.status === 'active');
    expect(await buyNotifications(orch, buy.id, 'media_buy.resumed')).toHaveLength(1);
    expect(after.events.filter((e: any) => e.kind.endsWith('_requested')).map((e: any) => [e.kind, e.actor])).toEqual([
      ['pause_requested', expect.any(String)],
      ['resume_requested', expect.any(String)],
    ]);
    // Another tenant's key: 404, nothing sent.
    const stranger = await orch.app.store.tenants.createApiKey((await orch.app.store.tenants.ensureTenant('stranger')).id);
    expect((await orch.api('POST', `/v1/media-buys/${buy.id}/pause`, undefined, { authorization: `Bearer ${stranger}` })).status).toBe(404);
    expect(sellerCalls(seller, 'update_media_buy', buy.media_buy_id)).toHaveLength(2);
  });

  it('refresh reads the buy now as two operations whose answers the buy takes', async () => {
    stack = await startLiveBuyStack();
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    await seller.reporting.fireNow(buy.media_buy_id);
    const refreshed = await orch.api('POST', `/v1/media-buys/${buy.id}/refresh`);
    expect(refreshed.status).toBe(202);
    expect(refreshed.body.operations.map((o: any) => o.type)).toEqual(['get_media_buys', 'get_media_buy_delivery']);
    for (const op of refreshed.body.operations) await waitForStatus(orch, op.id, ['completed']);
    const after = await buyWhen(orch, buy.id, (b) => b.delivery.source === 'poll');
    expect(after.events.map((e: any) => e.kind)).toContain('refresh_requested');
    const reports = (await orch.api('GET', `/v1/media-buys/${buy.id}/delivery`)).body.reports;
    expect(reports.map((r: any) => [r.notification_type, r.source])).toContainEqual(['snapshot', 'poll']);
  });
});
