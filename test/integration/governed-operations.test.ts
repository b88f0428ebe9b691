/**
 * Governed operations over real HTTP on loopback, against the sandbox
 * governance agent and a sandbox seller that verifies its tokens: for each
 * answer (approved, denied, conditions then approved, a human review) what the
 * seller received, or that it received nothing, and what report_plan_outcome
 * was sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedPayloads, governedBuy, governedRequest, jcs, outcomesFor, sellerReceived, startGoverned, syncPlan, waitForStep, type GovernedSetup } from '../helpers/governed.js';
import { eventually, waitForStatus } from '../helpers/orchestrator.js';

let g: GovernedSetup;

beforeAll(async () => {
  g = await startGoverned();
});
afterAll(async () => {
  await g?.close();
});

const kinds = (op: any) => op.events.map((e: any) => e.kind);

describe('approved', () => {
  it('sends the seller exactly the checked arguments with the token, then reports the committed budget', async () => {
    await syncPlan(g, 'plan_ok');
    const created = await governedBuy(g, 'plan_ok', governedRequest());
    expect(created.status).toBe(202);
    const op = await waitForStep(g.orch, created.body.id, 'reported');
    expect(op.status).toBe('completed');

    // The intent check's payload is, after JCS, byte for byte the arguments the seller logged,
    // minus governance_context. Both carry plan_id: the 3.0 payload is "the exact seller
    // arguments", and the sandbox agent and seller both hash it with plan_id in it (only
    // context and governance_context are left out), so plan_id is not removed from either side.
    const [received] = sellerReceived(g.sellers[0]!, op.idempotency_key);
    expect(received).toBeDefined();
    const { governance_context: token, ...sent } = received!;
    expect(typeof token).toBe('string');
    expect(sent.plan_id).toBe('plan_ok');
    const [checked] = checkedPayloads(g.governance, op.idempotency_key);
    expect(jcs(checked!.payload)).toBe(jcs(sent));
    expect(checked!.audience).toBe(g.sellers[0]!.url);
    expect(g.sellers[0]!.stats().governanceRefusals).toEqual([]);
    expect(g.sellers[0]!.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);

    // The outcome: completed with the seller's reference and committed budget, once.
    const outcomes = outcomesFor(g.governance, 'plan_ok');
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ outcome: 'completed', committed: 4_000, check_id: checked!.check_id, replayed: false });
    expect(op.governance).toMatchObject({
      agent_id: g.governanceId,
      plan_id: 'plan_ok',
      step: 'reported',
      check: { decision: 'approved', check_id: checked!.check_id },
      outcome: { outcome: 'completed', status: 'accepted', committed_budget: 4_000, plan_summary: { total_committed: 4_000, budget_remaining: 6_000 } },
    });
    expect(JSON.stringify(op)).not.toContain(token as string);
    // At rest the token is sealed: the stored state (approval, lineage, outcome request) holds
    // no trace of it, while the seller and the outcome report got it in clear.
    const stored = (await g.orch.app.store.operations.get(op.id))!.governance!;
    expect(stored).not.toContain(token as string);
    expect(stored).not.toContain((token as string).split('.')[1]!);
    const state = JSON.parse(stored);
    for (const kept of [state.approval.token, state.continuity, state.outcome.request.governance_context]) expect(kept).toMatch(/^v1\./);
    expect(g.orch.app.secrets.open(state.approval.token)).toBe(token);
    expect(kinds(op)).toEqual(expect.arrayContaining(['governance_decision', 'outcome_due', 'outcome_reported']));
    expect(g.governance.stats().outcomeCallsByKey[op.governance.outcome.idempotency_key]).toBe(1);
  });
});

describe('the seller fails', () => {
  it('reports outcome failed with the seller error, committing nothing', async () => {
    await syncPlan(g, 'plan_fail');
    const created = await governedBuy(g, 'plan_fail', governedRequest('sandbox_failed'));
    const op = await waitForStep(g.orch, created.body.id, 'reported');
    expect(op.status).toBe('failed');
    expect(sellerReceived(g.sellers[0]!, op.idempotency_key)).toHaveLength(1);
    expect(op.governance.outcome).toMatchObject({ outcome: 'failed', status: 'accepted', committed_budget: 0, error: null });
    expect(outcomesFor(g.governance, 'plan_fail')).toMatchObject([{ outcome: 'failed', committed: 0 }]);
    expect(op.events.find((e: any) => e.kind === 'outcome_due')).toMatchObject({ detail: { outcome: 'failed' } });
    expect(g.governance.stats().committedByPlan.plan_fail ?? 0).toBe(0);
    // The report as sent (stored once, resent byte for byte): outcome failed with the seller's error.
    const stored = JSON.parse((await g.orch.app.store.operations.get(op.id))!.governance!).outcome.request;
    expect(stored).toMatchObject({ plan_id: 'plan_fail', outcome: 'failed', error: { code: 'BUDGET_TOO_LOW' }, check_id: op.governance.check.check_id, idempotency_key: op.governance.outcome.idempotency_key });
    expect(typeof stored.governance_context).toBe('string');
  });
});

describe('denied', () => {
  it('ends rejected with the findings, tells people, sends the seller nothing and reports nothing', async () => {
    await syncPlan(g, 'plan_geo');
    const request = governedRequest('sandbox_instant', {
      packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_usd_fixed', budget: 1_000, targeting_overlay: { geo_countries: ['FR'] } }],
    });
    const created = await governedBuy(g, 'plan_geo', request);
    const op = await waitForStatus(g.orch, created.body.id, ['rejected', 'completed', 'failed']);
    expect(op.status).toBe('rejected');
    expect(op.error).toMatchObject({ code: 'GOVERNANCE_DENIED', details: { findings: [expect.objectContaining({ category_id: 'geo_compliance' })] } });
    expect(op.governance).toMatchObject({ step: 'ended', check: { decision: 'denied' }, outcome: null });
    expect(sellerReceived(g.sellers[0]!, op.idempotency_key)).toEqual([]);
    expect(g.sellers[0]!.stats().calls.filter((c) => c.idempotency_key === op.idempotency_key)).toEqual([]);
    expect(outcomesFor(g.governance, 'plan_geo')).toEqual([]);
    const notified = await g.orch.app.store.notifications.after(g.orch.tenantId, 0, 1000);
    expect(notified.some((n) => n.type === 'operation.rejected' && n.operation_id === op.id)).toBe(true);
  });
});

describe('conditions', () => {
  it('asks a person; approving applies the required values and re-checks under a new key; the seller gets the changed request', async () => {
    await syncPlan(g, 'plan_flight', { flight: { start: '2026-01-01T00:00:00Z', end: '2030-12-31T23:59:59Z' } });
    const created = await governedBuy(g, 'plan_flight', governedRequest('sandbox_instant', { end_time: '2031-06-30T00:00:00Z' }));
    const waiting = await eventually(async () => {
      const r = await g.orch.api('GET', `/v1/operations/${created.body.id}`);
      return r.body.needs_input ? r.body : undefined;
    });
    expect(waiting.status).toBe('requested');
    expect(waiting.input_request).toMatchObject({
      kind: 'governance_conditions',
      allowed: ['approve', 'reject'],
      fields: [{ field: 'end_time', required_value: '2030-12-31T23:59:59Z' }],
    });
    const firstKey = waiting.idempotency_key;
    expect(sellerReceived(g.sellers[0]!, firstKey)).toEqual([]);

    const answered = await g.orch.api('POST', `/v1/operations/${created.body.id}/input`, { decision: 'approve', message: 'fine, end with the flight' });
    expect(answered.status).toBe(202);
    const op = await waitForStep(g.orch, created.body.id, 'reported');
    expect(op.status).toBe('completed');
    expect(op.idempotency_key).not.toBe(firstKey);
    expect(op.request.end_time).toBe('2030-12-31T23:59:59Z');
    expect(op.governance).toMatchObject({ rounds: 1, checks: 2, check: { decision: 'approved' } });
    const [received] = sellerReceived(g.sellers[0]!, op.idempotency_key);
    expect(received!.end_time).toBe('2030-12-31T23:59:59Z');
    const { governance_context: _t, ...sent } = received!;
    expect(jcs(checkedPayloads(g.governance, op.idempotency_key)[0]!.payload)).toBe(jcs(sent));
    // The re-check follows the lineage of the conditions answer.
    const checks = g.governance.stats().checks.filter((c) => c.plan_id === 'plan_flight');
    expect(checks.map((c) => [c.status, c.recheck])).toEqual([
      ['conditions', false],
      ['approved', true],
    ]);
    expect(outcomesFor(g.governance, 'plan_flight')).toMatchObject([{ outcome: 'completed', committed: 4_000 }]);
    const answeredEvent = op.events.find((e: any) => e.kind === 'answered');
    expect(answeredEvent).toMatchObject({ detail: { kind: 'governance_conditions', decision: 'approve' } });
  });

  it('with apply_conditions: true applies them at once, with nobody asked', async () => {
    await syncPlan(g, 'plan_auto', { flight: { start: '2026-01-01T00:00:00Z', end: '2030-06-30T00:00:00Z' } });
    const created = await governedBuy(g, 'plan_auto', governedRequest(), { apply_conditions: true });
    const op = await waitForStep(g.orch, created.body.id, 'reported');
    expect(op.status).toBe('completed');
    expect(op.events.some((e: any) => e.kind === 'input_requested')).toBe(false);
    expect(op.events.find((e: any) => e.kind === 'conditions_applied')).toMatchObject({ detail: { by: 'apply_conditions' } });
    expect(sellerReceived(g.sellers[0]!, op.idempotency_key)[0]!.end_time).toBe('2030-06-30T00:00:00Z');
  });

  it('conditions still not met after three rounds: it ends rejected and nothing is sent', async () => {
    await syncPlan(g, 'plan_rounds', { flight: { start: '2026-01-01T00:00:00Z', end: '2030-06-30T00:00:00Z' } });
    const created = await governedBuy(g, 'plan_rounds', governedRequest());
    const keys = new Set<string>();
    for (let round = 1; round <= 3; round++) {
      const waiting = await eventually(async () => {
        const r = (await g.orch.api('GET', `/v1/operations/${created.body.id}`)).body;
        return r.needs_input && r.governance.rounds === round - 1 ? r : undefined;
      });
      keys.add(waiting.idempotency_key);
      // The person insists on an end past the flight: the conditions are not met.
      const res = await g.orch.api('POST', `/v1/operations/${created.body.id}/input`, { decision: 'approve', params: { end_time: '2031-01-01T00:00:00Z' } });
      expect(res.status).toBe(202);
    }
    const op = await waitForStatus(g.orch, created.body.id, ['rejected', 'completed']);
    expect(op.status).toBe('rejected');
    expect(op.governance).toMatchObject({ rounds: 3, checks: 4, step: 'ended' });
    expect(op.error).toMatchObject({ code: 'GOVERNANCE_DENIED', details: { findings: expect.arrayContaining([expect.objectContaining({ category_id: 'negotiation_limit' })]) } });
    keys.add(op.idempotency_key);
    expect(keys.size).toBe(4);
    for (const key of keys) expect(sellerReceived(g.sellers[0]!, key)).toEqual([]);
    expect(outcomesFor(g.governance, 'plan_rounds')).toEqual([]);
  });

  it('approving with params that cannot meet them is a 400 that changes nothing', async () => {
    await syncPlan(g, 'plan_badparams', { flight: { start: '2026-01-01T00:00:00Z', end: '2030-06-30T00:00:00Z' } });
    const created = await governedBuy(g, 'plan_badparams', governedRequest());
    const waiting = await eventually(async () => {
      const r = (await g.orch.api('GET', `/v1/operations/${created.body.id}`)).body;
      return r.needs_input ? r : undefined;
    });
    const res = await g.orch.api('POST', `/v1/operations/${created.body.id}/input`, { decision: 'approve', params: { plan_id: 'other' } });
    expect(res.status).toBe(400);
    const after = (await g.orch.api('GET', `/v1/operations/${created.body.id}`)).body;
    expect(after).toMatchObject({ needs_input: true, idempotency_key: waiting.idempotency_key, updated_at: waiting.updated_at });
  });

  it('a person can reject them: rejected, nothing sent, nothing reported', async () => {
    await syncPlan(g, 'plan_refuse', { flight: { start: '2026-01-01T00:00:00Z', end: '2030-06-30T00:00:00Z' } });
    const created = await governedBuy(g, 'plan_refuse', governedRequest());
    await eventually(async () => ((await g.orch.api('GET', `/v1/operations/${created.body.id}`)).body.needs_input ? true : undefined));
    const res = await g.orch.api('POST', `/v1/operations/${created.body.id}/input`, { decision: 'reject', message: 'not for this flight' });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('rejected');
    expect(sellerReceived(g.sellers[0]!, res.body.idempotency_key)).toEqual([]);
    expect(outcomesFor(g.governance, 'plan_refuse')).toEqual([]);
  });
});

describe('human review', () => {
  it('goes async at the agent, is polled until it is approved, then the seller is called and the outcome reported', async () => {
    await syncPlan(g, 'plan_review', { human_review_required: true });
    const created = await governedBuy(g, 'plan_review', governedRequest('sandbox_submitted'));
    const reviewing = await waitForStep(g.orch, created.body.id, 'reviewing');
    expect(reviewing.status).toBe('requested');
    expect(reviewing.governance.check).toMatchObject({ decision: 'submitted', task_id: expect.any(String) });
    const taskId = reviewing.governance.check.task_id;
    await eventually(async () => ((g.governance.stats().pollsByTask[taskId] ?? 0) >= 1 ? true : undefined));
    expect(sellerReceived(g.sellers[0]!, reviewing.idempotency_key)).toEqual([]);

    await g.governance.resolveReview(taskId, 'approved');
    const op = await waitForStep(g.orch, created.body.id, 'reported');
    expect(op.status).toBe('completed');
    // sandbox_submitted: the seller went submitted and completed by webhook.
    expect(op.events.filter((e: any) => e.kind === 'transition').map((e: any) => e.to)).toEqual(['calling_adcp', 'submitted', 'completed']);
    expect(op.governance.check).toMatchObject({ decision: 'approved', task_id: taskId });
    expect(sellerReceived(g.sellers[0]!, op.idempotency_key)).toHaveLength(1);
    expect(outcomesFor(g.governance, 'plan_review')).toMatchObject([{ outcome: 'completed', committed: 4_000 }]);
  });
});
