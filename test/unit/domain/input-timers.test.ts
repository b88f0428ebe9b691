/** The pure clock of a request waiting for a person (src/domain/input-timers.ts). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sellerInputRequest, spendApprovalRequest, isSameAnswer, type RecordedAnswer } from '../../../src/domain/input-request.js';
import {
  dueInputTimers,
  expiredForRejection,
  nextInputTimerAt,
  nextReminderAt,
  reminderGapMs,
  REMINDER_MAX_GAP_MS,
  withExpiry,
  type InputTimerState,
} from '../../../src/domain/input-timers.js';

const t0 = Date.parse('2026-09-01T10:00:00Z');
const R = 300_000;
const policy = { firstAfterMs: R };
const held = spendApprovalRequest({ rule: 'approval_required', message: 'held' }, t0);

/** Runs the clock as a scheduler that is always on time would: each reminder at the moment it is owed. */
function onTimeReminders(n: number, p = policy): number[] {
  const at: number[] = [];
  let state: InputTimerState = {};
  for (let i = 0; i < n; i++) {
    const next = nextReminderAt(held, state, p);
    const due = dueInputTimers(held, state, p, next);
    expect(due.remind).toBe(true);
    expect(dueInputTimers(held, state, p, next - 1).remind).toBe(false);
    at.push(next);
    state = { reminded_at: next, input_reminders: due.reminder };
  }
  return at;
}

describe('reminders', () => {
  it('first after R, then each gap twice the one before', () => {
    const at = onTimeReminders(4);
    expect(at.map((t) => t - t0)).toEqual([R, 3 * R, 7 * R, 15 * R]);
    const gaps = at.map((t, i) => t - (i === 0 ? t0 : at[i - 1]!));
    expect(gaps).toEqual([R, 2 * R, 4 * R, 8 * R]);
  });

  it('never more than a day apart (or R, when R is longer), and the doubling cannot overflow', () => {
    expect(reminderGapMs(1, policy)).toBe(R);
    expect(reminderGapMs(10, policy)).toBe(REMINDER_MAX_GAP_MS);
    expect(reminderGapMs(10_000, policy)).toBe(REMINDER_MAX_GAP_MS);
    expect(reminderGapMs(3, { firstAfterMs: 2 * REMINDER_MAX_GAP_MS })).toBe(2 * REMINDER_MAX_GAP_MS);
    const at = onTimeReminders(12);
    expect(at.at(-1)! - at.at(-2)!).toBe(REMINDER_MAX_GAP_MS);
  });

  it('a late reminder moves the rest along: the next gap counts from when it was sent (no burst after downtime)', () => {
    // The first was owed at t0+R but the service was down until t0+10R.
    const late = t0 + 10 * R;
    const due = dueInputTimers(held, {}, policy, late);
    expect(due).toMatchObject({ remind: true, reminder: 1, waitingMs: 10 * R, expire: null });
    const state = { reminded_at: late, input_reminders: 1 };
    expect(nextReminderAt(held, state, policy)).toBe(late + 2 * R);
    expect(dueInputTimers(held, state, policy, late + 1).remind).toBe(false);
  });

  it('a new request starts its own clock: reminders of an earlier one do not count', () => {
    const earlierReminder = { reminded_at: t0 - 1, input_reminders: 5 };
    expect(nextReminderAt(held, earlierReminder, policy)).toBe(t0 + R);
    // A row reminded before the count existed has had one.
    expect(nextReminderAt(held, { reminded_at: t0 + R, input_reminders: 0 }, policy)).toBe(t0 + 3 * R);
  });

  it('over random policies and clocks: reminders keep coming, never closer together than the gap before', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), fc.array(fc.integer({ min: 0, max: 5_000_000 }), { minLength: 1, maxLength: 30 }), (first, lateness) => {
        const p = { firstAfterMs: first };
        let state: InputTimerState = {};
        let lastGap = 0;
        let lastAt = t0;
        for (const late of lateness) {
          const owed = nextReminderAt(held, state, p);
          const gap = owed - lastAt;
          expect(gap).toBeGreaterThanOrEqual(lastGap);
          expect(gap).toBeLessThanOrEqual(Math.max(REMINDER_MAX_GAP_MS, first));
          const at = owed + late;
          const due = dueInputTimers(held, state, p, at);
          expect(due.remind).toBe(true);
          state = { reminded_at: at, input_reminders: due.reminder };
          lastGap = gap;
          lastAt = at;
        }
      }),
    );
  });
});

describe('expiry', () => {
  it('is stamped from the rule for the request kind; other kinds are left alone', () => {
    const rules = { spend_approval: { after_ms: 3_600_000, then: 'reject' as const } };
    expect(withExpiry(held, rules)).toEqual({ ...held, expires_at: '2026-09-01T11:00:00.000Z', on_expiry: 'reject' });
    const question = sellerInputRequest('input-required', { message: 'q' }, false, t0);
    expect(withExpiry(question, rules)).toEqual(question);
    expect(withExpiry(held, null)).toEqual(held);
  });

  it('reject: due at expires_at, with no reminder alongside; an answer from then on is too late', () => {
    const request = withExpiry(held, { spend_approval: { after_ms: 2 * R, then: 'reject' } });
    expect(nextInputTimerAt(request, {}, policy)).toBe(t0 + R);
    expect(nextInputTimerAt(request, { reminded_at: t0 + R, input_reminders: 1 }, policy)).toBe(t0 + 2 * R);
    expect(dueInputTimers(request, { reminded_at: t0 + R, input_reminders: 1 }, policy, t0 + 2 * R - 1).expire).toBeNull();
    expect(dueInputTimers(request, {}, policy, t0 + 5 * R)).toMatchObject({ expire: 'reject', remind: false });
    expect(expiredForRejection(request, t0 + 2 * R - 1)).toBeNull();
    expect(expiredForRejection(request, t0 + 2 * R)).toBe(t0 + 2 * R);
  });

  it('stall: due once; after it is acted on only reminders remain, and it never counts as too late', () => {
    const request = withExpiry(held, { spend_approval: { after_ms: R / 2, then: 'stall' } });
    expect(nextInputTimerAt(request, {}, policy)).toBe(t0 + R / 2);
    expect(dueInputTimers(request, {}, policy, t0 + R / 2)).toMatchObject({ expire: 'stall', remind: false });
    const acted = { input_expired_at: t0 + R / 2 };
    expect(dueInputTimers(request, acted, policy, t0 + R / 2 + 1).expire).toBeNull();
    expect(nextInputTimerAt(request, acted, policy)).toBe(t0 + R);
    expect(expiredForRejection(request, t0 + 100 * R)).toBeNull();
    // An expiry acted on for an earlier request does not count for this one.
    expect(dueInputTimers(request, { input_expired_at: t0 - 1 }, policy, t0 + R / 2).expire).toBe('stall');
  });

  it('an expiry without an action stalls: a person should look', () => {
    const request = { ...held, expires_at: new Date(t0 + 1000).toISOString() };
    expect(dueInputTimers(request, {}, policy, t0 + 1000).expire).toBe('stall');
  });

  it("the timer's rejection is never taken for a person's same answer", () => {
    const byTimer: RecordedAnswer = { decision: 'reject', message: 'expired', actor: 'timer', at: 'x', kind: 'spend_approval', expired_at: 'y' };
    expect(isSameAnswer(byTimer, { decision: 'reject', message: 'expired' }, 'timer')).toBe(false);
  });
});
