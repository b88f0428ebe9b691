/** The pure rules of a person's answer (src/domain/input-request.ts). */
import { describe, expect, it } from 'vitest';
import {
  checkAnswer,
  governanceConditionsRequest,
  isSameAnswer,
  mergeParams,
  sellerInputRequest,
  spendApprovalRequest,
  spendHold,
  type RecordedAnswer,
} from '../../../src/domain/input-request.js';

const now = Date.parse('2026-09-01T10:00:00Z');

describe('what each kind allows', () => {
  it('a seller question allows approve only with a continuation; auth-required only reject', () => {
    expect(sellerInputRequest('input-required', { message: 'sign the IO' }, true, now)).toEqual({
      id: expect.stringMatching(/^q_[0-9a-f]{24}$/),
      kind: 'seller_input',
      message: 'sign the IO',
      reason: 'input-required',
      seller_status: 'input-required',
      allowed: ['approve', 'reject', 'respond'],
      requested_at: '2026-09-01T10:00:00.000Z',
    });
    // The seller's own reason code, when it gives one, is the request's reason.
    expect(sellerInputRequest('input-required', { reason: 'APPROVAL_REQUIRED' }, false, now)).toMatchObject({ reason: 'APPROVAL_REQUIRED', seller_status: 'input-required' });
    expect(sellerInputRequest('input-required', {}, false, now).allowed).toEqual(['reject', 'respond']);
    expect(sellerInputRequest('auth-required', {}, true, now)).toMatchObject({ reason: 'auth-required', allowed: ['reject'] });
  });

  it('spend approval and governance conditions allow approve and reject', () => {
    expect(spendApprovalRequest({ rule: 'approval_required', message: 'held' }, now)).toMatchObject({ kind: 'spend_approval', allowed: ['approve', 'reject'] });
    const conditions = governanceConditionsRequest('apply these', [{ field: 'packages[0].budget', required_value: 1000, reason: 'cap' }], now);
    expect(conditions).toMatchObject({ kind: 'governance_conditions', allowed: ['approve', 'reject'], fields: [{ field: 'packages[0].budget', required_value: 1000, reason: 'cap' }] });
  });
});

describe('checkAnswer', () => {
  const withContinuation = sellerInputRequest('input-required', { message: 'q' }, true, now);
  const withoutContinuation = sellerInputRequest('input-required', { message: 'q' }, false, now);
  const authRequired = sellerInputRequest('auth-required', { message: 'q' }, false, now);
  const spend = spendApprovalRequest({ rule: 'approval_over', message: 'over' }, now);
  const governance = governanceConditionsRequest('apply', [], now);

  it('takes what each request allows', () => {
    expect(checkAnswer(withContinuation, { decision: 'approve' })).toBeNull();
    expect(checkAnswer(withContinuation, { decision: 'respond', params: { po_number: 'x' } })).toBeNull();
    expect(checkAnswer(withoutContinuation, { decision: 'respond', params: { po_number: 'x' } })).toBeNull();
    expect(checkAnswer(withoutContinuation, { decision: 'reject' })).toBeNull();
    expect(checkAnswer(spend, { decision: 'approve' })).toBeNull();
    expect(checkAnswer(spend, { decision: 'reject', message: 'no' })).toBeNull();
    expect(checkAnswer(governance, { decision: 'approve', params: { budget: 1 } })).toBeNull();
  });

  it('refuses what is not allowed with 409, naming no_continuation where that is why', () => {
    expect(checkAnswer(withoutContinuation, { decision: 'approve' })).toMatchObject({ status: 409, code: 'no_continuation' });
    expect(checkAnswer(authRequired, { decision: 'approve' })).toMatchObject({ status: 409, code: 'decision_not_allowed' });
    expect(checkAnswer(spend, { decision: 'respond', params: { a: 1 } })).toMatchObject({ status: 409, code: 'decision_not_allowed' });
  });

  it('finds bad input first (400), whatever the request allows', () => {
    expect(checkAnswer(withContinuation, { decision: 'respond' })).toMatchObject({ status: 400, code: 'params_required' });
    expect(checkAnswer(spend, { decision: 'respond' })).toMatchObject({ status: 400, code: 'params_required' });
    expect(checkAnswer(withContinuation, { decision: 'approve', params: { a: 1 } })).toMatchObject({ status: 400, code: 'params_not_allowed' });
    expect(checkAnswer(withContinuation, { decision: 'reject', params: { a: 1 } })).toMatchObject({ status: 400, code: 'params_not_allowed' });
    expect(checkAnswer(spend, { decision: 'reject' })).toMatchObject({ status: 400, code: 'message_required' });
    expect(checkAnswer(governance, { decision: 'reject', message: ' ' })).toMatchObject({ status: 400, code: 'message_required' });
    for (const reserved of ['idempotency_key', 'context', 'push_notification_config', 'governance_context']) {
      expect(checkAnswer(withContinuation, { decision: 'respond', params: { [reserved]: 'x' } })).toMatchObject({ status: 400, code: 'reserved_params' });
    }
  });
});

describe('the same answer again', () => {
  const first: RecordedAnswer = { decision: 'respond', params: { a: 1, b: { c: 2, d: 3 } }, message: 'm', actor: 'alice', at: 'x', kind: 'seller_input' };
  it('is the same decision, message and params (key order aside) from the same person', () => {
    expect(isSameAnswer(first, { decision: 'respond', params: { b: { d: 3, c: 2 }, a: 1 }, message: 'm' }, 'alice')).toBe(true);
    expect(isSameAnswer(first, { decision: 'respond', params: { a: 1, b: { c: 2, d: 3 } }, message: 'm' }, 'bob')).toBe(false);
    expect(isSameAnswer(first, { decision: 'respond', params: { a: 2, b: { c: 2, d: 3 } }, message: 'm' }, 'alice')).toBe(false);
    expect(isSameAnswer(first, { decision: 'respond', params: { a: 1, b: { c: 2, d: 3 } } }, 'alice')).toBe(false);
  });
});

describe('mergeParams', () => {
  it('lays corrections over the request: objects one level deep, arrays and scalars whole', () => {
    const original = { brand: { domain: 'a.com', brand_id: 'b1' }, packages: [{ product_id: 'p1' }, { product_id: 'p2' }], po_number: 'old', end_time: 'e' };
    expect(mergeParams(original, { brand: { domain: 'b.com' }, packages: [{ product_id: 'p3' }], po_number: 'new' })).toEqual({
      brand: { domain: 'b.com', brand_id: 'b1' },
      packages: [{ product_id: 'p3' }],
      po_number: 'new',
      end_time: 'e',
    });
    expect(original.brand.domain).toBe('a.com');
  });
});

describe('spendHold', () => {
  const threshold = { amount: 1000, currency: 'USD' };
  const packages = (...budgets: unknown[]) => ({ packages: budgets.map((budget) => ({ product_id: 'p', budget })) });

  it('holds when asked, whatever the amount', () => {
    expect(spendHold(packages(1), 'required', undefined)).toMatchObject({ rule: 'approval_required' });
  });
  it('without a threshold lets everything through', () => {
    expect(spendHold(packages(1e9), undefined, undefined)).toBeNull();
  });
  it('holds a buy over the threshold: the sum of package budgets, or total_budget', () => {
    expect(spendHold(packages(600, 400), undefined, threshold)).toBeNull();
    expect(spendHold(packages(600, 401), undefined, threshold)).toMatchObject({ rule: 'approval_over' });
    expect(spendHold({ total_budget: { amount: 1000, currency: 'USD' } }, undefined, threshold)).toBeNull();
    expect(spendHold({ total_budget: { amount: 1000.5, currency: 'usd' } }, undefined, threshold)?.message).toMatch(/1000.5 USD, over/);
  });
  it('fails closed: an unreadable budget or another currency is held', () => {
    expect(spendHold(packages(100, '50'), undefined, threshold)?.message).toMatch(/could not be read/);
    expect(spendHold({ total_budget: { amount: 'lots', currency: 'USD' } }, undefined, threshold)).not.toBeNull();
    expect(spendHold({ total_budget: { amount: 1, currency: 'EUR' } }, undefined, threshold)?.message).toMatch(/different currency/);
  });
});
