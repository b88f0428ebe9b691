/**
 * What an observation that says a create_media_buy completed without a media_buy_id
 * writes (src/engine/observation-plan.ts with src/engine/unresolved-completion.ts): not the
 * end — a conflict told once, the task kept polled, a person called past the bound — and
 * what a later completion naming the buy writes: the normal end.
 */
import { describe, expect, it } from 'vitest';
import { planObservation, type TaskObservation } from '../../../src/engine/observation-plan.js';
import { UNRESOLVED_COMPLETION_POLLS } from '../../../src/engine/unresolved-completion.js';
import { newOperationRow } from '../../../src/store/operation-row.js';
import type { NewEvent, OperationRow } from '../../../src/store/operations-repo.js';

const t0 = Date.parse('2026-09-01T10:00:00Z');
const timing = { pollIntervalMs: 1_000, backupPollAfterMs: 60_000, workingTimeoutMs: 300_000, maxPolls: 2000, inputReminderMs: 300_000 };
const noJitter = () => 0;
const bound = UNRESOLVED_COMPLETION_POLLS * timing.pollIntervalMs;

/** The `submitted` envelope a real seller's webhook sent as the result of a completed task. */
const submittedEnvelope = { status: 'submitted', task_id: 'task_1', message: 'queued for review' };
const saysCompleted = (source: TaskObservation['source'], data: Record<string, unknown> = submittedEnvelope): TaskObservation => ({ status: 'completed', source, taskId: 'task_1', data });

function create(overrides: Partial<OperationRow> = {}): OperationRow {
  return newOperationRow(
    { id: 'op_1', tenant_id: 't', agent_id: 'a', type: 'create_media_buy', idempotency_key: 'key_0123456789abcdef', request_body: '{}', created_at: t0 },
    { status: 'submitted', task_id: 'task_1', webhook_mode: 'hmac', attempt: 1, ...overrides },
  );
}

function apply(row: OperationRow, obs: TaskObservation, now: number): { row: OperationRow; events: NewEvent[]; value: string } {
  const plan = planObservation(row, obs, timing, now, noJitter);
  return { row: { ...row, ...plan.patch } as OperationRow, events: plan.events ?? [], value: plan.value };
}

describe('a create_media_buy said completed without a media_buy_id', () => {
  it('is not its end: a conflict for people, nothing of the result taken, the task polled (not left to the webhook quiet period)', () => {
    const seen = apply(create(), saysCompleted('webhook'), t0);
    expect(seen.value).toBe('completion_unresolved');
    expect(seen.row).toMatchObject({ status: 'submitted', result: null, completed_at: null, stalled: 0, unresolved_completion_at: t0, check_kind: 'poll' });
    expect(seen.row.next_check_at).toBe(t0 + timing.pollIntervalMs);
    expect(seen.events).toHaveLength(1);
    expect(seen.events[0]).toMatchObject({ source: 'webhook', kind: 'conflict', from: 'submitted', to: 'completed' });
    expect(seen.events[0]!.detail).toMatchObject({ reason: 'completed_without_media_buy_id', task_type: 'create_media_buy', result_keys: ['status', 'task_id', 'message'] });
  });

  it('said again (a poll of a seller that keeps saying it) is not told again', () => {
    const first = apply(create(), saysCompleted('webhook'), t0).row;
    const again = apply(first, saysCompleted('poll'), t0 + 1_000);
    expect(again.value).toBe('completion_unresolved');
    expect(again.events).toEqual([]);
    expect(again.row).toMatchObject({ status: 'submitted', unresolved_completion_at: t0, poll_count: 1 });
  });

  it('a later completion naming the buy completes it normally, from any path', () => {
    const first = apply(create(), saysCompleted('webhook'), t0).row;
    for (const source of ['poll', 'webhook', 'reconcile', 'call'] as const) {
      const done = apply(first, saysCompleted(source, { media_buy_id: 'mb_1', status: 'pending_creatives', packages: [] }), t0 + 2_000);
      expect(done.value).toBe('transition');
      expect(done.row).toMatchObject({ status: 'completed', completed_at: t0 + 2_000, next_check_at: null, stalled: 0 });
      expect(JSON.parse(done.row.result!)).toMatchObject({ media_buy_id: 'mb_1' });
    }
  });

  it('unresolved past the bound, the operation is stalled for a person, saying why; the next check comes by then', () => {
    const first = apply(create(), saysCompleted('webhook'), t0).row;
    // The seller's task is polled and answers `submitted`: the timer is pulled in to the bound however far the backoff is.
    const quiet = apply({ ...first, poll_count: 40 }, { status: 'submitted', source: 'poll', taskId: 'task_1' }, t0 + 1_000);
    expect(quiet.row.stalled).toBe(0);
    expect(quiet.row.next_check_at).toBe(t0 + bound);
    const late = apply(quiet.row, { status: 'submitted', source: 'poll', taskId: 'task_1' }, t0 + bound);
    expect(late.row.stalled).toBe(1);
    expect(late.row.stalled_reason).toMatch(/^the seller said create_media_buy completed without a media_buy_id \(at 2026-09-01T10:00:00\.000Z\)/);
    expect(late.events.map((e) => e.kind)).toEqual(['stalled']);
    // Stalled, it is still polled (slowly), and stalled only once.
    expect(late.row.next_check_at).toBeGreaterThan(t0 + bound);
    expect(apply(late.row, saysCompleted('poll'), t0 + 2 * bound).events).toEqual([]);
    // A seller that keeps saying it past the bound is stalled as well.
    expect(apply(first, saysCompleted('poll'), t0 + bound).row).toMatchObject({ stalled: 1, status: 'submitted' });
  });

  it('as our own call’s reply, the call ends unknown: the seller has the request, what it made of it is not known', () => {
    const replied = apply(create({ status: 'calling_adcp', task_id: null }), saysCompleted('call'), t0);
    expect(replied.value).toBe('completion_unresolved');
    expect(replied.row).toMatchObject({ status: 'unknown', task_id: 'task_1', check_kind: 'poll', unresolved_completion_at: t0 });
    expect(replied.events.map((e) => [e.kind, e.to])).toEqual([
      ['conflict', 'completed'],
      ['transition', 'unknown'],
    ]);
  });

  it('an empty result is the same; other tasks complete without a media_buy_id as before', () => {
    expect(apply(create(), { status: 'completed', source: 'webhook' }, t0).value).toBe('completion_unresolved');
    const update = apply(create({ type: 'update_media_buy' }), saysCompleted('webhook', { affected_packages: [] }), t0);
    expect(update.row.status).toBe('completed');
  });
});
