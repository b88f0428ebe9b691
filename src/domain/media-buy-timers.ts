/**
 * A live buy's timers (README, Media buys: backup polling). Pure. Each is a
 * column of the buy's row; `next_check_at`, the one the claim looks at, is the
 * earliest of them:
 *
 * - `status_check_at`: read the buy's status (`get_media_buys`), every
 *   ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS (jittered) while it is not terminal, and
 *   soon after every report;
 * - `report_due_at`: the next reporting fire is overdue (the seller's
 *   `next_expected_at`, or our estimate before its first fire, plus
 *   ADCP_ORCH_REPORT_GRACE_MS): the report is missing;
 * - `delivery_poll_at`: read the delivery (`get_media_buy_delivery`) now: a
 *   report went missing, a sequence number was skipped, the buy ended (its last
 *   figures), or, for a buy whose fires go elsewhere, on the status interval;
 * - `creative_check_at`: look at its creatives' reviews (`list_creatives`, then the
 *   buy's `creative_approvals` with a status read) every
 *   ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS while one is under review, or at a review's
 *   deadline (src/domain/creative-review.ts).
 *
 * Tracking ends (every timer null) once the final report has come, or the buy
 * is terminal and its last delivery has been read.
 */

import type { CreativePolicy } from './creative-review.js';

export interface BuyTimers {
  status_check_at: number | null;
  report_due_at: number | null;
  delivery_poll_at: number | null;
  creative_check_at: number | null;
}

export interface TrackingPolicy {
  /** ADCP_ORCH_REPORT_GRACE_MS. */
  graceMs: number;
  /** ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS. */
  statusIntervalMs: number;
  /** How creatives' reviews are followed; absent, a status read leaves creatives alone. */
  creatives?: CreativePolicy;
}

/** A status read soon after a report, not at once: a burst of fires makes one read. */
export const STATUS_AFTER_REPORT_MS = 1_000;

export function nextCheckOf(t: BuyTimers): number | null {
  const due = [t.status_check_at, t.report_due_at, t.delivery_poll_at, t.creative_check_at].filter((v): v is number => v !== null);
  return due.length === 0 ? null : Math.min(...due);
}

/** The next periodic status read: the interval, plus up to a tenth more, so buys made together spread out. */
export function nextStatusCheck(now: number, policy: TrackingPolicy, random: () => number): number {
  return now + policy.statusIntervalMs + Math.round(policy.statusIntervalMs * 0.1 * random());
}

/** When a fire expected at `expectedAt` counts as missing. */
export function reportDueAt(expectedAt: number, policy: TrackingPolicy): number {
  return expectedAt + policy.graceMs;
}

/** The timer columns with `next_check_at` as their earliest. */
export function withNextCheck<T extends BuyTimers>(t: T): T & { next_check_at: number | null } {
  return { ...t, next_check_at: nextCheckOf(t) };
}

export const NO_TIMERS: BuyTimers = { status_check_at: null, report_due_at: null, delivery_poll_at: null, creative_check_at: null };
