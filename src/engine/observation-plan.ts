/**
 * Turns one observation of a task (a call reply, a poll answer, a webhook) into
 * the write that records it: the status decision from the domain, the stored
 * result or error, the bound task id, and the next timer.
 */
import { decide, type EventSource } from '../domain/observe.js';
import { canTransition, isTerminal, NEEDS_INPUT_STATUSES, type AdcpTaskStatus, type OperationStatus } from '../domain/status.js';
import { pollDelayMs } from '../domain/timing.js';
import type { AdcpError } from '../adcp/types.js';
import type { ResultIssue } from '../adcp/task-result.js';
import type { MutationPlan, NewEvent, OperationPatch, OperationRow } from '../store/operations-repo.js';
import { completedWithoutBuyEvent, resultInvalidEvent } from './conflict-events.js';
import { ANSWER_CHECK, inputColumnsOnTransition, questionSeenAgain } from './input-requests.js';
import { INPUT_TIMER_CHECK, inputTimerAt, reminderPolicyOf, type InputTimerRow } from './input-timers.js';
import type { InputExpiryPolicy } from '../domain/input-timers.js';
import { completesWithoutBuy, unresolvedDeadline, unresolvedStall } from './unresolved-completion.js';

export interface TaskObservation {
  status: AdcpTaskStatus;
  source: EventSource;
  taskId?: string;
  contextId?: string;
  message?: string;
  /** Sender's timestamp, epoch ms (webhook/poll), for ordering. */
  timestamp?: number;
  data?: Record<string, unknown>;
  /** `data` as JSON text when the reader already made it (a large reply): stored as it is. */
  dataJson?: string;
  error?: AdcpError;
  /** A2A only: the transport task of the reply (a continuation handle when it stayed open). */
  a2a?: { taskId?: string; contextId?: string; state?: AdcpTaskStatus };
  /**
   * Set when `data` is a terminal result that failed the task's response schema
   * (checked by whoever read the observation: see adcp/task-result.ts). Such an
   * observation is not authoritative: it is recorded as a conflict and changes nothing.
   */
  resultIssues?: ResultIssue[];
  /** The webhook delivery's idempotency_key, for audit records. */
  deliveryKey?: string;
  /**
   * The tenant's expiry rules for requests to a person, looked up by the engine when
   * the observation may ask one (withInputExpiry); null when the tenant has none.
   */
  inputExpiry?: InputExpiryPolicy | null;
}

export interface TimingPolicy {
  pollIntervalMs: number;
  backupPollAfterMs: number;
  workingTimeoutMs: number;
  maxPolls: number;
  /** Default 5 min (AdCP spec, polling, timeouts, retries, reconciliation). */
  inputReminderMs?: number;
}

export type ObservationOutcome =
  | 'transition'
  | 'same'
  | 'duplicate_terminal'
  | 'conflict'
  | 'stale'
  | 'illegal'
  | 'task_conflict'
  | 'task_type_conflict'
  | 'result_invalid'
  /** A create_media_buy said completed without a media_buy_id: not taken, still observed (unresolved-completion.ts). */
  | 'completion_unresolved';

/** Stalled operations are still reconciled, at this fraction of the normal pace. */
export const STALLED_SLOWDOWN = 10;

/**
 * When the scheduler should look at an operation next, given the status it is in.
 * The timer is pulled in to the deadline (so passing it is noticed on time) and, while
 * a person is asked something, to the next reminder or the request's expiry.
 */
export function nextCheckFor(
  status: OperationStatus,
  row: Pick<OperationRow, 'webhook_mode' | 'poll_count' | 'task_id'> & Partial<Pick<OperationRow, 'stalled' | 'deadline_at' | 'unresolved_completion_at'>> & Omit<InputTimerRow, 'status'>,
  timing: TimingPolicy,
  now: number,
  random: () => number,
  /** Who told us: after a poll, the next poll follows the polling cadence even when webhooks are on. */
  source: EventSource = 'call',
): { next_check_at: number | null; check_kind: string | null } {
  let delay: number;
  if (NEEDS_INPUT_STATUSES.has(status as AdcpTaskStatus) && !row.task_id) return personOnlyTimer(status, row, timing, now);
  switch (status) {
    case 'submitted':
    case 'unknown':
    case 'input-required':
    case 'auth-required': {
      // With a webhook registered, polling is only the backup after a quiet period.
      // A task waiting on a person is still checked, slowly: it may be answered
      // through the seller's own channel, and a webhook can be lost.
      const quietFirst = row.webhook_mode !== 'none' && status !== 'unknown' && source !== 'poll';
      delay = quietFirst
        ? timing.backupPollAfterMs + Math.round(timing.pollIntervalMs * 0.1 * random())
        : pollDelayMs(row.poll_count, timing.pollIntervalMs, random);
      break;
    }
    case 'working':
      // `working` is a progress signal, not a polling trigger: leave it until the working timeout.
      delay = timing.workingTimeoutMs;
      break;
    default:
      // Terminal: no timer.
      return { next_check_at: null, check_kind: null };
  }
  if (row.stalled) delay *= STALLED_SLOWDOWN;
  let at = now + delay;
  if (!row.stalled && row.deadline_at != null) at = Math.min(at, Math.max(row.deadline_at, now));
  // A completion without a media_buy_id is looked at again by the time a person is to be called.
  const unresolved = unresolvedDeadline(row, timing.pollIntervalMs);
  if (!row.stalled && unresolved !== null) at = Math.min(at, Math.max(unresolved, now));
  // A request to a person keeps its own clock: the next reminder, or its expiry, comes first.
  const inputAt = inputTimerAt({ ...row, status }, reminderPolicyOf(timing));
  if (inputAt !== null) at = Math.min(at, Math.max(inputAt, now));
  return { next_check_at: at, check_kind: 'poll' };
}

/**
 * A seller's question with no task id to poll (e.g. an MCP `input-required` reply without
 * a `task_id`): the seller waits for our next move, and a resend would only ask again (or,
 * to a seller that does not replay, ask anew). Its only timer is the request's clock
 * (reminders, expiry), which the scheduler hands to the input timers, never to a send.
 */
function personOnlyTimer(
  status: OperationStatus,
  row: Omit<InputTimerRow, 'status'>,
  timing: TimingPolicy,
  now: number,
): { next_check_at: number | null; check_kind: string | null } {
  const at = inputTimerAt({ ...row, status }, reminderPolicyOf(timing));
  return at === null ? { next_check_at: null, check_kind: null } : { next_check_at: Math.max(at, now), check_kind: INPUT_TIMER_CHECK };
}

export function planObservation(
  row: OperationRow,
  obs: TaskObservation,
  timing: TimingPolicy,
  now: number,
  random: () => number,
): MutationPlan<ObservationOutcome> {
  const current = row.status as OperationStatus;
  const patch: OperationPatch = {};
  const events: NewEvent[] = [];

  // Once bound, the seller's task id must repeat; another one is a protocol conflict, not an update.
  if (obs.taskId && row.task_id && obs.taskId !== row.task_id) {
    return {
      events: [
        { source: obs.source, kind: 'task_conflict', from: current, to: obs.status, detail: { bound_task_id: row.task_id, observed_task_id: obs.taskId } },
      ],
      value: 'task_conflict',
    };
  }
  // A result that is not the task's response is not an observation to converge on: no status,
  // no result, not even the task id it names. It is kept as a conflict for a person (and the
  // delivery itself in webhook_deliveries), before the terminal rules, so it can neither settle
  // an operation nor pass for a duplicate of the terminal that did.
  if (obs.resultIssues) {
    return { events: [resultInvalidEvent(row, { ...obs, resultIssues: obs.resultIssues })], value: 'result_invalid' };
  }
  // A create that "completed" without the buy it made is not its end, however it is told (reply, poll, webhook).
  if (canTransition(current, 'completed') && completesWithoutBuy(row.type, obs)) return planCompletedWithoutBuy(row, obs, timing, now, random);
  // A late reply still teaches us the task id and context (folded in even after a terminal webhook).
  if (obs.taskId && !row.task_id) patch.task_id = obs.taskId;
  if (obs.contextId && obs.contextId !== row.context_id) patch.context_id = obs.contextId;

  const decision = decide(current, row.last_observed_at, { status: obs.status, source: obs.source, observedAt: obs.timestamp });
  switch (decision.kind) {
    case 'conflict':
      events.push({
        source: obs.source,
        kind: 'conflict',
        from: current,
        to: obs.status,
        detail: { kept: decision.kept, observed: decision.observed, message: obs.message, error: obs.error },
      });
      return { patch: nonEmpty(patch), events, value: 'conflict' };
    case 'duplicate_terminal':
    case 'stale':
    case 'illegal':
      if (decision.kind === 'illegal') {
        events.push({ source: obs.source, kind: 'illegal_transition', from: current, to: obs.status });
      }
      return { patch: nonEmpty(patch), events, value: decision.kind };
    case 'same':
    case 'transition': {
      if (obs.timestamp !== undefined) patch.last_observed_at = Math.max(obs.timestamp, row.last_observed_at ?? 0);
      if (obs.message !== undefined && NEEDS_INPUT_STATUSES.has(obs.status)) patch.input_message = obs.message;
      if (decision.kind === 'transition') {
        patch.status = obs.status;
        patch.status_since = now;
        patch.reminded_at = null;
        patch.needs_input = NEEDS_INPUT_STATUSES.has(obs.status) ? 1 : 0;
        if (!NEEDS_INPUT_STATUSES.has(obs.status)) patch.input_message = null;
        Object.assign(patch, inputColumnsOnTransition(row, obs, now));
        events.push({
          source: obs.source,
          kind: 'transition',
          from: current,
          to: obs.status,
          detail: compact({ task_id: obs.taskId, message: obs.message, error: obs.error }),
        });
      } else if ((obs.status === 'input-required' || obs.status === 'auth-required') && row.needs_input === 1 && !row.answer) {
        // Asked again while it waits: the same question changes nothing, another one replaces it.
        const again = questionSeenAgain(row, obs.status, obs, now);
        Object.assign(patch, again.patch);
        events.push(...again.events);
      }
      if (isTerminal(obs.status)) {
        patch.completed_at = now;
        patch.stalled = 0;
        if (obs.data && Object.keys(obs.data).length > 0) patch.result = obs.dataJson ?? JSON.stringify(obs.data);
        if (obs.error) patch.error = JSON.stringify(obs.error);
        else if (obs.status !== 'completed' && obs.message) patch.error = JSON.stringify({ code: obs.status.toUpperCase(), message: obs.message });
      } else if (obs.source === 'poll') {
        patch.poll_count = row.poll_count + 1;
      }
      // Past the cap on polls the task is stalled: still checked, at the slowest cadence, and shown to people.
      if (patch.poll_count !== undefined && patch.poll_count >= timing.maxPolls && row.stalled === 0) {
        patch.stalled = 1;
        patch.stalled_reason = `no change after ${patch.poll_count} polls`;
        events.push({ source: obs.source, kind: 'stalled', from: current, to: current, detail: { reason: patch.stalled_reason } });
      }
      if (!isTerminal(obs.status)) events.push(...stallIfUnresolved({ ...row, ...patch }, patch, obs.source, timing, now));
      // Webhooks refresh the quiet timer too: each one pushes the backup poll further out.
      // A person's answer waiting to be sent keeps its own timer: news that the task still
      // waits changes nothing about it (a move elsewhere does: the answer is then moot).
      const answerPending = row.check_kind === ANSWER_CHECK && decision.kind === 'same';
      if (!answerPending) Object.assign(patch, nextCheckFor(obs.status, { ...row, ...patch }, timing, now, random, obs.source));
      return { patch, events, value: decision.kind };
    }
  }
}

/**
 * A create_media_buy the seller says completed without a media_buy_id (unresolved-completion.ts):
 * neither its status nor its result is taken. The first such word is a conflict for people; the
 * task id it brings is bound, and the task is polled as a `submitted` one until a completion
 * with the buy comes, or a person is called past the bound. Our own call's reply of it ends the
 * call (`calling_adcp`) in `unknown`: the seller has the request, what it made of it is not known.
 */
function planCompletedWithoutBuy(row: OperationRow, obs: TaskObservation, timing: TimingPolicy, now: number, random: () => number): MutationPlan<ObservationOutcome> {
  const current = row.status as OperationStatus;
  const patch: OperationPatch = {};
  const events: NewEvent[] = [];
  if (obs.taskId && !row.task_id) patch.task_id = obs.taskId;
  if (obs.contextId && obs.contextId !== row.context_id) patch.context_id = obs.contextId;
  if (row.unresolved_completion_at == null) {
    // Told once: the same word again (each poll of a seller that keeps saying it) adds nothing for people.
    patch.unresolved_completion_at = now;
    events.push(completedWithoutBuyEvent(row, obs));
  }
  let status = current;
  if (current === 'calling_adcp') {
    status = 'unknown';
    Object.assign(patch, { status, status_since: now });
    events.push({ source: obs.source, kind: 'transition', from: current, to: status, detail: { reason: 'the seller said completed without a media_buy_id' } });
  }
  if (obs.source === 'poll') patch.poll_count = row.poll_count + 1;
  events.push(...stallIfUnresolved({ ...row, ...patch }, patch, obs.source, timing, now));
  // A person's answer on its way keeps its own timer (as in planObservation).
  if (row.check_kind !== ANSWER_CHECK) Object.assign(patch, nextCheckFor(status, { ...row, ...patch }, timing, now, random, 'poll'));
  return { patch, events, value: 'completion_unresolved' };
}

/** Stalls (into `patch`) an operation whose completion without a media_buy_id is unresolved past its bound; its event. */
function stallIfUnresolved(row: OperationRow, patch: OperationPatch, source: EventSource, timing: TimingPolicy, now: number): NewEvent[] {
  const stall = unresolvedStall(row, timing.pollIntervalMs, now);
  if (!stall) return [];
  patch.stalled = 1;
  patch.stalled_reason = stall.reason;
  return [{ source, kind: 'stalled', from: row.status, to: row.status, detail: { reason: stall.reason } }];
}

function nonEmpty(patch: OperationPatch): OperationPatch | undefined {
  return Object.keys(patch).length > 0 ? patch : undefined;
}

function compact(o: Record<string, unknown>): Record<string, unknown> | undefined {
  const out = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  return Object.keys(out).length ? out : undefined;
}
