/**
 * The sandbox governance agent's async and bookkeeping side over real HTTP:
 * human review (ended by the configured delay, or by sandbox_review, seen by
 * polling the task), report_plan_outcome committing once per key, the audit
 * log, and the same tasks over A2A.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startSandboxGovernance, type SandboxGovernance, type SandboxGovernanceOptions } from '../../src/sandbox/governance/agent.js';
import { planHash } from '../../src/sandbox/governance/hashes.js';
import type { TaskReply } from '../../src/adcp/types.js';
import { caller, governedBuy, intent, newKey, plan, type Caller } from '../helpers/governance.js';

const SELLER = 'http://127.0.0.1:4100/mcp';
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function start(opts: SandboxGovernanceOptions = {}, protocol: 'mcp' | 'a2a' = 'mcp'): Promise<{ gov: SandboxGovernance; agent: Caller }> {
  const gov = await startSandboxGovernance(opts);
  cleanups.push(() => gov.close());
  const agent = caller({ url: protocol === 'mcp' ? gov.url : gov.a2aUrl!, protocol });
  cleanups.push(() => agent.client.close());
  return { gov, agent };
}

/** Polls the review task until it is completed (the project's client picks get_task_status). */
async function pollUntilDone(agent: Caller, taskId: string): Promise<TaskReply> {
  let last: TaskReply | undefined;
  await vi.waitFor(
    async () => {
      last = await agent.poll(taskId);
      expect(last.status).toBe('completed');
    },
    { timeout: 15_000, interval: 50 },
  );
  return last!;
}

describe('human review', () => {
  it('goes submitted with a task_id and, after the review delay, the poll carries the approval', async () => {
    const { gov, agent } = await start({ reviewDelayMs: 300 });
    await agent.call('sync_plans', { idempotency_key: newKey(), plans: [plan('plan_review', { human_review_required: true })] });
    const r = await agent.call('check_governance', intent('plan_review', governedBuy('plan_review'), SELLER));
    expect(r.status).toBe('submitted');
    expect(r.taskId).toEqual(expect.any(String));
    expect(r.data.governance_context).toBeUndefined();

    const done = await pollUntilDone(agent, r.taskId!);
    expect(done.data).toMatchObject({ status: 'approved', plan_id: 'plan_review', check_id: r.data.check_id });
    expect(done.data.governance_context).toEqual(expect.any(String));
    const stats = gov.stats();
    expect(stats.reviews).toEqual([expect.objectContaining({ task_id: r.taskId, resolved_by: 'delay', decision: 'approved' })]);
    expect(stats.pollsByTask[r.taskId!]).toBeGreaterThanOrEqual(1);
    expect(stats.checks.at(-1)).toMatchObject({ status: 'submitted' });
  });

  it('ends by the delay with a denial when the payload breaks a rule', async () => {
    const { agent } = await start({ reviewDelayMs: 100 });
    await agent.call('sync_plans', { idempotency_key: newKey(), plans: [plan('plan_review_big', { human_review_required: true })] });
    const big = governedBuy('plan_review_big', { packages: [{ product_id: 'sandbox_instant', budget: 50_000 }] });
    const r = await agent.call('check_governance', intent('plan_review_big', big, SELLER));
    const done = await pollUntilDone(agent, r.taskId!);
    expect(done.data).toMatchObject({ status: 'denied', findings: [expect.objectContaining({ category_id: 'budget_authority' })] });
  });

  it('waits for sandbox_review when there is no delay: denied or approved by the reviewer, once', async () => {
    const { gov, agent } = await start({ reviewDelayMs: null });
    await agent.call('sync_plans', { idempotency_key: newKey(), plans: [plan('plan_manual', { human_review_required: true })] });
    const a = await agent.call('check_governance', intent('plan_manual', governedBuy('plan_manual'), SELLER));
    const b = await agent.call('check_governance', intent('plan_manual', governedBuy('plan_manual'), SELLER));
    expect((await agent.poll(a.taskId!)).status).toBe('submitted');

    const reviewed = await agent.call('sandbox_review', { task_id: a.taskId, decision: 'denied', reason: 'Not this quarter.' });
    expect(reviewed.error).toBeUndefined();
    const denied = await pollUntilDone(agent, a.taskId!);
    expect(denied.data).toMatchObject({ status: 'denied', findings: [{ category_id: 'human_review', severity: 'critical', explanation: 'Not this quarter.' }] });
    const again = await agent.call('sandbox_review', { task_id: a.taskId, decision: 'approved' });
    expect(again.error).toMatchObject({ code: 'INVALID_STATE' });

    await gov.resolveReview(b.taskId!, 'approved');
    expect((await pollUntilDone(agent, b.taskId!)).data.status).toBe('approved');
    expect(gov.stats().reviews.map((x) => [x.resolved_by, x.decision])).toEqual([['tool', 'denied'], ['tool', 'approved']]);

    const listed = await agent.client.listTasks({ url: gov.url, protocol: 'mcp' }, { statuses: ['completed'] });
    expect(listed.tasks.map((t) => t.taskId).sort()).toEqual([a.taskId, b.taskId].sort());
  });
});

describe('report_plan_outcome', () => {
  it('commits a completed outcome once per idempotency_key, once per check, and nothing for a failed one', async () => {
    const { gov, agent } = await start();
    await agent.call('sync_plans', { idempotency_key: newKey(), plans: [plan('plan_ledger')] });
    const approve = async (budget: number) =>
      (await agent.call('check_governance', intent('plan_ledger', governedBuy('plan_ledger', { packages: [{ product_id: 'sandbox_instant', budget }] }), SELLER))).data;
    const first = await approve(3_000);
    const report = {
      idempotency_key: newKey(),
      plan_id: 'plan_ledger',
      check_id: first.check_id,
      governance_context: first.governance_context,
      outcome: 'completed',
      seller_response: { seller_reference: 'mb_first', committed_budget: 3_000 },
    };
    const accepted = await agent.call('report_plan_outcome', report);
    expect(accepted.data).toMatchObject({ status: 'accepted', committed_budget: 3_000, plan_summary: { total_committed: 3_000, budget_remaining: 7_000 } });
    expect(accepted.data.outcome_id).toEqual(expect.any(String));

    const replay = await agent.call('report_plan_outcome', report);
    expect(replay.data).toMatchObject({ outcome_id: accepted.data.outcome_id, committed_budget: 3_000, replayed: true });
    const changed = await agent.call('report_plan_outcome', { ...report, seller_response: { committed_budget: 9 } });
    expect(changed.error).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
    const twice = await agent.call('report_plan_outcome', { ...report, idempotency_key: newKey() });
    expect(twice.data).toMatchObject({ status: 'findings', committed_budget: 0, plan_summary: { total_committed: 3_000 } });

    const second = await approve(2_000);
    const failed = await agent.call('report_plan_outcome', {
      idempotency_key: newKey(),
      plan_id: 'plan_ledger',
      check_id: second.check_id,
      governance_context: second.governance_context,
      outcome: 'failed',
      error: { code: 'PERMISSION_DENIED', message: 'seller refused the token' },
    });
    expect(failed.data).toMatchObject({ status: 'accepted', committed_budget: 0, plan_summary: { total_committed: 3_000, budget_remaining: 7_000 } });

    const stats = gov.stats();
    expect(stats.committedByPlan.plan_ledger).toBe(3_000);
    expect(stats.outcomeCallsByKey[report.idempotency_key]).toBe(3);
    expect(stats.outcomes.filter((o) => o.idempotency_key === report.idempotency_key).map((o) => [o.committed, o.replayed])).toEqual([
      [3_000, false],
      [0, true],
      [0, false],
    ]);
  });

  it('refuses an outcome whose governance_context is not the check’s, and one for an unknown plan', async () => {
    const { agent } = await start();
    await agent.call('sync_plans', { idempotency_key: newKey(), plans: [plan('plan_refs')] });
    const a = (await agent.call('check_governance', intent('plan_refs', governedBuy('plan_refs'), SELLER))).data;
    const b = (await agent.call('check_governance', intent('plan_refs', governedBuy('plan_refs'), SELLER))).data;
    const base = { idempotency_key: newKey(), plan_id: 'plan_refs', outcome: 'completed', seller_response: { committed_budget: 1 } };
    const swapped = await agent.call('report_plan_outcome', { ...base, check_id: a.check_id, governance_context: b.governance_context });
    expect(swapped.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'governance_context' });
    const unknown = await agent.call('report_plan_outcome', { ...base, idempotency_key: newKey(), plan_id: 'plan_zzz', check_id: a.check_id, governance_context: a.governance_context });
    expect(unknown.error).toMatchObject({ code: 'PLAN_NOT_FOUND' });
  });
});

describe('get_plan_audit_logs', () => {
  it('reports budget, governed actions and entries that carry each check’s plan_hash', async () => {
    const { agent } = await start();
    const supplied = plan('plan_audit');
    await agent.call('sync_plans', { idempotency_key: newKey(), plans: [supplied] });
    const ok = (await agent.call('check_governance', intent('plan_audit', governedBuy('plan_audit'), SELLER))).data;
    await agent.call('check_governance', intent('plan_audit', governedBuy('plan_audit', { packages: [{ product_id: 'x', budget: 99_999 }] }), SELLER));
    await agent.call('report_plan_outcome', {
      idempotency_key: newKey(),
      plan_id: 'plan_audit',
      check_id: ok.check_id,
      governance_context: ok.governance_context,
      outcome: 'completed',
      seller_response: { seller_reference: 'mb_audit', committed_budget: 4_000 },
    });
    const r = await agent.call('get_plan_audit_logs', { plan_ids: ['plan_audit'], include_entries: true });
    const [log] = r.data.plans as Array<Record<string, any>>;
    expect(log).toMatchObject({
      plan_id: 'plan_audit',
      plan_version: 1,
      budget: { authorized: 10_000, committed: 4_000, remaining: 6_000, utilization_pct: 40 },
      governed_actions: [{ governance_context: ok.governance_context, status: 'completed', committed: 4_000, check_count: 1, seller_reference: 'mb_audit' }],
      summary: { checks_performed: 2, outcomes_reported: 1, statuses: { approved: 1, denied: 1, conditions: 0 } },
    });
    expect(log.entries.map((e: Record<string, unknown>) => e.type)).toEqual(['check', 'check', 'outcome']);
    expect(log.entries[0].plan_hash).toBe(planHash(supplied));
  });
});

describe('over A2A', () => {
  it('syncs a plan and approves a check through the A2A endpoint', async () => {
    const { agent } = await start({}, 'a2a');
    const synced = await agent.call('sync_plans', { idempotency_key: newKey(), plans: [plan('plan_a2a')] });
    expect(synced.data).toMatchObject({ plans: [{ plan_id: 'plan_a2a', status: 'active', version: 1 }] });
    const r = await agent.call('check_governance', intent('plan_a2a', governedBuy('plan_a2a'), SELLER));
    expect(r.data).toMatchObject({ status: 'approved', governance_context: expect.any(String) });
  });
});
