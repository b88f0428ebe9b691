/**
 * What a report, a status read or the seller's silence changes on a live buy:
 * its sequence bookkeeping, gaps, status and timers (README, Media buys). Pure;
 * the engine writes what these decide in the change's transaction.
 */
import { firstReportDueOnEnd } from './first-report.js';
import { isMediaBuyStatus, isTerminalBuyStatus } from './media-buy-status.js';
import { firesReachUs, frequencyPeriodMs, isReportingFrequency } from './reporting-webhook.js';
import { NO_TIMERS, nextStatusCheck, reportDueAt, STATUS_AFTER_REPORT_MS, withNextCheck, type BuyTimers, type TrackingPolicy } from './media-buy-timers.js';

/** The buy columns these rules read. */
export interface TrackedBuy extends BuyTimers {
  status: string;
  last_sequence: number | null;
  gap_open: number;
  reports_missing: number;
  final_received: number;
  next_expected_at: number | null;
  reports_received: number;
  flight_start: number | null;
  report_frequency: string | null;
  /** hmac | bearer | rfc9421: fires come to us; none: they go elsewhere and we poll. */
  reporting_auth: string;
  ended_at: number | null;
}

export interface NewEventSpec {
  source: string;
  kind: string;
  from?: string | null;
  to?: string | null;
  detail?: unknown;
}

export interface PlanPart {
  patch: Record<string, unknown>;
  events: NewEventSpec[];
}

/** A fire's sequence number against the last one seen: a jump is a gap (one `report_missing`, unless a silence already told). */
export function sequencePart(buy: TrackedBuy, sequenceNumber: number | undefined, source: string): PlanPart & { gap: boolean } {
  const patch: Record<string, unknown> = {};
  const events: NewEventSpec[] = [];
  // A fire ends a silence: the next one starts a new gap.
  if (buy.gap_open === 1) patch.gap_open = 0;
  if (sequenceNumber === undefined) return { patch, events, gap: false };
  const last = buy.last_sequence;
  const expected = (last ?? 0) + 1;
  const gap = sequenceNumber > expected;
  if (gap && buy.gap_open === 0) {
    patch.reports_missing = buy.reports_missing + 1;
    events.push({
      source,
      kind: 'report_missing',
      detail: { reason: 'sequence_gap', expected_sequence: expected, received_sequence: sequenceNumber, missing: sequenceNumber - expected },
    });
  }
  // Out of order (lower than the last) fills in; the last stays the highest seen.
  if (last === null || sequenceNumber > last) patch.last_sequence = sequenceNumber;
  return { patch, events, gap };
}

/** Expected the next report: the seller's word when it gives one, else a period after the last. */
function nextExpected(buy: TrackedBuy, stated: number | undefined, now: number): number | null {
  if (stated !== undefined) return stated;
  if (!isReportingFrequency(buy.report_frequency)) return null;
  return now + frequencyPeriodMs(buy.report_frequency);
}

/**
 * The timers after a report came. A fire resets the watchdog to its
 * `next_expected_at` (+ grace); a gap asks for a delivery read now; a status read
 * follows every report; a `final` report ends the tracking.
 */
export function timersAfterReport(
  buy: TrackedBuy,
  report: { fire: boolean; final: boolean; nextExpectedAt?: number; gap: boolean },
  policy: TrackingPolicy,
  now: number,
): Record<string, unknown> {
  if (report.final) {
    // The last report: nothing more is expected. A gap before it is still read from the seller, then tracking ends.
    const ended = report.gap ? null : (buy.ended_at ?? now);
    return { ...withNextCheck({ ...NO_TIMERS, delivery_poll_at: report.gap ? now : null }), final_received: 1, next_expected_at: null, ended_at: ended };
  }
  if (buy.ended_at !== null) return {};
  const terminal = isTerminalBuyStatus(buy.status);
  const timers: BuyTimers = {
    status_check_at: terminal ? null : Math.min(buy.status_check_at ?? Infinity, now + STATUS_AFTER_REPORT_MS),
    report_due_at: buy.report_due_at,
    delivery_poll_at: report.gap ? now : buy.delivery_poll_at,
    creative_check_at: terminal ? null : buy.creative_check_at,
  };
  const patch: Record<string, unknown> = {};
  if (report.fire && firesReachUs(buy.reporting_auth)) {
    const expected = nextExpected(buy, report.nextExpectedAt, now);
    patch.next_expected_at = expected;
    timers.report_due_at = expected === null ? null : reportDueAt(expected, policy);
  }
  return { ...patch, ...withNextCheck(timers) };
}

/** A status the seller stated (a status read, a report row), if it changes anything: terminal is absorbing. */
export function statusPart(buy: { status: string }, observed: unknown, source: string): PlanPart | null {
  if (!isMediaBuyStatus(observed) || observed === buy.status || isTerminalBuyStatus(buy.status)) return null;
  return { patch: { status: observed }, events: [{ source, kind: 'status_changed', from: buy.status, to: observed }] };
}

/**
 * The timers after a status read: the next periodic read while the buy runs; once
 * it is terminal, one last delivery read (its final figures), after which tracking ends
 * (a buy over before its first report came waits for that report first, a grace at most).
 */
export function timersAfterStatusRead(buy: TrackedBuy, status: string, policy: TrackingPolicy, now: number, random: () => number): Record<string, unknown> {
  if (buy.ended_at !== null) return {};
  // A buy that ended has no creative left to review for it.
  if (isTerminalBuyStatus(status)) {
    // Over before its first report came: that report's silence is told first, then the last read (first-report.ts).
    const firstDue = firstReportDueOnEnd(buy, status, policy, now);
    if (firstDue !== null) return withNextCheck({ ...NO_TIMERS, report_due_at: firstDue });
    return withNextCheck({ ...NO_TIMERS, delivery_poll_at: buy.final_received ? null : now });
  }
  return withNextCheck({ ...pick(buy), status_check_at: nextStatusCheck(now, policy, random) });
}

/**
 * The timers after a delivery read (a poll): a terminal buy's tracking ends; a buy
 * whose fires go elsewhere is read again on the status interval; otherwise the
 * read is done until a gap or a silence asks again.
 */
export function timersAfterDeliveryRead(buy: TrackedBuy, policy: TrackingPolicy, now: number, random: () => number): Record<string, unknown> {
  if (buy.ended_at !== null) return {};
  if (isTerminalBuyStatus(buy.status) || buy.final_received === 1) {
    // Its first report still awaited (first-report.ts): tracking ends once that is in, or told missing.
    const firstDue = firstReportDueOnEnd(buy, buy.status, policy, now);
    if (firstDue !== null) return withNextCheck({ ...NO_TIMERS, report_due_at: firstDue });
    return { ...withNextCheck(NO_TIMERS), ended_at: now };
  }
  const delivery_poll_at = firesReachUs(buy.reporting_auth) ? null : nextStatusCheck(now, policy, random);
  return withNextCheck({ ...pick(buy), delivery_poll_at });
}

/**
 * The seller has been silent past the report's due time: the report is missing.
 * People are told once per silence (until a fire comes, the gap stays open); the
 * delivery is read now and again each period while the silence lasts.
 */
export function silencePart(buy: TrackedBuy, policy: TrackingPolicy, now: number): PlanPart {
  const period = isReportingFrequency(buy.report_frequency) ? frequencyPeriodMs(buy.report_frequency) : policy.statusIntervalMs;
  const patch: Record<string, unknown> = {
    ...withNextCheck({ ...pick(buy), report_due_at: now + Math.max(period, policy.graceMs), delivery_poll_at: now }),
  };
  const events: NewEventSpec[] = [];
  if (buy.gap_open === 0) {
    patch.gap_open = 1;
    patch.reports_missing = buy.reports_missing + 1;
    events.push({ source: 'timer', kind: 'report_missing', detail: { reason: 'overdue', expected_at: buy.next_expected_at === null ? null : new Date(buy.next_expected_at).toISOString(), grace_ms: policy.graceMs } });
  }
  return { patch, events };
}

function pick(t: BuyTimers): BuyTimers {
  return { status_check_at: t.status_check_at, report_due_at: t.report_due_at, delivery_poll_at: t.delivery_poll_at, creative_check_at: t.creative_check_at };
}
