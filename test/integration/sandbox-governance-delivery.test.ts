/**
 * The sandbox governance agent's delivery ledger over real HTTP, through the
 * project's AdCP client: report_plan_outcome `outcome: "delivery"` recorded
 * once per key, a restated period replacing the earlier report, delivered
 * spend beside committed (findings past it), and the ledger in
 * get_plan_audit_logs and the test accessor.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxGovernance, type SandboxGovernance } from '../../src/sandbox/governance/agent.js';
import { caller, governedBuy, intent, newKey, plan, type Caller } from '../helpers/governance.js';

const SELLER = 'http://127.0.0.1:4100/mcp';
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function start(protocol: 'mcp' | 'a2a' = 'mcp'): Promise<{ gov: SandboxGovernance; agent: Caller }> {
  const gov = await startSandboxGovernance();
  cleanups.push(() => gov.close());
  const agent = caller({ url: protocol === 'mcp' ? gov.url : gov.a2aUrl!, protocol });
  cleanups.push(() => agent.client.close());
  return { gov, agent };
}

/** A plan, an approved check for a 4 000 buy, and its completed outcome: what delivery is reported against. */
async function boughtBuy(agent: Caller, planId: string, committed = 4_000): Promise<{ check_id: string; governance_context: string }> {
  await agent.call('sync_plans', { idempotency_key: newKey(), plans: [plan(planId)] });
  const approval = (await agent.call('check_governance', intent(planId, governedBuy(planId, { packages: [{ product_id: 'sandbox_instant', budget: 4_000 }] }), SELLER))).data;
  const completed = await agent.call('report_plan_outcome', {
    idempotency_key: newKey(),
    plan_id: planId,
    check_id: approval.check_id,
    governance_context: approval.governance_context,
    outcome: 'completed',
    seller_response: { seller_reference: 'mb_1', committed_budget: committed },
  });
  expect(completed.data).toMatchObject({ status: 'accepted', committed_budget: committed });
  return { check_id: approval.check_id as string, governance_context: approval.governance_context as string };
}

const period = (day: number) => ({ start: `2030-01-0${day}T00:00:00Z`, end: `2030-01-0${day + 1}T00:00:00Z` });

function delivery(planId: string, governanceContext: string, day: number, spend: number): Record<string, unknown> {
  return {
    idempotency_key: newKey(),
    plan_id: planId,
    governance_context: governanceContext,
    outcome: 'delivery',
    delivery: { reporting_period: period(day), impressions: spend * 100, spend, cpm: 10 },
  };
}

describe('report_plan_outcome: delivery', () => {
  it('records each period once: a replay changes nothing, a restated period replaces the earlier report', async () => {
    const { gov, agent } = await start();
    const buy = await boughtBuy(agent, 'plan_delivery');
    const first = delivery('plan_delivery', buy.governance_context, 1, 1_000);
    const accepted = await agent.call('report_plan_outcome', first);
    expect(accepted.error).toBeUndefined();
    expect(accepted.data).toMatchObject({ status: 'accepted', plan_summary: { total_committed: 4_000, budget_remaining: 6_000 } });
    expect(accepted.data.committed_budget).toBeUndefined();
    expect(accepted.data.findings).toBeUndefined();

    const replay = await agent.call('report_plan_outcome', first);
    expect(replay.data).toMatchObject({ outcome_id: accepted.data.outcome_id, replayed: true });
    await agent.call('report_plan_outcome', delivery('plan_delivery', buy.governance_context, 2, 1_100));
    const restated = await agent.call('report_plan_outcome', delivery('plan_delivery', buy.governance_context, 1, 900));
    expect(restated.data.status).toBe('accepted');

    const ledger = gov.deliveries('plan_delivery');
    expect(ledger.map((r) => [r.reporting_period.start, r.spend, r.check_id])).toEqual([
      ['2030-01-01T00:00:00Z', 1_000, buy.check_id],
      ['2030-01-02T00:00:00Z', 1_100, buy.check_id],
      ['2030-01-01T00:00:00Z', 900, buy.check_id],
    ]);
    expect(ledger[0]!.superseded_by).toBe(restated.data.outcome_id);
    expect(ledger[2]!.replaces).toBe(accepted.data.outcome_id);
    const stats = gov.stats();
    expect(stats.deliveredByPlan.plan_delivery).toBe(2_000);
    expect(stats.committedByPlan.plan_delivery).toBe(4_000);
    expect(stats.outcomes.filter((o) => o.outcome === 'delivery').map((o) => [o.replayed, (o.delivery as any).spend])).toEqual([
      [false, 1_000],
      [true, 1_000],
      [false, 1_100],
      [false, 900],
    ]);

    const audit = await agent.call('get_plan_audit_logs', { plan_ids: ['plan_delivery'], include_entries: true });
    expect(audit.error).toBeUndefined();
    const [log] = audit.data.plans as Array<Record<string, any>>;
    expect(log!.budget).toMatchObject({ committed: 4_000 });
    expect(log!.summary.outcomes_reported).toBe(4);
    const entries = log!.entries.filter((e: any) => e.outcome === 'delivery');
    expect(entries).toHaveLength(3);
    expect(entries[0].explanation).toBe('Delivered 1000 (100000 impressions) in 2030-01-01T00:00:00Z – 2030-01-02T00:00:00Z.');
    expect((audit.data.ext as any).sandbox.delivery).toEqual([
      expect.objectContaining({ plan_id: 'plan_delivery', committed: 4_000, delivered_spend: 2_000, delivered_impressions: 200_000 }),
    ]);
    expect((audit.data.ext as any).sandbox.delivery[0].reports[0].superseded_by).toBe(restated.data.outcome_id);
  });

  it('answers findings when delivery passes what the buy or the plan committed, or the buy committed nothing', async () => {
    const { gov, agent } = await start();
    const buy = await boughtBuy(agent, 'plan_over', 1_500);
    expect((await agent.call('report_plan_outcome', delivery('plan_over', buy.governance_context, 1, 1_000))).data.status).toBe('accepted');
    const over = await agent.call('report_plan_outcome', delivery('plan_over', buy.governance_context, 2, 1_000));
    expect(over.data.status).toBe('findings');
    expect(over.data.findings).toEqual([
      expect.objectContaining({ category_id: 'budget_authority', severity: 'warning', explanation: 'Delivered spend 2000 exceeds the 1500 committed for this buy.' }),
      expect.objectContaining({ category_id: 'budget_authority', severity: 'critical' }),
    ]);

    // A check that was approved but never reported completed has committed nothing.
    const unsettled = (await agent.call('check_governance', intent('plan_over', governedBuy('plan_over'), SELLER))).data;
    const orphan = await agent.call('report_plan_outcome', delivery('plan_over', unsettled.governance_context as string, 1, 10));
    expect(orphan.data.status).toBe('findings');
    expect((orphan.data.findings as any[])[0].explanation).toMatch(/no committed spend/);
    expect(gov.deliveries('plan_over')).toHaveLength(3);
  });

  it('refuses a delivery outcome without delivery, period or a non-negative spend, and records nothing', async () => {
    const { gov, agent } = await start();
    const buy = await boughtBuy(agent, 'plan_bad_delivery');
    const base = delivery('plan_bad_delivery', buy.governance_context, 1, 100);
    for (const [change, field] of [
      [{ delivery: undefined }, 'delivery'],
      [{ delivery: { spend: 10 } }, 'delivery.reporting_period'],
      [{ delivery: { reporting_period: { start: '2030-01-02T00:00:00Z', end: '2030-01-01T00:00:00Z' }, spend: 1 } }, 'delivery.reporting_period'],
      [{ delivery: { reporting_period: period(1), spend: -5 } }, 'delivery.spend'],
    ] as const) {
      const r = await agent.call('report_plan_outcome', { ...base, idempotency_key: newKey(), ...change });
      expect(r.error, JSON.stringify(change)).toMatchObject({ code: 'INVALID_REQUEST', field });
    }
    expect(gov.deliveries()).toEqual([]);
  });

  it('over A2A as well', async () => {
    const { gov, agent } = await start('a2a');
    const buy = await boughtBuy(agent, 'plan_a2a_delivery');
    const r = await agent.call('report_plan_outcome', delivery('plan_a2a_delivery', buy.governance_context, 1, 250));
    expect(r.data.status).toBe('accepted');
    expect(gov.stats().deliveredByPlan.plan_a2a_delivery).toBe(250);
  });
});
