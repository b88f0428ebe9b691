/**
 * A live buy's first report (README, Media buys: backup polling): when it is owed
 * before the seller has said anything of its own (`next_expected_at` comes with its
 * fires). Pure. Its silence past that time + ADCP_ORCH_REPORT_GRACE_MS is a missing
 * report like any later one (media-buy-plans.ts, silencePart): one
 * `media_buy.report_missing`, then the delivery read from the seller.
 *
 * It is owed a period after the later of the buy's creation and its flight's start
 * (the seller reports a period once it is over), or sooner:
 * - at the flight's end, when the flight is shorter than a period (its only period is
 *   over then);
 * - a grace after the seller ends the buy, when it does so before any report came (a
 *   buy that is over has nothing more to wait for, and its seller reports a `final`
 *   period when it ends). Without this, a seller that never fires, and whose buy ends
 *   before a whole period, was read once at its end and forgotten: no report was ever
 *   told missing.
 */
import { isTerminalBuyStatus } from './media-buy-status.js';
import type { TrackingPolicy } from './media-buy-timers.js';
import { firstReportExpectedAt, type ReportingFrequency } from './reporting-webhook.js';

/** When the first report is expected, from what the buy is made with. */
export function firstReportExpectedBy(createdAt: number, flight: { start: number | null; end: number | null }, frequency: ReportingFrequency): number {
  const afterAPeriod = firstReportExpectedAt(createdAt, flight.start, frequency);
  if (flight.end === null) return afterAPeriod;
  return Math.min(afterAPeriod, Math.max(createdAt, flight.end));
}

/** What `firstReportDueOnEnd` reads of the buy. */
export interface FirstReportFacts {
  status: string;
  flight_start: number | null;
  report_due_at: number | null;
  reports_received: number;
  final_received: number;
  gap_open: number;
}

/**
 * A buy the seller says is over (`status` terminal) while its first report is still
 * awaited: the time that report is now due, at the latest a grace from `now`. Null when
 * none is awaited: a report came, its silence is told already, its fires go elsewhere
 * (no `report_due_at`), or it never ran (rejected, or ended before its flight began:
 * there is nothing to report).
 */
export function firstReportDueOnEnd(buy: FirstReportFacts, status: string, policy: Pick<TrackingPolicy, 'graceMs'>, now: number): number | null {
  if (!isTerminalBuyStatus(status) || status === 'rejected') return null;
  if (buy.report_due_at === null || buy.reports_received > 0 || buy.final_received === 1 || buy.gap_open === 1) return null;
  if (buy.flight_start !== null && buy.flight_start > now) return null;
  return Math.min(buy.report_due_at, now + policy.graceMs);
}
