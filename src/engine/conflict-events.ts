/**
 * The audit records of observations that were refused as conflicts: kind
 * `conflict` (so people, the event stream and notifications see them beside
 * terminal conflicts), `from` the status kept, `to` the status observed, and a
 * `detail.reason` saying which rule refused it. Nothing else about the operation
 * changes with them (a completion without a media_buy_id also keeps its task
 * observed: src/engine/unresolved-completion.ts).
 */
import type { ResultIssue } from '../adcp/task-result.js';
import type { NewEvent, OperationRow } from '../store/operations-repo.js';
import type { TaskObservation } from './observation-plan.js';

/** Bounded so a 1 MB result cannot bloat the event history; the whole delivery is kept in webhook_deliveries. */
const EXCERPT_CHARS = 2_000;
const MESSAGE_CHARS = 500;
const MAX_KEYS = 30;

/**
 * A terminal result that does not match the task's response schema: not
 * authoritative, so it is neither the result nor a status change. What a person
 * needs to judge it is recorded: the issues, the result's shape and a bounded
 * excerpt, the delivery's key (the full delivery is stored under it).
 */
export function resultInvalidEvent(row: OperationRow, obs: TaskObservation & { resultIssues: ResultIssue[] }): NewEvent {
  const data = obs.data ?? {};
  const text = JSON.stringify(data);
  return {
    source: obs.source,
    kind: 'conflict',
    from: row.status,
    to: obs.status,
    detail: compact({
      reason: 'result_invalid',
      task_type: row.type,
      idempotency_key: obs.deliveryKey,
      message: obs.message === undefined ? undefined : truncate(obs.message, MESSAGE_CHARS),
      issues: obs.resultIssues,
      result_keys: Object.keys(data).slice(0, MAX_KEYS),
      result_excerpt: truncate(text, EXCERPT_CHARS),
      result_chars: text.length,
    }),
  };
}

/**
 * A create_media_buy said `completed` with no `media_buy_id` (unresolved-completion.ts):
 * not the end of the purchase, so nothing of the operation changes but its observation
 * goes on. What a person needs to judge it is kept, as for an invalid result.
 */
export function completedWithoutBuyEvent(row: OperationRow, obs: TaskObservation): NewEvent {
  const data = obs.data ?? {};
  const text = JSON.stringify(data);
  return {
    source: obs.source,
    kind: 'conflict',
    from: row.status,
    to: obs.status,
    detail: compact({
      reason: 'completed_without_media_buy_id',
      task_type: row.type,
      idempotency_key: obs.deliveryKey,
      message: obs.message === undefined ? undefined : truncate(obs.message, MESSAGE_CHARS),
      result_keys: Object.keys(data).slice(0, MAX_KEYS),
      result_excerpt: truncate(text, EXCERPT_CHARS),
      result_chars: text.length,
    }),
  };
}

/** A delivery naming another task type than the operation's: a correlation conflict (the spec's bound identity). */
export function taskTypeConflictEvent(
  row: OperationRow,
  observed: { taskType: string; status: string; deliveryKey?: string; source: NewEvent['source'] },
): NewEvent {
  return {
    source: observed.source,
    kind: 'conflict',
    from: row.status,
    to: observed.status,
    detail: compact({ reason: 'task_type_mismatch', bound_task_type: row.type, observed_task_type: observed.taskType, idempotency_key: observed.deliveryKey }),
  };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

function compact(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
