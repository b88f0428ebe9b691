/**
 * The clock of a request that waits for a person (docs/ARCHITECTURE.md, People in the loop): when to
 * remind people again, and what happens when the request expires. Pure: the
 * engine (src/engine/input-timers.ts) keeps what this decides as the
 * operation's timer row.
 *
 * Reminders: the first after `firstAfterMs` of waiting (ADCP_ORCH_INPUT_REMINDER_MS),
 * then each gap twice the one before (R, 2R, 4R, …), never more than a day apart
 * (or R, when R itself is longer). People who have not answered after the first
 * nudges are told less and less often, but never forgotten. A reminder sent late
 * (the service was down) moves the rest along: the next gap counts from when it
 * was actually sent, so a restart never brings a burst of them.
 *
 * Expiry: a tenant may give each kind of request a lifetime (settings
 * `input_expiry`), stamped on the request when it is made (`expires_at`, and
 * `on_expiry`: `reject` or `stall`), so later changes to the settings do not
 * move a promise already shown to people.
 */
import type { InputRequest, InputRequestKind } from './input-request.js';

export const REMINDER_MAX_GAP_MS = 86_400_000;

export const EXPIRY_ACTIONS = ['reject', 'stall'] as const;
export type ExpiryAction = (typeof EXPIRY_ACTIONS)[number];

/** Bounds of a tenant's `after_ms`: at least a second, at most a year. */
export const EXPIRY_MIN_MS = 1_000;
export const EXPIRY_MAX_MS = 365 * 86_400_000;

export interface ExpiryRule {
  after_ms: number;
  then: ExpiryAction;
}

/** The tenant's `input_expiry` setting: a lifetime per kind of request; kinds left out never expire. */
export type InputExpiryPolicy = Partial<Record<InputRequestKind, ExpiryRule>>;

export interface ReminderPolicy {
  firstAfterMs: number;
  /** Longest gap between two reminders; default a day. */
  maxGapMs?: number;
}

/**
 * What the operation row records about the timers of its current request. Both
 * times count only when they are not older than the request (`requested_at`):
 * a new request starts its own clock without anyone having to reset them.
 */
export interface InputTimerState {
  /** When the last reminder was sent. */
  reminded_at?: number | null;
  /** How many reminders were sent for the request (with `reminded_at`). */
  input_reminders?: number | null;
  /** When the request's expiry was acted on (only `stall` leaves it waiting). */
  input_expired_at?: number | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The request with its expiry from the tenant's rule for its kind (unchanged when there is none). */
export function withExpiry(request: InputRequest, policy: InputExpiryPolicy | null | undefined): InputRequest {
  const rule = policy?.[request.kind];
  if (!rule) return request;
  return { ...request, expires_at: iso(Date.parse(request.requested_at) + rule.after_ms), on_expiry: rule.then };
}

export function waitingSince(request: InputRequest): number {
  return Date.parse(request.requested_at);
}

/** Reminders sent so far for this request, and when the last one went. */
export function remindersSent(request: InputRequest, state: InputTimerState): { count: number; lastAt: number | null } {
  const since = waitingSince(request);
  if (state.reminded_at == null || state.reminded_at < since) return { count: 0, lastAt: null };
  // A row reminded before the count existed has had (at least) one.
  return { count: Math.max(1, state.input_reminders ?? 0), lastAt: state.reminded_at };
}

/** The wait before reminder `n` (1 = the first): R, then doubling, capped. */
export function reminderGapMs(n: number, policy: ReminderPolicy): number {
  const cap = Math.max(policy.maxGapMs ?? REMINDER_MAX_GAP_MS, policy.firstAfterMs);
  // 2^40 × R is past any cap; stop doubling long before the number overflows.
  return Math.min(policy.firstAfterMs * Math.pow(2, Math.min(Math.max(n - 1, 0), 40)), cap);
}

export function nextReminderAt(request: InputRequest, state: InputTimerState, policy: ReminderPolicy): number {
  const { count, lastAt } = remindersSent(request, state);
  return (lastAt ?? waitingSince(request)) + reminderGapMs(count + 1, policy);
}

/** When the request expires, unless it never does or its expiry was already acted on. */
export function pendingExpiryAt(request: InputRequest, state: InputTimerState): number | null {
  if (!request.expires_at) return null;
  if (state.input_expired_at != null && state.input_expired_at >= waitingSince(request)) return null;
  return Date.parse(request.expires_at);
}

/** What expiry does when the request does not say: stall, since a person should look. */
export function expiryActionOf(request: InputRequest): ExpiryAction {
  return request.on_expiry ?? 'stall';
}

export interface DueInputTimers {
  /** A reminder is owed now: number `reminder` of this request. */
  remind: boolean;
  reminder: number;
  /** The request has expired and this is to be done (null: not expired, or already acted on). */
  expire: ExpiryAction | null;
  waitingMs: number;
}

export function dueInputTimers(request: InputRequest, state: InputTimerState, policy: ReminderPolicy, now: number): DueInputTimers {
  const expiresAt = pendingExpiryAt(request, state);
  const expire = expiresAt !== null && now >= expiresAt ? expiryActionOf(request) : null;
  // A request that ends now is not worth a reminder.
  const remind = expire !== 'reject' && now >= nextReminderAt(request, state, policy);
  return { remind, reminder: remindersSent(request, state).count + 1, expire, waitingMs: Math.max(0, now - waitingSince(request)) };
}

export function isDue(due: DueInputTimers): boolean {
  return due.remind || due.expire !== null;
}

/** The nearest moment the request's clock needs looking at: its next reminder or its expiry. */
export function nextInputTimerAt(request: InputRequest, state: InputTimerState, policy: ReminderPolicy): number {
  const reminder = nextReminderAt(request, state, policy);
  const expiry = pendingExpiryAt(request, state);
  return expiry === null ? reminder : Math.min(reminder, expiry);
}

/** When an answer comes too late: the request expired with `reject` (whether or not the timer has acted yet). */
export function expiredForRejection(request: InputRequest, now: number): number | null {
  if (!request.expires_at || expiryActionOf(request) !== 'reject') return null;
  const at = Date.parse(request.expires_at);
  return now >= at ? at : null;
}
