/** Where a waiting request's clock meets the row's timer (src/engine/input-timers.ts, nextCheckFor). */
import { describe, expect, it } from 'vitest';
import { creativeRejectedRequest } from '../../../src/domain/creative-request.js';
import { sellerInputRequest, spendApprovalRequest } from '../../../src/domain/input-request.js';
import { withExpiry } from '../../../src/domain/input-timers.js';
import { heldTimer, INPUT_TIMER_CHECK, inputTimerAt } from '../../../src/engine/input-timers.js';
import { nextCheckFor } from '../../../src/engine/observation-plan.js';

const t0 = Date.parse('2026-09-01T10:00:00Z');
const timing = { pollIntervalMs: 30_000, backupPollAfterMs: 600_000, workingTimeoutMs: 300_000, maxPolls: 2000, inputReminderMs: 60_000 };
const noJitter = () => 0;

describe('the timer of a row that waits for a person', () => {
  it('a held request: its clock alone, under a kind the scheduler never sends', () => {
    const held = spendApprovalRequest({ rule: 'approval_required', message: 'held' }, t0);
    expect(heldTimer(held, { firstAfterMs: 60_000 })).toEqual({ next_check_at: t0 + 60_000, check_kind: INPUT_TIMER_CHECK });
    const expiring = withExpiry(held, { spend_approval: { after_ms: 5_000, then: 'reject' } });
    expect(heldTimer(expiring, { firstAfterMs: 60_000 }).next_check_at).toBe(t0 + 5_000);
  });

  it("a seller's question: the backup poll is pulled in to the next reminder, and to the expiry when sooner", () => {
    const question = JSON.stringify(sellerInputRequest('input-required', { message: 'sign' }, false, t0));
    const row = { webhook_mode: 'rfc9421', poll_count: 0, task_id: 'task_1', needs_input: 1, input_request: question };
    expect(nextCheckFor('input-required', row, timing, t0, noJitter).next_check_at).toBe(t0 + 60_000);
    // After the first reminder the next is 2 min on: still sooner than the 10 min backup poll.
    expect(nextCheckFor('input-required', { ...row, reminded_at: t0 + 60_000, input_reminders: 1 }, timing, t0 + 60_000, noJitter).next_check_at).toBe(t0 + 180_000);
    const expiring = JSON.stringify(withExpiry(JSON.parse(question), { seller_input: { after_ms: 10_000, then: 'stall' } }));
    expect(nextCheckFor('input-required', { ...row, input_request: expiring }, timing, t0, noJitter).next_check_at).toBe(t0 + 10_000);
    // Nothing waits once an answer is on its way, or when the task moved on.
    expect(nextCheckFor('input-required', { ...row, answer: '{}' }, timing, t0, noJitter).next_check_at).toBe(t0 + 600_000);
    expect(nextCheckFor('submitted', { ...row, needs_input: 0 }, timing, t0, noJitter).next_check_at).toBe(t0 + 600_000);
    expect(inputTimerAt({ status: 'rejected', needs_input: 1, input_request: question }, { firstAfterMs: 60_000 })).toBeNull();
  });

  it('a rejected creative, asked on the sync that has ended: its clock runs on the ended operation until answered', () => {
    const rejected = creativeRejectedRequest([{ creative_id: 'cr_1', name: 'Banner', rejection_reason: 'wrong domain', package_ids: ['pkg_1'] }], { id: 'buy_1', media_buy_id: 'mb_1' }, t0);
    const row = { status: 'completed', needs_input: 1, input_request: JSON.stringify(rejected) };
    expect(inputTimerAt(row, { firstAfterMs: 60_000 })).toBe(t0 + 60_000);
    expect(inputTimerAt({ ...row, reminded_at: t0 + 60_000, input_reminders: 1 }, { firstAfterMs: 60_000 })).toBe(t0 + 180_000);
    expect(inputTimerAt({ ...row, answer: '{}' }, { firstAfterMs: 60_000 })).toBeNull();
    expect(inputTimerAt({ ...row, needs_input: 0 }, { firstAfterMs: 60_000 })).toBeNull();
  });
});
