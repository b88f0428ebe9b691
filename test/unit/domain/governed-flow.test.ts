/** The governed flow's pure rules: reading a decision, meeting conditions, what each answer leads to, the outcome report. */
import { describe, expect, it } from 'vitest';
import { applyConditions, canApplyUnattended, conditionPath } from '../../../src/domain/governance-conditions.js';
import { approvalUsable, readCheckReply } from '../../../src/domain/governance-decision.js';
import { afterDecision, committedBudgetOf, initialState, MAX_CONDITION_ROUNDS, outcomeRequest, presentGovernance, type GovernedState } from '../../../src/domain/governed-flow.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const later = (s: number) => new Date(NOW + s * 1000).toISOString();

describe('reading a check reply (AdCP spec, governance)', () => {
  it('takes verdict first, else a decision-valued status', () => {
    expect(readCheckReply({ status: 'completed', verdict: 'approved', governance_context: 't', expires_at: later(60) }, NOW).kind).toBe('approved');
    expect(readCheckReply({ status: 'approved', governance_context: 't', expires_at: later(60), check_id: 'chk_1' }, NOW)).toEqual({ kind: 'approved', token: 't', expiresAt: NOW + 60_000, checkId: 'chk_1' });
    expect(readCheckReply({ status: 'denied', findings: [{ category_id: 'x' }] }, NOW)).toMatchObject({ kind: 'denied', findings: [{ category_id: 'x' }] });
    expect(readCheckReply({ verdict: 'denied', status: 'approved', governance_context: 't', expires_at: later(60) }, NOW).kind).toBe('denied');
  });

  it('authorizes nothing without a token, without expires_at, once expired, or without a decision', () => {
    expect(readCheckReply({ status: 'approved', expires_at: later(60) }, NOW).kind).toBe('no_decision');
    expect(readCheckReply({ status: 'approved', governance_context: 't' }, NOW).kind).toBe('no_decision');
    expect(readCheckReply({ status: 'approved', governance_context: 't', expires_at: later(-1) }, NOW).kind).toBe('no_decision');
    expect(readCheckReply({ status: 'completed' }, NOW).kind).toBe('no_decision');
    expect(readCheckReply({ verdict: 'maybe', status: 'ok' }, NOW).kind).toBe('no_decision');
    expect(readCheckReply({ status: 'conditions', conditions: [{ reason: 'no field' }] }, NOW).kind).toBe('no_decision');
  });

  it('reads submitted / working with a task id as a human review to poll', () => {
    expect(readCheckReply({ status: 'submitted', task_id: 'tsk_1', check_id: 'chk_2' }, NOW)).toMatchObject({ kind: 'review', taskId: 'tsk_1', checkId: 'chk_2' });
    expect(readCheckReply({}, NOW, 'working', 'tsk_2')).toMatchObject({ kind: 'review', taskId: 'tsk_2' });
    expect(readCheckReply({ status: 'submitted' }, NOW).kind).toBe('no_decision');
  });

  it('an approval is usable until a margin before it expires (a quarter of its life, at most 5 s)', () => {
    const approval = { expires_at: NOW + 900_000, received_at: NOW };
    expect(approvalUsable(approval, NOW + 894_000)).toBe(true);
    expect(approvalUsable(approval, NOW + 895_500)).toBe(false);
    const short = { expires_at: NOW + 2_000, received_at: NOW };
    expect(approvalUsable(short, NOW + 1_400)).toBe(true);
    expect(approvalUsable(short, NOW + 1_600)).toBe(false);
    expect(approvalUsable(undefined, NOW)).toBe(false);
  });
});

describe('meeting conditions', () => {
  const payload = { idempotency_key: 'k'.repeat(16), end_time: '2032-01-01T00:00:00Z', packages: [{ product_id: 'p', budget: 5, end_time: '2032-01-01T00:00:00Z' }] };

  it('reads 3.0 payload-relative and 3.2 request-rooted fields', () => {
    expect(conditionPath('end_time')).toEqual(['end_time']);
    expect(conditionPath('payload.packages[0].end_time')).toEqual(['packages', 0, 'end_time']);
    expect(conditionPath('packages[x]')).toBeUndefined();
    expect(conditionPath('[0]')).toBeUndefined();
  });

  it('sets each required value, then lays a person’s params over them', () => {
    const applied = applyConditions(payload, [
      { field: 'end_time', required_value: '2030-12-31T23:59:59Z', reason: 'flight' },
      { field: 'payload.packages[0].end_time', required_value: '2030-12-31T23:59:59Z', reason: 'flight' },
    ]);
    expect(applied).toEqual({ payload: { ...payload, end_time: '2030-12-31T23:59:59Z', packages: [{ ...payload.packages[0], end_time: '2030-12-31T23:59:59Z' }] } });
    expect(payload.end_time).toBe('2032-01-01T00:00:00Z');
    const withParams = applyConditions(payload, [{ field: 'end_time', required_value: '2030-12-31T23:59:59Z', reason: 'flight' }], { end_time: '2030-06-30T00:00:00Z' });
    expect(withParams).toMatchObject({ payload: { end_time: '2030-06-30T00:00:00Z' } });
  });

  it('cannot meet a condition without a value unless a person gives it, nor move our fields or a missing package', () => {
    const open = [{ field: 'start_time', reason: 'pick a start' }];
    expect(applyConditions(payload, open)).toMatchObject({ problem: expect.stringMatching(/no required value/) });
    expect(applyConditions(payload, open, { start_time: '2027-01-01T00:00:00Z' })).toMatchObject({ payload: { start_time: '2027-01-01T00:00:00Z' } });
    expect(canApplyUnattended(open)).toBe(false);
    expect(applyConditions(payload, [{ field: 'idempotency_key', required_value: 'x', reason: '' }])).toHaveProperty('problem');
    expect(applyConditions(payload, [{ field: 'packages[3].end_time', required_value: 'x', reason: '' }])).toHaveProperty('problem');
    expect(applyConditions(payload, [], { plan_id: 'other' })).toHaveProperty('problem');
  });
});

describe('what a decision leads to', () => {
  const state = (extra: Partial<GovernedState> = {}): GovernedState => ({
    ...initialState({ agent_id: 'gov', plan_id: 'p', target_agent: 'http://seller/mcp', caller: 'http://us', tool: 'create_media_buy', apply_conditions: false }, NOW - 1000),
    ...extra,
  });
  const conditions = { kind: 'conditions' as const, conditions: [{ field: 'end_time', required_value: 'x', reason: 'r' }], findings: [], token: 'cont' };

  it('only an approval goes to the seller, with its token and expiry kept', () => {
    const move = afterDecision(state(), { kind: 'approved', token: 'tok', expiresAt: NOW + 60_000, checkId: 'chk' }, NOW);
    expect(move.move).toBe('send');
    expect(move.state).toMatchObject({ step: 'approved', approval: { token: 'tok', check_id: 'chk', expires_at: NOW + 60_000, received_at: NOW }, continuity: 'tok' });
    expect(JSON.stringify(presentGovernance(move.state))).not.toContain('tok');
  });

  it('denied ends it with the findings; a reply without a decision is retried, never sent', () => {
    const denied = afterDecision(state(), { kind: 'denied', findings: [{ category_id: 'budget_authority' }], explanation: 'over' }, NOW);
    expect(denied).toMatchObject({ move: 'reject', error: { code: 'GOVERNANCE_DENIED', message: 'over' }, state: { step: 'ended' } });
    expect(afterDecision(state(), { kind: 'no_decision', reason: 'x' }, NOW)).toMatchObject({ move: 'retry', state: { step: 'checking' } });
  });

  it('conditions ask a person, or apply at once when asked to and every value is stated; after the last round they end it', () => {
    expect(afterDecision(state(), conditions, NOW)).toMatchObject({ move: 'ask', state: { step: 'conditions', continuity: 'cont' } });
    expect(afterDecision(state({ apply_conditions: true }), conditions, NOW)).toMatchObject({ move: 'apply' });
    const open = { ...conditions, conditions: [{ field: 'start_time', reason: 'pick' }] };
    expect(afterDecision(state({ apply_conditions: true }), open, NOW).move).toBe('ask');
    expect(afterDecision(state({ rounds: MAX_CONDITION_ROUNDS }), conditions, NOW)).toMatchObject({ move: 'reject', error: { code: 'GOVERNANCE_CONDITIONS_UNMET' } });
  });

  it('a human review is polled', () => {
    expect(afterDecision(state(), { kind: 'review', taskId: 'tsk' }, NOW)).toMatchObject({ move: 'review', state: { step: 'reviewing', review: { task_id: 'tsk', polls: 0 } } });
  });
});

describe('the outcome report', () => {
  const approved: GovernedState = {
    ...initialState({ agent_id: 'gov', plan_id: 'p', target_agent: 't', caller: 'c', tool: 'create_media_buy', apply_conditions: false }, NOW),
    step: 'approved',
    approval: { check_id: 'chk_9', token: 'tok', expires_at: NOW + 1, received_at: NOW },
  };
  const request = { packages: [{ budget: 100 }, { budget: 50 }] };

  it('completed: the seller reference and what it committed (its own figure, else its packages, else what was asked)', () => {
    expect(outcomeRequest(approved, 'key-000000000000001', { status: 'completed', request, result: { media_buy_id: 'mb_1', packages: [{ budget: 120 }] } }).request).toEqual({
      idempotency_key: 'key-000000000000001',
      plan_id: 'p',
      check_id: 'chk_9',
      governance_context: 'tok',
      outcome: 'completed',
      seller_response: { seller_reference: 'mb_1', committed_budget: 120 },
    });
    expect(committedBudgetOf(request, { committed_budget: 90 })).toBe(90);
    expect(committedBudgetOf(request, {})).toBe(150);
    expect(committedBudgetOf({ total_budget: { amount: 70, currency: 'USD' } }, undefined)).toBe(70);
  });

  it('failed: the error, and nothing committed', () => {
    const r = outcomeRequest(approved, 'k', { status: 'failed', request, error: { code: 'PERMISSION_DENIED', message: 'bad token' } });
    expect(r).toEqual({ outcome: 'failed', request: expect.objectContaining({ outcome: 'failed', error: { code: 'PERMISSION_DENIED', message: 'bad token' } }) });
    expect(r.request).not.toHaveProperty('seller_response');
  });
});
