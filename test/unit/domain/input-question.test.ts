/** Which question a request to a person is (src/domain/input-question.ts). */
import { describe, expect, it } from 'vitest';
import { sellerInputRequest, spendApprovalRequest, checkAnswer, type InputRequest } from '../../../src/domain/input-request.js';
import { questionIdOf, sameQuestion, sellerReasonOf, withQuestionId } from '../../../src/domain/input-question.js';
import { withExpiry } from '../../../src/domain/input-timers.js';

const t0 = Date.parse('2026-09-01T10:00:00Z');

describe('a question and its id', () => {
  const asked = sellerInputRequest('input-required', { message: 'sign the IO', reason: 'APPROVAL_REQUIRED' }, false, t0);

  it('is named by a digest of what it asks and when: the same again is the same id, another moment another id', () => {
    expect(sellerInputRequest('input-required', { message: 'sign the IO', reason: 'APPROVAL_REQUIRED' }, false, t0).id).toBe(asked.id);
    expect(sellerInputRequest('input-required', { message: 'sign the IO', reason: 'APPROVAL_REQUIRED' }, false, t0 + 1).id).not.toBe(asked.id);
    // Two different questions in the same millisecond are still told apart.
    expect(sellerInputRequest('input-required', { message: 'sign the PO', reason: 'APPROVAL_REQUIRED' }, false, t0).id).not.toBe(asked.id);
    expect(spendApprovalRequest({ rule: 'approval_required', message: 'held' }, t0).id).toMatch(/^q_[0-9a-f]{24}$/);
  });

  it('asks the same thing whenever it was asked and whatever its expiry', () => {
    const later = withExpiry(sellerInputRequest('input-required', { message: 'sign the IO', reason: 'APPROVAL_REQUIRED' }, false, t0 + 60_000), {
      seller_input: { after_ms: 5_000, then: 'reject' },
    });
    expect(sameQuestion(asked, later)).toBe(true);
  });

  it('asks something else when its message, reason, answers or status differ', () => {
    expect(sameQuestion(asked, sellerInputRequest('input-required', { message: 'sign the PO', reason: 'APPROVAL_REQUIRED' }, false, t0))).toBe(false);
    expect(sameQuestion(asked, sellerInputRequest('input-required', { message: 'sign the IO', reason: 'BUDGET_EXCEEDS_LIMIT' }, false, t0))).toBe(false);
    // A continuation that appears offers `approve`: the person is asked something they can answer differently.
    expect(sameQuestion(asked, sellerInputRequest('input-required', { message: 'sign the IO', reason: 'APPROVAL_REQUIRED' }, true, t0))).toBe(false);
    expect(sameQuestion(asked, sellerInputRequest('auth-required', { message: 'sign the IO', reason: 'APPROVAL_REQUIRED' }, false, t0))).toBe(false);
  });

  it('a request stored before ids existed is named by its requested_at, and compares by what it asks', () => {
    const legacy: InputRequest = { kind: 'seller_input', message: 'q', reason: 'input-required', allowed: ['reject', 'respond'], requested_at: '2026-09-01T10:00:00.000Z' };
    expect(questionIdOf(legacy)).toBe('2026-09-01T10:00:00.000Z');
    expect(questionIdOf(asked)).toBe(asked.id);
    expect(sameQuestion(legacy, sellerInputRequest('input-required', { message: 'q' }, false, t0 + 5))).toBe(true);
    expect(withQuestionId(legacy).id).toMatch(/^q_/);
  });

  it("the seller's reason is the request's reason, and the rules still read the seller status", () => {
    expect(asked).toMatchObject({ reason: 'APPROVAL_REQUIRED', seller_status: 'input-required', allowed: ['reject', 'respond'] });
    expect(checkAnswer(asked, { decision: 'approve' })).toMatchObject({ status: 409, code: 'no_continuation' });
    const auth = sellerInputRequest('auth-required', { reason: 'TOKEN_EXPIRED' }, false, t0);
    expect(checkAnswer(auth, { decision: 'approve' })?.message).toMatch(/update the agent's credentials/);
    // Older requests said the status only in `reason`.
    const legacyAuth: InputRequest = { kind: 'seller_input', message: 'q', reason: 'auth-required', allowed: ['reject'], requested_at: 'x' };
    expect(checkAnswer(legacyAuth, { decision: 'approve' })?.message).toMatch(/update the agent's credentials/);
  });
});

describe("the seller's reason from its reply", () => {
  it('is a non-empty string, trimmed and bounded; anything else is no reason', () => {
    expect(sellerReasonOf({ reason: ' APPROVAL_REQUIRED ' })).toBe('APPROVAL_REQUIRED');
    expect(sellerReasonOf({ reason: 'x'.repeat(1000) })).toHaveLength(200);
    expect(sellerReasonOf({ reason: '   ' })).toBeUndefined();
    expect(sellerReasonOf({ reason: { code: 1 } })).toBeUndefined();
    expect(sellerReasonOf(undefined)).toBeUndefined();
  });
});
