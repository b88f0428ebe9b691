/**
 * What an observation of a seller's question writes (src/engine/observation-plan.ts with
 * src/engine/input-requests.ts): a question seen again keeps its requested_at and id,
 * another question replaces it, and a question with no task id to poll has the request's
 * clock as its only timer (never a poll that turns into a resend).
 */
import { describe, expect, it } from 'vitest';
import { planObservation, type TaskObservation } from '../../../src/engine/observation-plan.js';
import { nothingToPollPlan } from '../../../src/engine/work-plans.js';
import { INPUT_TIMER_CHECK, inputTimerAt } from '../../../src/engine/input-timers.js';
import { newOperationRow } from '../../../src/store/operation-row.js';
import type { OperationRow } from '../../../src/store/operations-repo.js';
import type { InputRequest } from '../../../src/domain/input-request.js';

const t0 = Date.parse('2026-09-01T10:00:00Z');
const timing = { pollIntervalMs: 100, backupPollAfterMs: 100, workingTimeoutMs: 1_000, maxPolls: 2000, inputReminderMs: 60_000 };
const noJitter = () => 0;
const asked: TaskObservation = { status: 'input-required', source: 'call', message: 'sign the IO', data: { status: 'input-required', reason: 'APPROVAL_REQUIRED', message: 'sign the IO' } };

function sent(overrides: Partial<OperationRow> = {}): OperationRow {
  return newOperationRow(
    { id: 'op_1', tenant_id: 't', agent_id: 'a', type: 'create_media_buy', idempotency_key: 'key_0123456789abcdef', request_body: '{}', created_at: t0 },
    { status: 'calling_adcp', webhook_mode: 'rfc9421', ...overrides },
  );
}

/** The row as the plan leaves it. */
function apply(row: OperationRow, obs: TaskObservation, now: number): { row: OperationRow; events: string[] } {
  const plan = planObservation(row, obs, timing, now, noJitter);
  return { row: { ...row, ...plan.patch } as OperationRow, events: (plan.events ?? []).map((e) => e.kind) };
}
const requestOf = (row: OperationRow) => JSON.parse(row.input_request!) as InputRequest;

describe("a seller's question with no task id (an MCP input-required without task_id)", () => {
  it("waits for the person: its only timer is the request's clock, never a poll", () => {
    const { row } = apply(sent(), asked, t0);
    expect(row).toMatchObject({ status: 'input-required', needs_input: 1, task_id: null, check_kind: INPUT_TIMER_CHECK, next_check_at: t0 + 60_000 });
    expect(requestOf(row)).toMatchObject({ reason: 'APPROVAL_REQUIRED', message: 'sign the IO', seller_status: 'input-required', allowed: ['reject', 'respond'] });
    // With a task id the backup poll stays (pulled in to the reminder when that comes first).
    const tracked = apply(sent(), { ...asked, taskId: 'task_1' }, t0).row;
    expect(tracked).toMatchObject({ check_kind: 'poll', next_check_at: t0 + 100 });
  });

  it('a timer stored as a poll before this rule is turned into the clock, not a resend; other rows with nothing to poll are resent', () => {
    const { row } = apply(sent(), asked, t0);
    const legacy = { ...row, check_kind: 'poll', next_check_at: t0 + 100 };
    expect(nothingToPollPlan(legacy, timing, t0 + 100, noJitter).patch).toEqual({ next_check_at: t0 + 60_000, check_kind: INPUT_TIMER_CHECK });
    expect(nothingToPollPlan(sent({ status: 'submitted' }), timing, t0 + 100, noJitter).patch).toEqual({ check_kind: 'send', next_check_at: t0 + 100 });
  });
});

describe('requested_at changes only when the question does', () => {
  const first = apply(sent(), { ...asked, taskId: 'task_1' }, t0).row;
  const question = requestOf(first);

  it('the same question seen again (poll, webhook, reconcile) keeps its requested_at, id and reminders', () => {
    const reminded = { ...first, reminded_at: t0 + 60_000, input_reminders: 1 };
    for (const source of ['poll', 'webhook', 'reconcile'] as const) {
      const again = apply(reminded, { status: 'input-required', source, taskId: 'task_1', message: 'sign the IO' }, t0 + 90_000);
      expect(again.row.input_request).toBe(first.input_request);
      expect(again.events).toEqual([]);
      // The reminder already sent still counts: the next is the second, 2 min after the first.
      expect(inputTimerAt(again.row, { firstAfterMs: 60_000 })).toBe(t0 + 60_000 + 120_000);
    }
    // A poll carries no reason, a webhook may carry no message: what it leaves out is not a change.
    const bare = apply(first, { status: 'input-required', source: 'poll', taskId: 'task_1' }, t0 + 5_000);
    expect(bare.row.input_request).toBe(first.input_request);
  });

  it('a resend answered with the same question keeps it too', () => {
    const resent = { ...first, status: 'calling_adcp' };
    const again = apply(resent, { ...asked, taskId: 'task_1' }, t0 + 30_000);
    expect(again.row.status).toBe('input-required');
    expect(requestOf(again.row)).toEqual(question);
  });

  it('another question replaces it: a new id and requested_at, an input_requested event, and the reminders start afresh', () => {
    const reminded = { ...first, reminded_at: t0 + 60_000, input_reminders: 1 };
    const changed = apply(reminded, { status: 'input-required', source: 'webhook', taskId: 'task_1', message: 'now sign the PO too' }, t0 + 90_000);
    const next = requestOf(changed.row);
    expect(next).toMatchObject({ message: 'now sign the PO too', reason: 'APPROVAL_REQUIRED', requested_at: new Date(t0 + 90_000).toISOString() });
    expect(next.id).not.toBe(question.id);
    expect(changed.events).toEqual(['input_requested']);
    // Reminders count from the new question: its first is a full interval after it.
    expect(inputTimerAt(changed.row, { firstAfterMs: 60_000 })).toBe(t0 + 90_000 + 60_000);
    const plan = planObservation(reminded, { status: 'input-required', source: 'webhook', taskId: 'task_1', message: 'now sign the PO too' }, timing, t0 + 90_000, noJitter);
    expect(plan.events?.[0]?.detail).toMatchObject({ message: 'now sign the PO too', replaces: question.id });
    // A new reason code is another question as well.
    const recoded = apply(first, { status: 'input-required', source: 'call', taskId: 'task_1', message: 'sign the IO', data: { reason: 'BUDGET_EXCEEDS_LIMIT' } }, t0 + 1);
    expect(requestOf(recoded.row).reason).toBe('BUDGET_EXCEEDS_LIMIT');
    expect(requestOf(recoded.row).id).not.toBe(question.id);
  });

  it('an answered question is not rewritten by news that the task still waits', () => {
    const answered = { ...first, needs_input: 0, input_request: null, answer: JSON.stringify({ decision: 'approve', actor: 'a', at: 'x', kind: 'seller_input' }) };
    const again = apply(answered, { status: 'input-required', source: 'poll', taskId: 'task_1', message: 'other' }, t0 + 1_000);
    expect(again.row.input_request).toBeNull();
    expect(again.row.answer).toBe(answered.answer);
  });
});
