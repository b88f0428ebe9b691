/**
 * The governed flow on PostgreSQL: a campaign with an approved buy, one needing
 * a person and a denied one, through plans, checks, the seller and the outcome
 * reports, on a database of its own (created and dropped by the test).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdminUrl, tempPostgres } from '../helpers/databases.js';
import { governedRequest, startGoverned, syncPlan, type GovernedSetup } from '../helpers/governed.js';
import { eventually } from '../helpers/orchestrator.js';

const suite = postgresAdminUrl ? describe : describe.skip;

suite('governed campaign on PostgreSQL', () => {
  let g: GovernedSetup;
  beforeAll(async () => {
    g = await startGoverned({ database: await tempPostgres() });
  });
  afterAll(async () => {
    await g?.close();
  });

  it('reaches done with the plan ledger matching the completed buys', async () => {
    await syncPlan(g, 'plan_pg', { flight: { start: '2026-01-01T00:00:00Z', end: '2030-12-31T23:59:59Z' } });
    expect((await g.orch.api('GET', '/v1/plans/plan_pg')).body).toMatchObject({ status: 'active', version: 1 });
    const pkg = (budget: number, extra: Record<string, unknown> = {}) => [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_usd_fixed', budget, ...extra }];
    const res = await g.orch.api('POST', '/v1/campaigns', {
      governance: { agent_id: g.governanceId, plan_id: 'plan_pg' },
      buys: [
        { agent_id: g.sellerIds[0], request: governedRequest('sandbox_instant', { end_time: '2030-06-30T00:00:00Z', packages: pkg(1_500) }) },
        { agent_id: g.sellerIds[0], request: governedRequest('sandbox_instant', { packages: pkg(2_500) }) },
        { agent_id: g.sellerIds[0], request: governedRequest('sandbox_instant', { end_time: '2030-06-30T00:00:00Z', packages: pkg(500, { targeting_overlay: { geo_countries: ['DE'] } }) }) },
      ],
    });
    expect(res.status).toBe(202);
    const asking = await eventually(async () => {
      const c = (await g.orch.api('GET', `/v1/campaigns/${res.body.id}`)).body;
      return c.buys.find((b: any) => b.needs_input);
    });
    expect((await g.orch.api('POST', `/v1/operations/${asking.id}/input`, { decision: 'approve' })).status).toBe(202);
    const done = await eventually(async () => {
      const c = (await g.orch.api('GET', `/v1/campaigns/${res.body.id}`)).body;
      return c.status === 'done' ? c : undefined;
    }, 30_000);
    expect(done.summary).toMatchObject({ done: 2, denied: 1 });
    expect(done.budget.committed).toBe(4_000);
    expect(g.governance.stats().committedByPlan.plan_pg).toBe(4_000);
    // The campaign reads done from its buys at once; its campaign.completed is written by the watcher's next sweep.
    const completed = await eventually(async () => {
      const notes = await g.orch.app.store.notifications.after(g.orch.tenantId, 0, 1000);
      const found = notes.filter((n) => n.type === 'campaign.completed');
      return found.length > 0 ? found : undefined;
    });
    expect(completed).toHaveLength(1);
  }, 60_000);
});
