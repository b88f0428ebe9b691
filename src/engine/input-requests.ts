/**
 * How an operation's stored state follows a person's part in it: the request
 * shown while it waits (`input_request`), the seller's continuation that an
 * answer may be sent on, and the recorded answer.
 *
 * The continuation is taken only from the reply to our own call, and only when
 * the A2A task itself stayed open waiting for input: that reply is the one that
 * asked, over a connection we opened (AdCP spec, task status "a verified transport
 * continuation"). A poll's or webhook's A2A ids are those of another exchange, a
 * `context_id` is never a continuation, and a task that asks again after it had
 * moved on has no current continuation until a reply of ours carries one.
 */
import { sellerInputRequest, type InputRequest, type RecordedAnswer } from '../domain/input-request.js';
import { sameQuestion, sellerReasonOf, sellerStatusOf } from '../domain/input-question.js';
import { NEEDS_INPUT_STATUSES, type AdcpTaskStatus } from '../domain/status.js';
import { withExpiry, type InputExpiryPolicy } from '../domain/input-timers.js';
import type { NewEvent, OperationPatch, OperationRow } from '../store/operations-repo.js';
import { waitingRequest } from './input-timers.js';

/** `check_kind` of an operation whose answer is due to be sent (or resent) on its continuation. */
export const ANSWER_CHECK = 'answer';

export interface StoredContinuation {
  a2a_task_id: string;
  a2a_context_id: string;
  received_at: number;
}

/** The continuation message of an answer, stored before it is sent so that a resend is the same message. */
export interface AnswerDelivery {
  message_id: string;
  skill: string;
  input: Record<string, unknown>;
  text?: string;
  /** Set just before each send: a claim that finds it set does not know whether the send arrived. */
  sent_at: number | null;
}

export interface StoredAnswer extends RecordedAnswer {
  delivery?: AnswerDelivery;
}

/** What an observation carries that matters here. */
export interface ObservedReply {
  status: AdcpTaskStatus;
  source: string;
  message?: string;
  /** The reply's payload: the seller's own `reason` for asking is read from it. */
  data?: Record<string, unknown>;
  a2a?: { taskId?: string; contextId?: string; state?: AdcpTaskStatus };
  /** The tenant's expiry rules, stamped on a request this reply makes (see withInputExpiry). */
  inputExpiry?: InputExpiryPolicy | null;
}

export function continuationOf(obs: ObservedReply, now: number): StoredContinuation | null {
  const a2a = obs.a2a;
  if (obs.source !== 'call' || !a2a?.taskId || !a2a.contextId) return null;
  if (!a2a.state || !NEEDS_INPUT_STATUSES.has(a2a.state)) return null;
  return { a2a_task_id: a2a.taskId, a2a_context_id: a2a.contextId, received_at: now };
}

/**
 * The columns to write when an operation's status changes to `obs.status`:
 * entering a wait for a person sets the request (and the continuation, if this
 * reply is one); leaving it clears the request and the continuation.
 */
export function inputColumnsOnTransition(row: OperationRow, obs: ObservedReply, now: number): OperationPatch {
  if (obs.status === 'input-required' || obs.status === 'auth-required') return questionObserved(row, obs.status, obs, now).patch;
  const answer = parseAnswer(row);
  return {
    input_request: null,
    continuation: null,
    // An answer still on its way when the task moved on is no longer to be sent.
    ...(answer?.delivery ? { answer: JSON.stringify(withoutDelivery(answer)) } : {}),
  };
}

/**
 * The seller's question seen (again) while the task stays where it was (a poll, a webhook,
 * reconcile): nothing changes if it asks what the person already sees; if it asks something
 * else, that is a new question, told to people like the first (an `input_requested` event).
 */
export function questionSeenAgain(row: OperationRow, status: 'input-required' | 'auth-required', obs: ObservedReply, now: number): { patch: OperationPatch; events: NewEvent[] } {
  const { patch, asked, request } = questionObserved(row, status, obs, now);
  if (!asked) return { patch, events: [] };
  const previous = parseInputRequest(row);
  return {
    patch,
    events: [
      {
        source: obs.source,
        kind: 'input_requested',
        from: status,
        to: status,
        detail: { message: request.message, reason: request.reason, ...(previous ? { replaces: previous.id ?? previous.requested_at } : {}) },
      },
    ],
  };
}

/**
 * A question from the seller, as observed: the question the person already sees when it
 * asks the same thing (its `requested_at`, id, reminders and expiry kept: only the
 * continuation follows the reply), else a new one, with no answer yet. What the reply
 * leaves out (a poll carries no `reason`, a webhook may carry no message) is taken to be
 * what was asked before, not a change.
 */
function questionObserved(
  row: OperationRow,
  status: 'input-required' | 'auth-required',
  obs: ObservedReply,
  now: number,
): { patch: OperationPatch; asked: boolean; request: InputRequest } {
  const previous = waitingRequest(row);
  const before = previous?.kind === 'seller_input' && sellerStatusOf(previous) === status ? previous : undefined;
  // A reply of ours says whether the task is open for an answer; other news leaves what was stored.
  const continuation = continuationOf(obs, now) ?? (obs.source === 'call' ? null : parseContinuation(row));
  const said = { message: obs.message ?? before?.message, reason: sellerReasonOf(obs.data) ?? before?.reason };
  const fresh = sellerInputRequest(status, said, continuation !== null, now);
  const stored = continuation ? JSON.stringify(continuation) : null;
  if (before && sameQuestion(before, fresh)) {
    return { patch: { needs_input: 1, ...(stored !== row.continuation ? { continuation: stored } : {}) }, asked: false, request: before };
  }
  return {
    patch: { needs_input: 1, input_request: JSON.stringify(withExpiry(fresh, obs.inputExpiry)), continuation: stored, answer: null },
    asked: true,
    request: fresh,
  };
}

/** A new question from the seller, whatever was asked before (e.g. it asks again after an answer): no answer yet. */
export function inputColumnsForQuestion(status: 'input-required' | 'auth-required', obs: ObservedReply, now: number): OperationPatch {
  const continuation = continuationOf(obs, now);
  const said = { message: obs.message, reason: sellerReasonOf(obs.data) };
  return {
    needs_input: 1,
    input_request: JSON.stringify(withExpiry(sellerInputRequest(status, said, continuation !== null, now), obs.inputExpiry)),
    continuation: continuation ? JSON.stringify(continuation) : null,
    answer: null,
  };
}

export function parseInputRequest(row: Pick<OperationRow, 'input_request'>): InputRequest | null {
  return row.input_request ? (JSON.parse(row.input_request) as InputRequest) : null;
}

export function parseContinuation(row: Pick<OperationRow, 'continuation'>): StoredContinuation | null {
  return row.continuation ? (JSON.parse(row.continuation) as StoredContinuation) : null;
}

export function parseAnswer(row: Pick<OperationRow, 'answer'>): StoredAnswer | null {
  return row.answer ? (JSON.parse(row.answer) as StoredAnswer) : null;
}

export function withoutDelivery(answer: StoredAnswer): RecordedAnswer {
  const { delivery: _d, ...recorded } = answer;
  return recorded;
}
