/**
 * Adopting a task the seller has and we do not (an "orphan on the server",
 * AdCP spec, polling, timeouts, retries, reconciliation step 4): we never sent it, or its reply was lost, so we build
 * the operation from the listing alone and give it a timer, after which the
 * engine tracks it like any other.
 */
import { randomUUID } from 'node:crypto';
import type { ListedTask } from '../adcp/types.js';
import { sellerInputRequest } from '../domain/input-request.js';
import { withExpiry, type InputExpiryPolicy } from '../domain/input-timers.js';
import { NEEDS_INPUT_STATUSES } from '../domain/status.js';
import { deadlineFor } from '../domain/timing.js';
import type { AgentRow, OperationRow } from '../store/index.js';
import { newOperationRow } from '../store/operation-row.js';
import type { NewEvent } from '../store/operations-repo.js';
import { nextCheckFor, type TimingPolicy } from './observation-plan.js';

export function adoptedOperation(
  agent: AgentRow,
  task: ListedTask,
  timing: TimingPolicy,
  now: number,
  random: () => number,
  /** The tenant's expiry rules (settings `input_expiry`), for a task found waiting for input. */
  inputExpiry?: InputExpiryPolicy | null,
): { row: OperationRow; event: NewEvent } {
  const needsInput = NEEDS_INPUT_STATUSES.has(task.status) ? 1 : 0;
  // Found by listing, not by a reply of ours: there is no continuation to answer on.
  const inputRequest =
    task.status === 'input-required' || task.status === 'auth-required'
      ? JSON.stringify(withExpiry(sellerInputRequest(task.status, {}, false, now), inputExpiry))
      : null;
  // No webhook was registered for a task we did not send: it is polled (and a request's clock counts).
  const timer = nextCheckFor(task.status, { webhook_mode: 'none', poll_count: 0, task_id: task.taskId, needs_input: needsInput, input_request: inputRequest }, timing, now, random, 'reconcile');
  const row = newOperationRow(
    {
      id: randomUUID(),
      tenant_id: agent.tenant_id,
      agent_id: agent.id,
      type: task.taskType,
      // Never sent by us, so never resent: the key only keeps the (agent, key) uniqueness.
      idempotency_key: randomUUID(),
      request_body: '{}',
      created_at: now,
    },
    {
      status: task.status,
      task_id: task.taskId,
      needs_input: needsInput,
      ...(inputRequest ? { input_request: inputRequest } : {}),
      deadline_at: deadlineFor(task.taskType, now),
      next_check_at: timer.next_check_at,
      check_kind: timer.check_kind,
    },
  );
  const event: NewEvent = {
    source: 'reconcile',
    kind: 'adopted',
    to: task.status,
    at: now,
    detail: { task_id: task.taskId, task_type: task.taskType, seller_created_at: task.createdAt },
  };
  return { row, event };
}
