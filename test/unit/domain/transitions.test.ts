/** Property tests of the status rules (docs/ARCHITECTURE.md, The life of an operation) over random sequences of observations. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decide } from '../../../src/domain/observe.js';
import { ADCP_TASK_STATUSES, canTransition, isTerminal, OPERATION_STATUSES, TRANSITIONS, type OperationStatus } from '../../../src/domain/status.js';
import { planObservation, type TaskObservation } from '../../../src/engine/observation-plan.js';
import type { OperationRow } from '../../../src/store/index.js';
import { newOperationRow } from '../../../src/store/operation-row.js';

const timing = { pollIntervalMs: 1000, backupPollAfterMs: 5000, workingTimeoutMs: 3000, maxPolls: 100, inputReminderMs: 300_000 };

function baseRow(status: OperationStatus): OperationRow {
  return newOperationRow({ id: 'op', tenant_id: 't', agent_id: 'a', type: 'create_media_buy', idempotency_key: 'k'.repeat(16), request_body: '{}', created_at: 0 }, { status });
}

const observation = fc.record({
  status: fc.constantFrom(...ADCP_TASK_STATUSES),
  source: fc.constantFrom('call', 'webhook', 'poll', 'reconcile') as fc.Arbitrary<TaskObservation['source']>,
  timestamp: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
  taskId: fc.option(fc.constantFrom('task-1', 'task-2'), { nil: undefined }),
});

describe('status rules', () => {
  it('terminal statuses absorb everything', () => {
    for (const s of OPERATION_STATUSES) {
      if (isTerminal(s)) expect(TRANSITIONS[s]).toEqual([]);
    }
  });

  it('calling_adcp can reach every AdCP status (a reply may say anything)', () => {
    for (const s of ADCP_TASK_STATUSES) expect(canTransition('calling_adcp', s)).toBe(true);
  });

  it('a later different terminal is a conflict that keeps the first', () => {
    expect(decide('completed', null, { status: 'failed', source: 'webhook' })).toEqual({ kind: 'conflict', kept: 'completed', observed: 'failed' });
    expect(decide('completed', null, { status: 'completed', source: 'poll' })).toEqual({ kind: 'duplicate_terminal' });
  });

  it('drops a non-terminal report older than the last applied, but never a terminal one', () => {
    expect(decide('working', 500, { status: 'submitted', source: 'webhook', observedAt: 400 })).toEqual({ kind: 'stale' });
    expect(decide('working', 500, { status: 'completed', source: 'webhook', observedAt: 400 }).kind).toBe('transition');
  });

  it('over random sequences: the first terminal never changes, and each change appends exactly one transition event', () => {
    fc.assert(
      fc.property(fc.constantFrom<OperationStatus>('requested', 'calling_adcp', 'submitted'), fc.array(observation, { maxLength: 40 }), (start, observations) => {
        let row = baseRow(start);
        if (start === 'requested') row = { ...row, status: 'calling_adcp' };
        let firstTerminal: string | undefined;
        const log: Array<{ kind: string; to: string | null | undefined }> = [];
        for (const obs of observations) {
          const before = row.status;
          const plan = planObservation(row, obs, timing, 1_000_000, () => 0.5);
          const events = plan.events ?? [];
          log.push(...events.map((e) => ({ kind: e.kind, to: e.to })));
          row = { ...row, ...plan.patch } as OperationRow;
          const transitions = events.filter((e) => e.kind === 'transition');
          if (row.status !== before) {
            expect(transitions).toHaveLength(1);
            expect(transitions[0]).toMatchObject({ from: before, to: row.status });
          } else {
            expect(transitions).toHaveLength(0);
          }
          if (firstTerminal) expect(row.status).toBe(firstTerminal);
          else if (isTerminal(row.status as OperationStatus)) firstTerminal = row.status;
          // A terminal operation has no timer left and is not waiting on anyone.
          if (isTerminal(row.status as OperationStatus)) {
            expect(row.next_check_at).toBeNull();
            expect(row.needs_input).toBe(0);
          }
        }
        // The task id, once bound, never changes.
        const bound = observations.find((o) => o.taskId)?.taskId;
        if (bound) expect(row.task_id).toBe(bound);
      }),
      { numRuns: 500 },
    );
  });

  it('a different task id for a bound operation is a conflict, not an update', () => {
    const row = { ...baseRow('submitted'), task_id: 'task-1' };
    const plan = planObservation(row, { status: 'completed', source: 'webhook', taskId: 'task-2' }, timing, 0, () => 0);
    expect(plan.value).toBe('task_conflict');
    expect(plan.patch).toBeUndefined();
    expect(plan.events?.[0]?.kind).toBe('task_conflict');
  });

  it('a terminal webhook before the submitted reply is kept, and the late reply still binds the task id', () => {
    let row = baseRow('calling_adcp');
    const early = planObservation(row, { status: 'completed', source: 'webhook', data: { media_buy_id: 'mb1' } }, timing, 10, () => 0);
    row = { ...row, ...early.patch } as OperationRow;
    expect(row.status).toBe('completed');
    const late = planObservation(row, { status: 'submitted', source: 'call', taskId: 'task-9' }, timing, 20, () => 0);
    row = { ...row, ...late.patch } as OperationRow;
    expect(row.status).toBe('completed');
    expect(row.task_id).toBe('task-9');
    expect(JSON.parse(row.result!)).toEqual({ media_buy_id: 'mb1' });
  });
});
