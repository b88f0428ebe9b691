/**
 * What an outbound-webhook attempt's answer means, and when to try again
 * (docs/ARCHITECTURE.md, Telling users, Standard Webhooks "Delivery success and failure"). Pure.
 *
 * - 2xx: delivered.
 * - 410 Gone: the receiver wants no more; the subscription is disabled.
 * - Everything else — 3xx (redirects are not followed), 4xx other than 410,
 *   429, 5xx, timeouts, connection errors — is a failure retried over the
 *   schedule. Standard Webhooks says to treat "the rest of the status codes" as
 *   failures and retry failures; a 400/401/404 is often a receiver being
 *   redeployed or misconfigured for a while, and giving up on the first one
 *   would lose notifications that a retry an hour later delivers.
 * - After the last step of the schedule: failed (visible, redeliverable).
 */

export type AttemptResult = { kind: 'response'; status: number; retryAfter?: string } | { kind: 'error'; error: string };

export type Verdict =
  | { outcome: 'delivered' }
  | { outcome: 'disabled'; reason: string }
  | { outcome: 'retry'; nextAttemptAt: number }
  | { outcome: 'failed' };

/** Longest a `Retry-After` may push an attempt out; a larger value is taken as this. */
export const MAX_RETRY_AFTER_MS = 7 * 24 * 3_600_000;

/**
 * `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date
 * (RFC 9110 §10.2.3). Undefined when absent or unreadable; never negative.
 */
export function retryAfterMs(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
  // Date.parse reads IMF-fixdate and the obsolete forms HTTP still allows; insist on a weekday-ful date, not any string.
  if (!/^[A-Za-z]{3},? /.test(value) && !/^[A-Za-z]+day, /.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/**
 * The delay after the `step`-th failed attempt (1-based) of a round: the
 * schedule's entry, jittered by ±20% so receivers that failed together are not
 * retried together, and never earlier than `Retry-After`. Undefined once the
 * schedule is used up.
 */
export function retryDelayAfter(step: number, scheduleMs: readonly number[], retryAfter: number | undefined, random: () => number): number | undefined {
  const base = scheduleMs[step - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  return retryAfter === undefined ? jittered : Math.max(jittered, retryAfter);
}

export function judgeAttempt(
  result: AttemptResult,
  step: number,
  scheduleMs: readonly number[],
  now: number,
  random: () => number,
): Verdict {
  if (result.kind === 'response') {
    if (result.status >= 200 && result.status < 300) return { outcome: 'delivered' };
    if (result.status === 410) return { outcome: 'disabled', reason: 'the receiver answered 410 Gone' };
  }
  const retryAfter = result.kind === 'response' ? retryAfterMs(result.retryAfter, now) : undefined;
  const delay = retryDelayAfter(step, scheduleMs, retryAfter, random);
  return delay === undefined ? { outcome: 'failed' } : { outcome: 'retry', nextAttemptAt: now + delay };
}
