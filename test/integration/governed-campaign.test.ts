/**
 * A governed campaign across two sandbox sellers under one plan: each buy its
 * own governed operation with its own token; one denied, one needing a person,
 * one going submitted and completing by webhook. It reaches done, and the
 * plan's committed budget at the governance agent equals the sum of the
 * completed buys.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { governedRequest, startGoverned, syncPlan, type GovernedSetup } from '../helpers/governed.js';
import { eventually } from '../helpers/orchestrator.js';

let g: GovernedSetup;
beforeAll(async () => {
  g = await startGoverned({ sellers: 2, seller: { submittedDelayMs: 500 } });
});
afterAll(async () => {
  await g?.close();
});

it('runs every buy to its end, waits for a person where asked, and is done with the plan ledger matching the completed buys', async () => {
  await syncPlan(g, 'plan_campaign', { budget: { total: 50_000, currency: 'USD', reallocation_threshold: 5_000 }, flight: { start: '2026-01-01T00:00:00Z', end: '2030-12-31T23:59:59Z' } });
  const pkg = (product: string, budget: number, extra: Record<string, unknown> = {}) => [{ product_id: product, pricing_option_id: 'cpm_usd_fixed', budget, ...extra }];
  const within = { end_time: '2030-06-30T00:00:00Z' };
  const res = await g.orch.api('POST', '/v1/campaigns', {
    name: 'Fall launch',
    governance: { agent_id: g.governanceId, plan_id: 'plan_campaign' },
    buys: [
      { agent_id: g.sellerIds[0], request: governedRequest('sandbox_instant', { ...within, packages: pkg('sandbox_instant', 5_000) }) },
      // Runs past the flight: conditions, for a person.
      { agent_id: g.sellerIds[1], request: governedRequest('sandbox_instant', { end_time: '2031-06-30T00:00:00Z', packages: pkg('sandbox_instant', 7_000) }) },
      { agent_id: g.sellerIds[0], request: governedRequest('sandbox_submitted', { ...within, packages: pkg('sandbox_submitted', 3_000) }) },
      // Outside the plan's countries: denied.
      { agent_id: g.sellerIds[1], request: governedRequest('sandbox_instant', { ...within, packages: pkg('sandbox_instant', 2_000, { targeting_overlay: { geo_countries: ['FR'] } }) }) },
    ],
  });
  expect(res.status).toBe(202);
  const id = res.body.id as string;
  expect(res.body).toMatchObject({ name: 'Fall launch', plan_id: 'plan_campaign', budget: { planned: 17_000, committed: 0 } });
  expect(res.body.buys.map((b: any) => b.parent_id)).toEqual([id, id, id, id]);

  const waiting = await eventually(async () => {
    const c = (await g.orch.api('GET', `/v1/campaigns/${id}`)).body;
    return c.status === 'waiting_on_people' && c.summary.done === 2 && c.summary.denied === 1 ? c : undefined;
  }, 30_000);
  const asking = waiting.buys.find((b: any) => b.campaign_state === 'waiting_on_people');
  expect(asking.input_request.kind).toBe('governance_conditions');
  expect(waiting.buys[3]).toMatchObject({ status: 'rejected', campaign_state: 'denied', error: { code: 'GOVERNANCE_DENIED' } });

  const answered = await g.orch.api('POST', `/v1/operations/${asking.id}/input`, { decision: 'approve', message: 'end with the flight' });
  expect(answered.status).toBe(202);

  const done = await eventually(async () => {
    const c = (await g.orch.api('GET', `/v1/campaigns/${id}`)).body;
    return c.status === 'done' && c.completed_at ? c : undefined;
  }, 30_000);
  expect(done.summary).toEqual({ total: 4, done: 3, running: 0, waiting_on_people: 0, denied: 1, failed: 0, canceled: 0 });
  const completed = done.buys.filter((b: any) => b.status === 'completed');
  const sum = completed.reduce((s: number, b: any) => s + b.request.packages[0].budget, 0);
  expect(sum).toBe(15_000);
  expect(g.governance.stats().committedByPlan.plan_campaign).toBe(sum);
  expect(done.budget).toEqual({ planned: 17_000, committed: sum, remaining: 50_000 - sum, plan_committed: sum });

  // Each buy its own check and token, for its own seller.
  const checks = g.governance.stats().checks.filter((c) => c.plan_id === 'plan_campaign' && c.status === 'approved');
  expect(checks).toHaveLength(3);
  expect(new Set(checks.map((c) => c.check_id)).size).toBe(3);
  expect(checks.map((c) => c.audience).sort()).toEqual([g.sellers[0]!.url, g.sellers[0]!.url, g.sellers[1]!.url].sort());
  expect(g.sellers[0]!.stats().mediaBuysCreated).toBe(2);
  expect(g.sellers[1]!.stats().mediaBuysCreated).toBe(1);
  // Both sellers check every request against its schema: each one they received passed, reporting webhook and all.
  for (const seller of g.sellers) {
    expect(seller.stats().calls.filter((c) => !c.valid)).toEqual([]);
    for (const c of seller.stats().calls.filter((x) => x.tool === 'create_media_buy')) expect(c.args.reporting_webhook).toMatchObject({ authentication: { schemes: ['HMAC-SHA256'] } });
  }
  // The submitted one completed by the seller's webhook.
  const submitted = (await g.orch.api('GET', `/v1/operations/${done.buys[2].id}`)).body;
  expect(submitted.events.filter((e: any) => e.kind === 'transition').map((e: any) => [e.to, e.source])).toEqual([
    ['calling_adcp', 'call'],
    ['submitted', 'call'],
    ['completed', 'webhook'],
  ]);

  const notes = await eventually(async () => {
    const all = await g.orch.app.store.notifications.after(g.orch.tenantId, 0, 1000);
    const mine = all.filter((n) => n.type === 'campaign.completed' && JSON.parse(n.body).data.campaign.id === id);
    return mine.length > 0 ? mine : undefined;
  });
  expect(notes).toHaveLength(1);
  expect(JSON.parse(notes[0]!.body).data.campaign).toMatchObject({ status: 'done', budget: { committed: sum }, summary: { done: 3, denied: 1 } });
  // Another look at it changes nothing: told once.
  expect(await g.orch.app.campaignWatcher.settle(id)).toBe(false);

  const list = (await g.orch.api('GET', '/v1/campaigns')).body;
  expect(list.campaigns.map((c: any) => c.id)).toContain(id);
}, 90_000);
