/**
 * Reporting fires from a real sandbox seller over loopback, into a live buy:
 * applied, deduplicated, adjusted, in both body styles, several buys per fire,
 * and never applied when forged or when they name another tenant's buy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/orchestrator.js';
import { buyLive, buyNotifications, buyWhen, liveBuyRequest, metric, settledBuy, startLiveBuyStack, type LiveBuyStack } from '../helpers/live-buys.js';

let stack: LiveBuyStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const round = (n: number) => Math.round(n * 100) / 100;
const spendOf = (fire: { body: Record<string, any> }, mediaBuyId: string) => {
  const report = fire.body.result ?? fire.body;
  return report.media_buy_deliveries.find((r: any) => r.media_buy_id === mediaBuyId).totals.spend as number;
};

describe('a live buy takes its reporting fires', () => {
  it('registers our own HMAC reporting webhook, and applies each fire: reports, spend, sequence, next expected', async () => {
    stack = await startLiveBuyStack();
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    expect(buy).toMatchObject({ agent_id: agentId, status: expect.any(String), reports: { frequency: 'hourly', webhook: 'hmac', received: 0 } });
    const op = (await orch.api('GET', `/v1/operations/${buy.operation_id}`)).body;
    // Ours, with a secret never shown, and its URL's token hidden too.
    expect(op.request.reporting_webhook).toEqual({
      url: `${orch.config.ADCP_ORCH_PUBLIC_URL}/webhooks/adcp/reporting/[redacted]`,
      reporting_frequency: 'hourly',
      authentication: { schemes: ['HMAC-SHA256'], credentials: '[redacted]' },
    });

    const first = (await seller.reporting.fireNow(buy.media_buy_id))!;
    expect(first).toMatchObject({ auth: 'hmac', final_status: 200, delivered: true });
    const second = (await seller.reporting.fireNow(buy.media_buy_id))!;
    const after = await buyWhen(orch, buy.id, (b) => b.reports.received === 2);
    expect(after.delivery.spend).toBeCloseTo(round(spendOf(first, buy.media_buy_id) + spendOf(second, buy.media_buy_id)), 2);
    expect(after.delivery.source).toBe('webhook');
    expect(after.delivery.through).toBe(second.reporting_period.end);
    expect(after.reports).toMatchObject({ last_sequence: 2, missing: 0, final_received: false, next_expected_at: second.body.next_expected_at });
    expect(after.events.filter((e: any) => e.kind === 'report_received')).toHaveLength(2);

    const delivery = (await orch.api('GET', `/v1/media-buys/${buy.id}/delivery`)).body;
    expect(delivery.reports.map((r: any) => [r.notification_type, r.sequence_number, r.source])).toEqual([
      ['scheduled', 1, 'webhook'],
      ['scheduled', 2, 'webhook'],
    ]);
    expect(delivery.totals.spend).toBe(after.delivery.spend);
    expect(await metric(orch, 'delivery_reports_total', { source: 'webhook', outcome: 'applied' })).toBe(2);
  });

  it('answers a duplicate fire 2xx and counts it once', async () => {
    stack = await startLiveBuyStack();
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    const first = (await seller.reporting.fireNow(buy.media_buy_id))!;
    const again = await seller.reporting.resendLastFire(buy.media_buy_id);
    expect(again).toMatchObject({ duplicate: true, final_status: 200 });
    const after = (await orch.api('GET', `/v1/media-buys/${buy.id}`)).body;
    expect(after.reports.received).toBe(1);
    expect(after.delivery.spend).toBe(spendOf(first, buy.media_buy_id));
    expect((await orch.api('GET', `/v1/media-buys/${buy.id}/delivery`)).body.reports).toHaveLength(1);
    const fires = await orch.app.store.db.kysely.selectFrom('reporting_fires').selectAll().where('buy_id', '=', buy.id).execute();
    expect(fires).toHaveLength(1);
  });

  it('an adjusted report replaces its period; totals count each period once', async () => {
    stack = await startLiveBuyStack();
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    const p1 = (await seller.reporting.fireNow(buy.media_buy_id))!;
    const p2 = (await seller.reporting.fireNow(buy.media_buy_id))!;
    const adjusted = await seller.reporting.sendAdjusted(buy.media_buy_id, { periodIndex: 0, factor: 0.5 });
    expect(adjusted).toMatchObject({ notification_type: 'adjusted', final_status: 200 });
    const after = await buyWhen(orch, buy.id, (b) => b.reports.received === 3);
    const expected = round(spendOf(adjusted, buy.media_buy_id) + spendOf(p2, buy.media_buy_id));
    expect(after.delivery.spend).toBeCloseTo(expected, 2);
    expect(after.delivery.spend).toBeLessThan(round(spendOf(p1, buy.media_buy_id) + spendOf(p2, buy.media_buy_id)));
    const { reports, totals } = (await orch.api('GET', `/v1/media-buys/${buy.id}/delivery`)).body;
    const original = reports.find((r: any) => r.sequence_number === 1);
    const restated = reports.find((r: any) => r.notification_type === 'adjusted');
    expect(original.superseded_by).toBe(restated.id);
    expect(restated).toMatchObject({ is_adjusted: true, period: original.period });
    expect(totals).toMatchObject({ periods: 2 });
    expect(totals.spend).toBeCloseTo(expected, 2);
  });

  it('applies a 3.1 envelope fire like a 3.0 bare one', async () => {
    stack = await startLiveBuyStack();
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    seller.reporting.envelopeNextFire(buy.media_buy_id);
    const envelope = (await seller.reporting.fireNow(buy.media_buy_id))!;
    const bare = (await seller.reporting.fireNow(buy.media_buy_id))!;
    expect([envelope.style, bare.style]).toEqual(['envelope', 'bare']);
    expect([envelope.final_status, bare.final_status]).toEqual([200, 200]);
    const after = await buyWhen(orch, buy.id, (b) => b.reports.received === 2);
    expect(after.delivery.spend).toBeCloseTo(round(spendOf(envelope, buy.media_buy_id) + spendOf(bare, buy.media_buy_id)), 2);
    expect(after.reports.last_sequence).toBe(2);
  });

  it('refuses a badly signed fire with 401 and changes nothing', async () => {
    stack = await startLiveBuyStack();
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    await seller.reporting.fireNow(buy.media_buy_id);
    const before = await settledBuy(orch, buy.id);
    const forged = await seller.reporting.sendBadlySignedFire(buy.media_buy_id);
    expect(forged.final_status).toBe(401);
    const after = (await orch.api('GET', `/v1/media-buys/${buy.id}`)).body;
    expect(after).toEqual(before);
    expect((await orch.api('GET', `/v1/media-buys/${buy.id}/delivery`)).body.reports).toHaveLength(1);
  });

  it('applies each buy a combined fire names, and nothing to a buy of another tenant', async () => {
    stack = await startLiveBuyStack();
    const { seller, orch, agentId } = stack;
    const a = await buyLive(orch, agentId);
    const b = await buyLive(orch, agentId);
    // Another tenant buys from the same seller, through an agent registration of its own.
    const otherTenant = await orch.app.store.tenants.ensureTenant('other-tenant');
    const otherKey = await orch.app.store.tenants.createApiKey(otherTenant.id);
    const asOther = (method: string, path: string, body?: unknown) => orch.api(method, path, body, { authorization: `Bearer ${otherKey}` });
    const otherAgent = (await asOther('POST', '/v1/agents', { name: 'seller', role: 'seller', protocol: 'mcp', url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } })).body.id;
    const created = (await asOther('POST', '/v1/media-buys', { agent_id: otherAgent, request: liveBuyRequest(['sandbox_instant']), reporting: { frequency: 'hourly' } })).body;
    expect(created.status).toBe('completed');
    const theirs = (await orch.app.store.mediaBuys.byOperation(created.id))!;
    const theirsBefore = await settledBuy(orch, theirs.id, { authorization: `Bearer ${otherKey}` });
    // Not ours to see.
    expect((await orch.api('GET', `/v1/media-buys/${theirs.id}`)).status).toBe(404);

    const fire = await seller.reporting.fireCombined([a.media_buy_id, b.media_buy_id, theirs.media_buy_id]);
    expect(fire.final_status).toBe(200);
    const afterA = await buyWhen(orch, a.id, (x) => x.reports.received === 1);
    const afterB = await buyWhen(orch, b.id, (x) => x.reports.received === 1);
    expect(afterA.delivery.spend).toBe(spendOf(fire, a.media_buy_id));
    expect(afterB.delivery.spend).toBe(spendOf(fire, b.media_buy_id));
    expect(afterA.events.some((e: any) => e.kind === 'report_unmatched' && e.detail.media_buy_id === theirs.media_buy_id)).toBe(true);
    expect((await asOther('GET', `/v1/media-buys/${theirs.id}`)).body).toEqual(theirsBefore);
    expect(await metric(orch, 'delivery_reports_total', { source: 'webhook', outcome: 'unmatched' })).toBe(1);
  });

  it("reads the status of the buys a fire reported on in one get_media_buys, each buy applying its own", async () => {
    stack = await startLiveBuyStack();
    const { seller, orch, agentId } = stack;
    const buys = [await buyLive(orch, agentId), await buyLive(orch, agentId), await buyLive(orch, agentId)];
    const ids = buys.map((b) => b.media_buy_id);
    const statusReads = () => seller.stats().calls.filter((c) => c.tool === 'get_media_buys' && (c.args.media_buy_ids as string[]).some((id) => ids.includes(id)));
    const before = statusReads().length;
    const fire = await seller.reporting.fireCombined(ids);
    expect(fire.final_status).toBe(200);
    // The contract reads each buy's status after its report: here one call asks for all three.
    await eventually(async () => (statusReads().length > before ? true : undefined));
    for (const b of buys) await buyWhen(orch, b.id, (x) => x.reports.received === 1);
    const reads = statusReads().slice(before);
    expect(reads).toHaveLength(1);
    expect([...(reads[0]!.args.media_buy_ids as string[])].sort()).toEqual([...ids].sort());
    // Each buy took its own answer: its next status read is on the interval again, not due.
    for (const b of buys) {
      const row = await eventually(async () => {
        const r = (await orch.app.store.mediaBuys.get(b.id))!;
        return r.lease_owner === null && r.status_check_at! > Date.now() + 60_000 ? r : undefined;
      });
      expect(row.status).toBe('active');
    }
    expect(statusReads().slice(before)).toHaveLength(1);
  });

  it('follows a whole flight on the seller\'s own clock: statuses, every report, the final one, then tracking ends', async () => {
    stack = await startLiveBuyStack({ seller: { reportClock: true, reportIntervalMs: 300, statusStepMs: 50, flightPeriods: 4 } });
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    const done = await buyWhen(orch, buy.id, (b) => b.reports.final_received && b.ended_at !== null, 30_000);
    await seller.reporting.settled();
    const fires = seller.stats().reportFires.filter((f) => f.media_buy_ids[0] === buy.media_buy_id);
    expect(fires.at(-1)!.notification_type).toBe('final');
    expect(fires.every((f) => f.final_status === 200)).toBe(true);
    expect(done.reports.received).toBe(fires.length);
    expect(done.delivery.spend).toBeCloseTo(fires.reduce((n, f) => n + spendOf(f, buy.media_buy_id), 0), 2);
    expect(done).toMatchObject({ status: 'completed', next_check_at: null, reports: { missing: 0, next_expected_at: null } });
    expect(await buyNotifications(orch, buy.id, 'media_buy.completed')).toHaveLength(1);
    expect(await buyNotifications(orch, buy.id, 'media_buy.activated')).toHaveLength(1);
  });

  it("applies the sandbox seller's reports through the create's push_notification_config (RFC 9421, no task id), in both styles", async () => {
    stack = await startLiveBuyStack();
    const b = await buyLive(stack.orch, stack.agentId);
    const first = await stack!.seller.reporting.fireViaPushNotificationConfig(b.media_buy_id);
    expect([first.auth, first.final_status]).toEqual(['rfc9421', 200]);
    const prebid = await stack!.seller.reporting.fireViaPushNotificationConfig(b.media_buy_id, { taskType: 'update_media_buy' });
    expect(prebid.final_status).toBe(200);
    const after = (await stack!.orch.api('GET', `/v1/media-buys/${b.id}`)).body;
    expect(after.reports).toMatchObject({ received: 2, last_sequence: 2 });
    expect((await stack!.orch.api('GET', `/v1/operations/${b.operation_id}`)).body.status).toBe('completed');
  });
});
