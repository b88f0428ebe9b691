/**
 * A governed live buy's delivery reaches its governance agent: every counted
 * period (new, adjusted, final) as report_plan_outcome `outcome: "delivery"`,
 * each once, through the durable outcome outbox, after the buy's own
 * commitment. The sandbox governance agent's delivery ledger shows them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { governedRequest, outcomesFor, startGoverned, syncPlan, type GovernedSetup } from '../helpers/governed.js';
import { eventually, waitForStatus } from '../helpers/orchestrator.js';
import { buyNotifications, buyOf, buyWhen, LIVE_BUY_ENV, sellerCalls } from '../helpers/live-buys.js';

let setup: GovernedSetup | undefined;
afterEach(async () => {
  await setup?.close();
  setup = undefined;
});

const HOUR = 3_600_000;

describe('delivery outcomes to governance', () => {
  it("reports each counted period of a governed buy to the plan's ledger once, adjusted ones replacing theirs", async () => {
    setup = await startGoverned({ seller: { reportClock: false, statusStepMs: 0, flightPeriods: 8 }, env: LIVE_BUY_ENV });
    const { orch, governance, sellers } = setup;
    const seller = sellers[0]!;
    await syncPlan(setup, 'plan-live');
    // A reporting webhook without authentication (to be signed with RFC 9421) is off every AdCP schema: refused before anything.
    const refused = await orch.api('POST', '/v1/media-buys', {
      agent_id: setup.sellerIds[0],
      request: governedRequest('sandbox_instant'),
      governance: { agent_id: setup.governanceId, plan_id: 'plan-live' },
      reporting: { authentication: 'rfc9421' },
    });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'reporting_auth_unavailable']);
    expect(governance.stats().checks).toHaveLength(0);
    const created = await orch.api('POST', '/v1/media-buys', {
      agent_id: setup.sellerIds[0],
      request: governedRequest('sandbox_instant', { end_time: new Date(Date.now() + 4 * HOUR).toISOString() }),
      governance: { agent_id: setup.governanceId, plan_id: 'plan-live' },
      reporting: { frequency: 'hourly' },
    });
    expect(created.status).toBe(202);
    const op = await waitForStatus(orch, created.body.id, ['completed']);
    // The request carries our reporting webhook with its per-buy HMAC secret, as every schema requires;
    // the governance agent checked that exact request, secret included (the README says why that is safe).
    expect(op.request.reporting_webhook).toMatchObject({ url: expect.stringContaining('/webhooks/adcp/reporting/'), reporting_frequency: 'hourly', authentication: { schemes: ['HMAC-SHA256'] } });
    const checked = governance.stats().checks[0]!.payload as any;
    expect(checked.reporting_webhook.authentication).toEqual({ schemes: ['HMAC-SHA256'], credentials: expect.stringMatching(/^.{32,}$/) });
    const buy = await buyOf(orch, created.body.id);
    expect(buy).toMatchObject({ governance: { agent_id: setup.governanceId, plan_id: 'plan-live' }, reports: { webhook: 'hmac', polled_because: null } });
    // Every request the seller received passed its schema check.
    expect(seller.stats().calls.filter((c) => !c.valid)).toEqual([]);

    const p1 = (await seller.reporting.fireNow(buy.media_buy_id))!;
    const p2 = (await seller.reporting.fireNow(buy.media_buy_id))!;
    expect([p1.auth, p1.final_status, p2.final_status]).toEqual(['hmac', 200, 200]);
    const adjusted = await seller.reporting.sendAdjusted(buy.media_buy_id, { periodIndex: 0, factor: 0.5 });
    expect(adjusted.final_status).toBe(200);
    await buyWhen(orch, buy.id, (b) => b.reports.received === 3);

    const deliveries = await eventually(async () => {
      const d = governance.deliveries('plan-live');
      return d.length === 3 ? d : undefined;
    });
    expect(deliveries.map((d) => d.reporting_period)).toEqual([p1.reporting_period, p2.reporting_period, p1.reporting_period]);
    const spendOf = (f: typeof p1) => (f.body.media_buy_deliveries as any[])[0].totals.spend;
    expect(deliveries.map((d) => d.spend)).toEqual([spendOf(p1), spendOf(p2), spendOf(adjusted)]);
    expect(new Set(deliveries.map((d) => d.idempotency_key)).size).toBe(3);
    // The restated period replaced its first report in the agent's ledger: delivered spend counts each period once.
    expect(deliveries[2]!.replaces).toBe(deliveries[0]!.outcome_id);
    expect(governance.stats().deliveredByPlan['plan-live']).toBeCloseTo(spendOf(p2) + spendOf(adjusted), 2);
    // The commitment came first, and each delivery was sent once (no retries were needed, none repeated).
    const outcomes = outcomesFor(governance, 'plan-live');
    expect(outcomes[0]).toMatchObject({ outcome: 'completed' });
    const rows = await orch.app.store.deliveryOutcomes.forBuy(buy.id);
    expect(rows.map((r) => r.status)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(rows.map((r) => JSON.parse(r.request).idempotency_key)).toEqual(deliveries.map((d) => d.idempotency_key));
    // The stored arguments keep the approval's token sealed.
    expect(rows.every((r) => !JSON.parse(r.request).governance_context.startsWith('ey'))).toBe(true);
  });

  it("polls a governed buy's delivery, sending no reporting webhook, when the tenant's settings say so", async () => {
    setup = await startGoverned({ seller: { reportClock: false, statusStepMs: 0, flightPeriods: 8 }, env: { ...LIVE_BUY_ENV, ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: '300' } });
    const { orch, governance, sellers } = setup;
    const seller = sellers[0]!;
    expect((await orch.api('PUT', '/v1/settings', { reporting: { governed_buys: 'polling' } })).body.reporting).toEqual({ frequency: 'daily', governed_buys: 'polling' });
    await syncPlan(setup, 'plan-polled');
    const governedBuy = { agent_id: setup.sellerIds[0], governance: { agent_id: setup.governanceId, plan_id: 'plan-polled' } };
    // Asking for a reporting webhook the tenant's settings leave out is a contradiction, refused before anything.
    const asked = await orch.api('POST', '/v1/media-buys', { ...governedBuy, request: governedRequest('sandbox_instant'), reporting: { frequency: 'hourly' } });
    expect([asked.status, asked.body.error.code]).toEqual([400, 'reporting_conflict']);
    const created = await orch.api('POST', '/v1/media-buys', { ...governedBuy, request: governedRequest('sandbox_instant', { end_time: new Date(Date.now() + 4 * HOUR).toISOString() }) });
    expect(created.status).toBe(202);
    const op = await waitForStatus(orch, created.body.id, ['completed']);
    expect(op.request.reporting_webhook).toBeUndefined();
    expect((governance.stats().checks[0]!.payload as any).reporting_webhook).toBeUndefined();
    const buy = await buyOf(orch, created.body.id);
    expect(buy.reports).toMatchObject({ webhook: 'none', polled_because: 'governed_buys_polled' });
    // Its delivery is read from the seller instead, and counts like a report.
    await eventually(async () => (sellerCalls(seller, 'get_media_buy_delivery', buy.media_buy_id).length > 0 ? true : undefined));
    expect(seller.stats().calls.filter((c) => !c.valid)).toEqual([]);
  });

  it('keeps the findings the governance agent answers a delivery with, and tells people once', async () => {
    setup = await startGoverned({ seller: { reportClock: false, statusStepMs: 0, flightPeriods: 8 }, env: LIVE_BUY_ENV });
    const { orch, governance, sellers } = setup;
    await syncPlan(setup, 'plan-over');
    const created = await orch.api('POST', '/v1/media-buys', {
      agent_id: setup.sellerIds[0],
      request: governedRequest('sandbox_instant', { end_time: new Date(Date.now() + 4 * HOUR).toISOString() }),
      governance: { agent_id: setup.governanceId, plan_id: 'plan-over' },
      reporting: { frequency: 'hourly' },
    });
    await waitForStatus(orch, created.body.id, ['completed']);
    const buy = await buyOf(orch, created.body.id);
    await sellers[0]!.reporting.runToEnd(buy.media_buy_id);
    // A re-measured period at twice its figures: the buy has now delivered more than it committed.
    const remeasured = await sellers[0]!.reporting.sendWindowUpdate(buy.media_buy_id, { periodIndex: 0, factor: 2 });
    expect(remeasured.final_status).toBe(200);
    const findings = await eventually(async () => {
      const n = await buyNotifications(orch, buy.id, 'media_buy.governance_findings');
      return n.length > 0 ? n : undefined;
    });
    expect(findings).toHaveLength(1);
    expect(findings[0].data.event.detail.findings[0]).toMatchObject({ category_id: 'budget_authority' });
    const rows = await orch.app.store.deliveryOutcomes.forBuy(buy.id);
    expect(rows.filter((r) => r.status === 'findings')).toHaveLength(1);
    expect(governance.deliveries('plan-over').filter((d) => d.status === 'findings')).toHaveLength(1);
  });
});
