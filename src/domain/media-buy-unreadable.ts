/**
 * A buy its seller no longer answers for (README, Media buys: unreadable): its
 * status read lists no row for it, or says `MEDIA_BUY_NOT_FOUND` (the seller
 * restarted and forgot it, or dropped it). Pure.
 *
 * It is recorded once, when it starts (`status_unreadable`, raising
 * `media_buy.unreadable`), kept on the buy (`unreadable_since`, `unreadable_reason`)
 * and shown, and ended once, when the seller lists the buy again
 * (`status_readable`, raising `media_buy.readable`). Meanwhile the buy is asked
 * again with backoff: each wait as long as the buy has been unreadable so far (so
 * the reads come at about 1, 2, 4, 8… times the first wait after it started), up to
 * a few status intervals, jittered upward. Why not at the status pace: nothing the
 * seller says is lost by asking less often, and a read per interval per forgotten buy,
 * each written down, is what grew the events table without bound.
 */
import type { NewEventSpec, PlanPart } from './media-buy-plans.js';
import type { TrackingPolicy } from './media-buy-timers.js';

/** What these rules read of the buy. */
export interface UnreadableFacts {
  unreadable_since: number | null;
  unreadable_reason: string | null;
}

/** The first wait after a buy turned unreadable (or the status interval, if shorter). */
export const UNREADABLE_FIRST_RETRY_MS = 1_000;
/** The longest wait between two reads of an unreadable buy, in status intervals. */
export const UNREADABLE_MAX_INTERVALS = 4;

/** Why the seller's answer left the buy unreadable, as people read it. */
export function unreadableReason(error?: { code: string; message?: string }): string {
  if (!error) return 'the seller did not list this buy';
  return `the seller answered ${error.code}${error.message ? `: ${error.message}` : ''}`;
}

/**
 * The seller's answer has no row for the buy: recorded when it starts (one event),
 * nothing more while it lasts.
 */
export function unreadablePart(buy: UnreadableFacts, reason: string, source: string, now: number): PlanPart {
  if (buy.unreadable_since !== null) return { patch: {}, events: [] };
  return {
    patch: { unreadable_since: now, unreadable_reason: reason },
    events: [{ source, kind: 'status_unreadable', detail: { reason } }],
  };
}

/** The seller lists the buy again: the unreadable spell ends (one event), if there was one. */
export function readablePart(buy: UnreadableFacts, source: string, now: number): PlanPart {
  if (buy.unreadable_since === null) return { patch: {}, events: [] };
  const event: NewEventSpec = {
    source,
    kind: 'status_readable',
    detail: { unreadable_since: new Date(buy.unreadable_since).toISOString(), unreadable_ms: Math.max(0, now - buy.unreadable_since), reason: buy.unreadable_reason },
  };
  return { patch: { unreadable_since: null, unreadable_reason: null }, events: [event] };
}

/** When to ask again about a buy unreadable since `since`: backoff as the module comment says. */
export function unreadableRetryAt(now: number, since: number, policy: Pick<TrackingPolicy, 'statusIntervalMs'>, random: () => number): number {
  const first = Math.min(UNREADABLE_FIRST_RETRY_MS, policy.statusIntervalMs);
  const wait = Math.min(Math.max(first, now - since), policy.statusIntervalMs * UNREADABLE_MAX_INTERVALS);
  return now + wait + Math.round(wait * 0.2 * random());
}
