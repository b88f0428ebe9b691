/**
 * The sandbox seller's delivery reports over real HTTP: a buy bought over MCP
 * (through the project's own AdCP client) lives its compressed flight and
 * reports each period to its reporting_webhook, received by a real receiver
 * that authenticates every fire (HMAC, Bearer). Then the test hooks
 * that make reporting misbehave: lost, silenced, duplicate, adjusted,
 * window_update, envelope, forged and combined fires.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startSandboxSeller, type FireRecord, type SandboxSeller, type SandboxSellerOptions } from '../../src/sandbox/seller.js';
import { caller, type Caller } from '../helpers/governance.js';
import { startReportReceiver, type ReceiverAuth, type ReportReceiver } from '../helpers/report-receiver.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const HMAC_SECRET = 'reporting-hmac-secret-of-at-least-32-chars';
const BEARER = 'reporting-bearer-credential-at-least-32-chars';
const HOUR = 3_600_000;
let seq = 0;

async function seller(opts: SandboxSellerOptions = {}): Promise<{ s: SandboxSeller; adcp: Caller }> {
  const s = await startSandboxSeller({ reportClock: false, ...opts });
  cleanups.push(() => s.close());
  return { s, adcp: caller({ url: s.url, protocol: 'mcp' }) };
}

async function receiver(auth: ReceiverAuth): Promise<ReportReceiver> {
  const r = await startReportReceiver(auth);
  cleanups.push(() => r.close());
  return r;
}

function webhook(r: ReportReceiver, auth: 'hmac' | 'bearer' | 'rfc9421', frequency = 'hourly', path = '/reports/buy-1'): Record<string, unknown> {
  return {
    url: `${r.url}${path}`,
    reporting_frequency: frequency,
    token: 'report-token-0123456789',
    ...(auth === 'hmac' && { authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC_SECRET } }),
    ...(auth === 'bearer' && { authentication: { schemes: ['Bearer'], credentials: BEARER } }),
  };
}

/** A create_media_buy over a flight of `hours` from now, one package per product. */
function buyRequest(products: string[], reporting?: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    idempotency_key: `report-test-${Date.now()}-${++seq}-key`,
    account: { account_id: 'acc_reports' },
    brand: { domain: 'brand.example' },
    start_time: 'asap',
    end_time: new Date(Date.now() + 4 * HOUR).toISOString(),
    packages: products.map((product_id) => ({ product_id, pricing_option_id: 'cpm_usd_fixed', budget: 4000 })),
    ...(reporting && { reporting_webhook: reporting }),
    ...extra,
  };
}

async function buy(adcp: Caller, request: Record<string, unknown>): Promise<string> {
  const reply = await adcp.call('create_media_buy', request);
  expect(reply.error).toBeUndefined();
  return reply.data.media_buy_id as string;
}

const sum = (xs: number[]): number => Math.round(xs.reduce((a, b) => a + b, 0) * 100) / 100;

describe('sandbox seller: a buy reports its flight on the clock', () => {
  it('moves pending_creatives → pending_start → active → completed, one HMAC-signed fire per period, the last final, then silence', async () => {
    const { s, adcp } = await seller({ reportClock: true, reportIntervalMs: 150, statusStepMs: 20, flightPeriods: 4 });
    const r = await receiver({ hmac: HMAC_SECRET });
    const id = await buy(adcp, buyRequest(['sandbox_instant'], webhook(r, 'hmac')));
    const fires = await r.waitFor(4);
    await s.reporting.settled();

    expect(fires.every((f) => f.verified && f.status === 204 && f.path === '/reports/buy-1')).toBe(true);
    const bodies = fires.map((f) => f.body);
    expect(bodies.map((b) => b.notification_type)).toEqual(['scheduled', 'scheduled', 'scheduled', 'final']);
    expect(bodies.map((b) => b.sequence_number)).toEqual([1, 2, 3, 4]);
    expect(new Set(bodies.map((b) => b.idempotency_key)).size).toBe(4);
    expect(bodies.slice(0, 3).every((b) => Date.parse(b.next_expected_at) > Date.now() - 10_000)).toBe(true);
    expect(bodies[3]!.next_expected_at).toBeUndefined();
    expect(bodies.every((b) => b.token === 'report-token-0123456789' && b.currency === 'USD' && b.aggregated_totals === undefined)).toBe(true);
    // Hourly periods over the four-hour flight, contiguous, on the simulated clock.
    const booked = s.reporting.buy(id)!;
    expect(bodies.map((b) => b.reporting_period)).toEqual(
      booked.flight.periods.map((p) => ({ start: new Date(p.start).toISOString(), end: new Date(p.end).toISOString() })),
    );
    expect(Date.parse(bodies[0]!.reporting_period.end) - Date.parse(bodies[0]!.reporting_period.start)).toBe(HOUR);
    const rows = bodies.map((b) => b.media_buy_deliveries[0]);
    expect(rows.map((row) => row.media_buy_id)).toEqual([id, id, id, id]);
    expect(rows.map((row) => row.status)).toEqual(['active', 'active', 'active', 'completed']);
    expect(rows[0].by_package[0]).toMatchObject({ pricing_model: 'cpm', rate: 10, currency: 'USD', delivery_status: 'delivering', paused: false });
    expect(rows[3].by_package[0].delivery_status).toBe('completed');
    // The linear package lands on its budget; impressions follow the CPM.
    expect(sum(rows.map((row) => row.totals.spend))).toBe(4000);
    expect(rows.every((row) => row.totals.impressions === Math.round((row.totals.spend / 10) * 1000))).toBe(true);

    expect(booked.history.map((h) => h.action)).toEqual(['created', 'creatives_approved', 'activated', 'completed']);
    expect(booked.history.map((h) => h.revision)).toEqual([1, 2, 3, 4]);
    const read = await adcp.call('get_media_buys', { account: { account_id: 'acc_reports' }, media_buy_ids: [id] });
    expect(read.data.media_buys).toEqual([expect.objectContaining({ status: 'completed', revision: 4, valid_actions: [] })]);
    // Silence after the final one: nothing is left to deliver or report.
    expect(await s.reporting.fireNow(id)).toBeUndefined();
    expect(s.stats().reportFires.map((f) => [f.sequence_number, f.final_status, f.delivered])).toEqual([[1, 204, true], [2, 204, true], [3, 204, true], [4, 204, true]]);
  });

  it('a product awaiting creatives stays pending_creatives until they are assigned', async () => {
    const { s, adcp } = await seller({ reportClock: true, reportIntervalMs: 60_000, statusStepMs: 10 });
    const id = await buy(adcp, buyRequest(['sandbox_awaiting_creatives']));
    const other = await buy(adcp, buyRequest(['sandbox_instant']));
    await vi.waitFor(() => expect(s.reporting.buy(other)!.status).toBe('active'), { timeout: 5000, interval: 20 });
    expect(s.reporting.buy(id)!.status).toBe('pending_creatives');
    await expect(s.reporting.fireNow(id)).rejects.toThrow(/awaits creatives/);
    s.reporting.assignCreatives(id);
    await vi.waitFor(() => expect(s.reporting.buy(id)!.status).toBe('active'), { timeout: 5000, interval: 20 });
  });
});

describe('sandbox seller: reporting hooks (clock stopped)', () => {
  it('Bearer fires; a lost fire leaves a sequence gap; a resend repeats body and key; silence stops fires, not delivery', async () => {
    const { s, adcp } = await seller({ flightPeriods: 6 });
    const r = await receiver({ bearer: BEARER });
    const id = await buy(adcp, buyRequest(['sandbox_instant'], webhook(r, 'bearer'), { end_time: new Date(Date.now() + 6 * HOUR).toISOString() }));
    expect(s.reporting.buy(id)!.status).toBe('pending_creatives');

    const first = (await s.reporting.fireNow(id))!;
    expect(first).toMatchObject({ sequence_number: 1, auth: 'bearer', delivered: true, final_status: 204, outcome: 'sent' });
    expect(r.fires[0]!.headers.authorization).toBe(`Bearer ${BEARER}`);
    expect(s.reporting.buy(id)!.status).toBe('active');

    const lost = await s.reporting.skipSequenceNumber(id);
    expect(lost).toMatchObject({ sequence_number: 2, outcome: 'lost', delivered: false });
    await s.reporting.fireNow(id);
    expect(r.fires.map((f) => f.body.sequence_number)).toEqual([1, 3]);
    expect(r.fires[1]!.body.reporting_period.start).toBe(s.reporting.buy(id)!.delivered[2]!.start);

    const again = await s.reporting.resendLastFire(id);
    expect(again).toMatchObject({ duplicate: true, sequence_number: 3, final_status: 204 });
    expect(r.fires[2]!.raw).toBe(r.fires[1]!.raw);
    expect(r.fires[2]!.body.idempotency_key).toBe(r.fires[1]!.body.idempotency_key);

    s.reporting.goSilent(id);
    expect(await s.reporting.fireNow(id)).toMatchObject({ sequence_number: 4, outcome: 'silenced' });
    expect(r.fires).toHaveLength(3);
    const delivery = await adcp.call('get_media_buy_delivery', { account: { account_id: 'acc_reports' }, media_buy_ids: [id] });
    const delivered = s.reporting.buy(id)!.delivered;
    expect(delivered).toHaveLength(4);
    expect((delivery.data.media_buy_deliveries as any[])[0].totals.spend).toBe(sum(delivered.flatMap((d) => d.packages.map((p) => p.spend))));
  });

  it('adjusted and window_update restate a period; the book (and get_media_buy_delivery) agree', async () => {
    const { s, adcp } = await seller();
    const r = await receiver({ hmac: HMAC_SECRET });
    const id = await buy(adcp, buyRequest(['sandbox_instant'], webhook(r, 'hmac')));
    await s.reporting.fireNow(id);
    await s.reporting.fireNow(id);
    const before = r.fires[0]!.body.media_buy_deliveries[0].totals.spend as number;

    const adjusted = await s.reporting.sendAdjusted(id, { periodIndex: 0, factor: 0.5 });
    expect(adjusted).toMatchObject({ notification_type: 'adjusted', sequence_number: 3, final_status: 204 });
    const body = r.fires[2]!.body;
    expect(r.fires[2]!.verified).toBe(true);
    expect(body.reporting_period).toEqual(r.fires[0]!.body.reporting_period);
    expect(body.media_buy_deliveries[0].is_adjusted).toBe(true);
    expect(body.media_buy_deliveries[0].totals.spend).toBeCloseTo(before * 0.5, 1);
    expect(s.reporting.buy(id)!.delivered[0]!.restated).toBe(1);

    await s.reporting.sendWindowUpdate(id, { periodIndex: 1 });
    const update = r.fires[3]!.body;
    expect(update).toMatchObject({ notification_type: 'window_update', sequence_number: 4, reporting_period: r.fires[1]!.body.reporting_period });
    expect(update.media_buy_deliveries[0].by_package[0]).toMatchObject({ measurement_window: 'c3', supersedes_window: 'live', is_final: true });

    const delivery = await adcp.call('get_media_buy_delivery', { account: { account_id: 'acc_reports' }, media_buy_ids: [id] });
    const totals = (delivery.data.media_buy_deliveries as any[])[0].totals;
    expect(totals.spend).toBe(sum([body.media_buy_deliveries[0].totals.spend, update.media_buy_deliveries[0].totals.spend]));
  });

  it('the 3.1 envelope, for one fire or as the seller default', async () => {
    const { s, adcp } = await seller();
    const r = await receiver({ hmac: HMAC_SECRET });
    const id = await buy(adcp, buyRequest(['sandbox_instant'], webhook(r, 'hmac')));
    s.reporting.envelopeNextFire(id);
    await s.reporting.fireNow(id);
    await s.reporting.fireNow(id);
    const [envelope, bare] = r.fires.map((f) => f.body);
    expect(envelope).toMatchObject({
      operation_id: `reporting_${id}`,
      task_id: `report_${id}_1`,
      task_type: 'media_buy_delivery',
      status: 'completed',
      token: 'report-token-0123456789',
      result: { notification_type: 'scheduled', sequence_number: 1, currency: 'USD' },
    });
    expect(envelope!.idempotency_key).toMatch(/^[A-Za-z0-9_.:-]{16,255}$/);
    expect(Date.parse(envelope!.timestamp)).not.toBeNaN();
    expect(envelope!.result.media_buy_deliveries[0].media_buy_id).toBe(id);
    expect(envelope!.result.token).toBeUndefined();
    expect(bare!.task_type).toBeUndefined();
    expect(bare!.sequence_number).toBe(2);

    const { s: s2, adcp: adcp2 } = await seller({ reportBodyStyle: 'envelope' });
    const id2 = await buy(adcp2, buyRequest(['sandbox_instant'], webhook(r, 'hmac')));
    expect((await s2.reporting.fireNow(id2))!.style).toBe('envelope');
    expect(r.fires[2]!.body.result.media_buy_deliveries[0].media_buy_id).toBe(id2);
  });

  it('refuses a reporting webhook without authentication (every 3.x schema requires it); a retry after a 500 resends the same bytes and key; forged fires are refused and use no sequence number', async () => {
    const { s, adcp } = await seller({ webhookRetry: { initialDelayMs: 10, maxDelayMs: 20 } });
    const unsigned = await receiver({ rfc9421: s.jwks });
    const refused = await adcp.call('create_media_buy', buyRequest(['sandbox_instant'], webhook(unsigned, 'rfc9421')));
    expect(refused.error).toMatchObject({ code: 'VALIDATION_ERROR', field: '/reporting_webhook/authentication' });
    expect(s.stats().mediaBuysCreated).toBe(0);

    const r = await receiver({ hmac: HMAC_SECRET });
    r.answer = (n) => (n === 1 ? 500 : 204);
    const id = await buy(adcp, buyRequest(['sandbox_instant'], webhook(r, 'hmac')));
    const fire = (await s.reporting.fireNow(id))!;
    expect(fire).toMatchObject({ auth: 'hmac', attempts: 2, delivered: true, final_status: 204 });
    expect(r.fires.map((f) => [f.verified, f.status])).toEqual([[true, 500], [true, 204]]);
    expect(r.fires[1]!.raw).toBe(r.fires[0]!.raw);
    // The retry is the same delivery: the same body and key, signed again at its own time.
    expect(r.fires[1]!.body.idempotency_key).toBe(r.fires[0]!.body.idempotency_key);

    const forged = await s.reporting.sendBadlySignedFire(id);
    expect(forged).toMatchObject({ bad_signature: true, sequence_number: 2, final_status: 401, delivered: false, attempts: 1 });
    expect(r.fires[2]!.verified).toBe(false);
    await s.reporting.fireNow(id);
    expect(r.fires[3]).toMatchObject({ verified: true, status: 204 });
    expect(r.fires[3]!.body.sequence_number).toBe(2);
    expect(r.fires[3]!.body.reporting_period).toEqual(r.fires[2]!.body.reporting_period);
    expect(s.reporting.buy(id)!.delivered).toHaveLength(2);

    for (const [auth, creds] of [['bearer', { bearer: BEARER }]] as const) {
      const other = await receiver(creds);
      const otherId = await buy(adcp, buyRequest(['sandbox_instant'], webhook(other, auth)));
      expect(await s.reporting.sendBadlySignedFire(otherId)).toMatchObject({ final_status: 401, bad_signature: true });
      expect(other.fires.map((f) => f.verified)).toEqual([false]);
    }
  });

  it('one fire may name several buys, including one of another account; only the first buy’s webhook hears it', async () => {
    const { s, adcp } = await seller();
    const r = await receiver({ hmac: HMAC_SECRET });
    const own = await buy(adcp, buyRequest(['sandbox_instant'], webhook(r, 'hmac', 'hourly', '/reports/a')));
    const sibling = await buy(adcp, buyRequest(['sandbox_instant'], webhook(r, 'hmac', 'hourly', '/reports/b')));
    const foreign = await buy(adcp, buyRequest(['sandbox_instant'], webhook(r, 'hmac', 'hourly', '/reports/c'), { account: { account_id: 'acc_other' } }));
    const fire = await s.reporting.fireCombined([own, sibling, foreign]);
    expect(fire).toMatchObject({ media_buy_ids: [own, sibling, foreign], sequence_number: 1, final_status: 204 });
    expect(r.fires.map((f) => f.path)).toEqual(['/reports/a']);
    expect(r.fires[0]!.body.media_buy_deliveries.map((row: any) => row.media_buy_id)).toEqual([own, sibling, foreign]);
    expect([own, sibling, foreign].map((b) => s.reporting.buy(b)!.delivered.length)).toEqual([1, 1, 1]);
    // The sibling's own sequence is untouched: its next fire is its first.
    expect((await s.reporting.fireNow(sibling))!.sequence_number).toBe(1);
  });

  it('cancel (buyer over MCP, or seller) sends a final fire of the period cut short; update_media_buy can move the webhook', async () => {
    const { s, adcp } = await seller();
    const r = await receiver({ hmac: HMAC_SECRET });
    const id = await buy(adcp, buyRequest(['sandbox_instant'], webhook(r, 'hmac')));
    await s.reporting.fireNow(id);
    const moved = await receiver({ bearer: BEARER });
    const update = await adcp.call('update_media_buy', {
      idempotency_key: `move-webhook-${Date.now()}-key`,
      account: { account_id: 'acc_reports' },
      media_buy_id: id,
      reporting_webhook: webhook(moved, 'bearer'),
    });
    expect(update.error).toBeUndefined();
    const cancel = await adcp.call('update_media_buy', {
      idempotency_key: `cancel-${Date.now()}-key-123`,
      account: { account_id: 'acc_reports' },
      media_buy_id: id,
      canceled: true,
      cancellation_reason: 'campaign pulled',
    });
    expect(cancel.status).toBe('completed');
    // The reply's root `status: "canceled"` is the buy's; the update itself completed.
    expect(cancel.data).toMatchObject({ media_buy_id: id, status: 'canceled', valid_actions: [] });
    const [final] = await moved.waitFor(1);
    expect(final!.verified).toBe(true);
    expect(final!.body).toMatchObject({ notification_type: 'final', sequence_number: 2 });
    expect(final!.body.next_expected_at).toBeUndefined();
    expect(final!.body.media_buy_deliveries[0].status).toBe('canceled');
    const planned = s.reporting.buy(id)!.flight.periods[1]!;
    // With the clock stopped a cancel lands halfway through the period in progress.
    expect(Date.parse(final!.body.reporting_period.end)).toBe(planned.start + (planned.end - planned.start) / 2);
    expect(r.fires).toHaveLength(1);

    const read = await adcp.call('get_media_buys', { account: { account_id: 'acc_reports' }, media_buy_ids: [id] });
    expect((read.data.media_buys as any[])[0].cancellation).toMatchObject({ canceled_by: 'buyer', reason: 'campaign pulled' });

    const second = await buy(adcp, buyRequest(['sandbox_instant'], webhook(r, 'hmac')));
    const sellerFinal = (await s.reporting.cancelAsSeller(second, 'inventory withdrawn'))!;
    expect(sellerFinal).toMatchObject({ notification_type: 'final', sequence_number: 1 });
    expect(r.fires[1]!.body.media_buy_deliveries[0]).toMatchObject({ status: 'canceled', totals: { spend: 0 } });
    expect(s.reporting.buy(second)).toMatchObject({ status: 'canceled', canceled_by: 'seller', cancellation_reason: 'inventory withdrawn' });
  });

  it('a report through the operation’s push_notification_config: 3.1 envelope, or the Prebid style', async () => {
    const { s, adcp } = await seller();
    const r = await receiver({ hmac: HMAC_SECRET });
    const push = { url: `${r.url}/operations/op-77`, operation_id: 'op-77', token: 'op-token-0123456789', authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC_SECRET } };
    // Without a reporting_webhook the buy reports daily: a six-day flight has six periods.
    const id = await buy(adcp, buyRequest(['sandbox_instant'], undefined, { push_notification_config: push, end_time: new Date(Date.now() + 6 * 24 * HOUR).toISOString() }));
    expect(await s.reporting.fireNow(id)).toBeUndefined();
    await s.reporting.fireViaPushNotificationConfig(id);
    await s.reporting.fireViaPushNotificationConfig(id, { taskType: 'update_media_buy' });
    expect(r.fires.map((f) => [f.path, f.verified])).toEqual([['/operations/op-77', true], ['/operations/op-77', true]]);
    const [delivery, prebid] = r.fires.map((f) => f.body);
    expect(delivery).toMatchObject({ operation_id: 'op-77', task_type: 'media_buy_delivery', status: 'completed', token: 'op-token-0123456789' });
    expect(delivery!.result).toMatchObject({ sequence_number: 1, media_buy_deliveries: [expect.objectContaining({ media_buy_id: id })] });
    expect(delivery!.result.reporting_period.start).toBe(s.reporting.buy(id)!.delivered[1]!.start);
    expect(delivery!.result.aggregated_totals).toBeUndefined();
    expect(prebid).toMatchObject({ operation_id: 'op-77', task_type: 'update_media_buy', result: { sequence_number: 2, aggregated_totals: { media_buy_count: 1 } } });
  });

  it('under- and over-delivering products read as such in pacing_index', async () => {
    const { s, adcp } = await seller();
    const r = await receiver({ hmac: HMAC_SECRET });
    const under = await buy(adcp, buyRequest(['sandbox_underpacing'], webhook(r, 'hmac', 'hourly', '/u')));
    const over = await buy(adcp, buyRequest(['sandbox_overpacing'], webhook(r, 'hmac', 'hourly', '/o')));
    const firstPackage = (fire: FireRecord | undefined): any => (fire!.body.media_buy_deliveries as any[])[0].by_package[0];
    const u = firstPackage(await s.reporting.fireNow(under));
    const o = firstPackage(await s.reporting.fireNow(over));
    expect(u.pacing_index).toBeLessThan(0.5);
    expect(o.pacing_index).toBeGreaterThan(1.2);
    const rest = await s.reporting.runToEnd(over);
    expect(rest.at(-1)!.notification_type).toBe('final');
    const statuses = rest.map((f) => (f.body.media_buy_deliveries as any[])[0].by_package[0].delivery_status);
    expect(statuses).toContain('budget_exhausted');
    expect(sum(s.reporting.buy(over)!.delivered.flatMap((d) => d.packages.map((p) => p.spend)))).toBe(4000);
  });
});
