/** Writes of claimed work that need no I/O to decide: the mark before a send, a retry later, nothing to poll, and giving up. */
import type { AdcpError } from '../adcp/types.js';
import { isTerminal, NEEDS_INPUT_STATUSES, type AdcpTaskStatus, type OperationStatus } from '../domain/status.js';
import type { OperationRow } from '../store/index.js';
import type { MutationPlan, NewEvent } from '../store/operations-repo.js';
import { describeError, errorKind } from './call-outcomes.js';
import { nextCheckFor, STALLED_SLOWDOWN, type TimingPolicy } from './observation-plan.js';

/**
 * Before the bytes leave: `calling_adcp` (a resend of an operation known as `unknown`
 * stays `unknown` until a reply says otherwise) and a timer at the call timeout, so a
 * crash mid-call leaves an ambiguous send that is resent with the same key and bytes.
 */
export function callingMarkPlan(current: OperationRow, now: number, callTimeoutMs: number, leaseMs: number, lookedUp?: string): MutationPlan<null> {
  return {
    patch: {
      ...(current.status === 'unknown' ? {} : { status: 'calling_adcp' }),
      next_check_at: now + callTimeoutMs + 5_000,
      check_kind: 'send',
      lease_until: now + leaseMs,
    },
    events:
      current.status === 'requested'
        ? [{ source: 'call', kind: 'transition', from: current.status, to: 'calling_adcp' }]
        : [{ source: 'timer', kind: 'resend', from: current.status, to: current.status, detail: { attempt: current.attempt, ...(lookedUp ? { lookup: lookedUp } : {}) } }],
    value: null,
  };
}

/**
 * A transient failure of a send or poll: due again in `wait` ms (the caller's backoff,
 * never before the seller's retry_after), the attempt count kept so the retry budget
 * runs out; a send stays a send (same key and bytes).
 */
export function retryLaterPlan(err: unknown, adcpError: AdcpError | undefined, what: 'send' | 'poll', wait: number, now: number): MutationPlan<null> {
  return {
    patch: { next_check_at: now + wait, ...(what === 'send' ? { check_kind: 'send' } : {}) },
    events: [
      {
        source: what === 'send' ? 'call' : 'poll',
        kind: what === 'send' ? 'send_failed' : 'poll_failed',
        detail: { error: adcpError ?? { code: errorKind(err), message: describeError(err) }, retry_in_ms: wait },
      },
    ],
    value: null,
  };
}

/**
 * A poll came due with no task id to poll. A question to a person (an MCP `input-required`
 * without a `task_id`, say) waits for the person: its timer becomes the request's clock
 * alone, and nothing is sent (a timer stored before that rule existed lands here). Anything
 * else has no way forward but a resend, with the same key and bytes.
 */
export function nothingToPollPlan(current: OperationRow, timing: TimingPolicy, now: number, random: () => number): MutationPlan<null> {
  if (NEEDS_INPUT_STATUSES.has(current.status as AdcpTaskStatus) && !current.task_id) {
    return { patch: nextCheckFor(current.status as OperationStatus, current, timing, now, random), value: null };
  }
  return { patch: { check_kind: 'send', next_check_at: now }, value: null };
}

/**
 * Claimed work that keeps failing (the retry budget is spent, or a poison row) is
 * escalated, never dropped. A send whose fate is unknown becomes `unknown`, never a
 * made-up seller failure; either way the operation is stalled, people are told, and
 * it is retried at the slow stalled pace.
 */
export function giveUpPlan(
  current: OperationRow,
  reason: string,
  now: number,
  options: TimingPolicy & { replayWindowMs: number },
  random: () => number,
): MutationPlan<null> {
  const sending = current.check_kind === 'send';
  const status = sending && !isTerminal(current.status as OperationStatus) ? 'unknown' : current.status;
  const events: NewEvent[] = [];
  if (status !== current.status) events.push({ source: 'timer', kind: 'transition', from: current.status, to: status, detail: { reason } });
  if (!current.stalled) events.push({ source: 'timer', kind: 'stalled', from: current.status, to: status, detail: { reason } });
  const retryIn = Math.min(options.pollIntervalMs * STALLED_SLOWDOWN, 3_600_000);
  // Past the replay window a resend is never safe: keep polling if there is a task, else wait for a person.
  const pastReplayWindow = sending && now - current.created_at > options.replayWindowMs;
  const timer =
    pastReplayWindow && !current.task_id
      ? { next_check_at: null, check_kind: null }
      : { next_check_at: now + retryIn + Math.round(retryIn * 0.2 * random()), ...(pastReplayWindow ? { check_kind: 'poll' } : {}) };
  return {
    patch: { status, ...(status !== current.status ? { status_since: now } : {}), stalled: 1, stalled_reason: reason, ...timer, attempt: 0 },
    events,
    value: null,
  };
}

/**
 * The last try of the retry budget met a transient error whose code we do not know
 * (`retriedWithinBudgetOnly`, src/adcp/recovery.ts): its `transient` is a default the spec
 * bounds by the budget, so nothing is tried again, not even at the slow stalled pace. The
 * seller answered each time, but with a code we cannot read, so whether it acted is not
 * known: the operation is `unknown` (as giveUpPlan makes a send), stalled for a person with
 * the seller's error and a reason saying what was tried, and no timer. A webhook from the
 * seller still settles it.
 */
export function retriesSpentPlan(current: OperationRow, error: AdcpError, tries: number, now: number): MutationPlan<null> {
  const status = isTerminal(current.status as OperationStatus) ? current.status : 'unknown';
  const said = `${error.code}${error.message ? ` (${error.message})` : ''}`;
  const reason = `${current.type}: the seller answered ${said}, an error code we do not know, on each of ${tries} tries (ADCP_ORCH_RETRY_ATTEMPTS), taken as transient; not tried again. Check at the seller whether it acted, then cancel or send it anew`;
  const events: NewEvent[] = [{ source: 'call', kind: 'send_failed', detail: { error, retry_budget_spent: true } }];
  if (status !== current.status) events.push({ source: 'call', kind: 'transition', from: current.status, to: status, detail: { reason, error } });
  if (!current.stalled) events.push({ source: 'call', kind: 'stalled', from: current.status, to: status, detail: { reason } });
  return {
    patch: {
      status,
      ...(status !== current.status ? { status_since: now } : {}),
      error: JSON.stringify(error),
      stalled: 1,
      stalled_reason: reason,
      next_check_at: null,
      check_kind: null,
      attempt: 0,
    },
    events,
    value: null,
  };
}

/**
 * A mutation's reply (or a poll of it) that was larger than ADCP_ORCH_MAX_REPLY_BYTES and
 * was not read. The seller received the request and answered, so it may have acted on it
 * (a media buy may exist): the operation is `unknown`, stalled for a person, with the
 * error saying so, and nothing is sent again automatically (asking again would only bring
 * the same reply, or, past the seller's replay window, act twice). A webhook from the
 * seller still settles it. Reads end `failed` instead (the operation service): nothing
 * changed at the seller.
 */
export function replyTooLargePlan(current: OperationRow, error: AdcpError, source: 'call' | 'poll', now: number): MutationPlan<null> {
  const status = isTerminal(current.status as OperationStatus) ? current.status : 'unknown';
  const reason = `${current.type}: the seller answered, so it may have acted on the request, but its reply was too large to read (${error.message}). Check at the seller; nothing is resent automatically`;
  const events: NewEvent[] = [];
  if (status !== current.status) events.push({ source, kind: 'transition', from: current.status, to: status, detail: { reason, error } });
  if (!current.stalled) events.push({ source, kind: 'stalled', from: current.status, to: status, detail: { reason } });
  return {
    patch: {
      status,
      ...(status !== current.status ? { status_since: now } : {}),
      error: JSON.stringify(error),
      stalled: 1,
      stalled_reason: reason,
      next_check_at: null,
      check_kind: null,
    },
    events,
    value: null,
  };
}
