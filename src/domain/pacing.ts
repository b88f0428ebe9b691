/**
 * Pacing: is a buy spending its budget at the rate its flight needs? Our own
 * rule (the AdCP plans carry budgets and flights, not pacing thresholds). Pure.
 *
 * Expected spend by the time the data runs to (`through`) is the budget times
 * the elapsed fraction of the flight (linear); the ratio is spend over that.
 * When the seller gives a `pacing_index` (its own actual-over-expected, which
 * knows its delivery curve) that index is the ratio instead. Below `under` the
 * buy is under-pacing, above `over` over-pacing; before `min_elapsed` of the
 * flight has gone by (or with no budget, flight or data) it is `not_started`:
 * early ratios swing too much to alert on.
 *
 * Only whole data is judged (`judgeableReading`): figures the seller says are not all
 * in yet (a `delayed` report, a row `reporting_delayed`) read as under-pacing for a buy
 * that is on plan, and the report completing them a moment later reads on track again:
 * a crossing that never happened, told to people. Such a reading keeps the state the
 * buy had (`nextPacing`) until whole figures come.
 */

export interface PacingThresholds {
  /** Ratio below which a buy is under-pacing (default 0.8). */
  under: number;
  /** Ratio above which a buy is over-pacing (default 1.2). */
  over: number;
  /** Fraction of the flight that must have gone by before pacing is judged (default 0.1). */
  min_elapsed: number;
}

export const DEFAULT_PACING: PacingThresholds = { under: 0.8, over: 1.2, min_elapsed: 0.1 };

export const PACING_STATES = ['on_track', 'under', 'over', 'not_started'] as const;
export type PacingState = (typeof PACING_STATES)[number];

export interface PacingInput {
  budget: number | null;
  flightStart: number | null;
  flightEnd: number | null;
  /** Spend so far. */
  spend: number;
  /** The moment the spend figure runs to (the end of the latest period reported), epoch ms. */
  through: number | null;
  /** The seller's own pacing index, when it gives one. */
  pacingIndex?: number | null;
}

export interface Pacing {
  expected_spend: number | null;
  ratio: number | null;
  state: PacingState;
}

export function pacingOf(input: PacingInput, t: PacingThresholds = DEFAULT_PACING): Pacing {
  const { budget, flightStart, flightEnd, through } = input;
  if (budget === null || budget <= 0 || flightStart === null || flightEnd === null || flightEnd <= flightStart || through === null) {
    return { expected_spend: null, ratio: null, state: 'not_started' };
  }
  const elapsed = clamp((through - flightStart) / (flightEnd - flightStart), 0, 1);
  const expected = round(budget * elapsed);
  const index = input.pacingIndex;
  const ratio = index !== undefined && index !== null && Number.isFinite(index) ? index : expected > 0 ? input.spend / expected : null;
  if (ratio === null || elapsed < t.min_elapsed) return { expected_spend: expected, ratio: ratio === null ? null : round(ratio), state: 'not_started' };
  const state: PacingState = ratio < t.under ? 'under' : ratio > t.over ? 'over' : 'on_track';
  return { expected_spend: expected, ratio: round(ratio), state };
}

/**
 * The alert a change of pacing state raises: one when a buy crosses into
 * under- or over-pacing, none while it stays there (one notification per
 * crossing, not per report) and none on recovering.
 */
export function pacingAlert(before: PacingState, after: PacingState): 'under' | 'over' | null {
  if (after === before) return null;
  return after === 'under' || after === 'over' ? after : null;
}

/** Row statuses by which a seller says a buy's figures for the period are not all in (or not there at all). */
const INCOMPLETE_ROW_STATUSES: ReadonlySet<string> = new Set(['reporting_delayed', 'failed']);

/**
 * Whether a delivery reading can be judged: not when the seller says its figures are not
 * all in (a `delayed` report: the data later than usual; the buy's row `reporting_delayed`
 * or `failed`; a report flagged `partial_data` whose row does not say what it is), nor
 * while the buy's figures still count such a report (`figuresArePartial`).
 */
export function judgeableReading(r: { notificationType: string; partialData: boolean; rowStatus?: string; figuresPartial?: boolean }): boolean {
  if (r.notificationType === 'delayed' || r.figuresPartial) return false;
  if (r.rowStatus !== undefined) return !INCOMPLETE_ROW_STATUSES.has(r.rowStatus);
  return !r.partialData;
}

/** A stored report as these rules see it. */
interface StoredReading {
  notification_type: string | null;
  status?: string | null;
}

function partialReport(r: StoredReading): boolean {
  return r.notification_type === 'delayed' || (r.status != null && INCOMPLETE_ROW_STATUSES.has(r.status));
}

/**
 * Whether a buy's figures count a report its seller said was not whole: its latest poll's
 * snapshot, or a period reported after it (the periods before it are the snapshot's, which
 * replaces them: src/domain/media-buy-delivery.ts); the period reports nothing superseded.
 */
export function figuresArePartial(periods: Array<StoredReading & { period_start: number }>, snapshot: (StoredReading & { period_end: number }) | null | undefined): boolean {
  if (snapshot && partialReport(snapshot)) return true;
  return periods.some((e) => (!snapshot || e.period_start >= snapshot.period_end) && partialReport(e));
}

/**
 * The pacing a buy has after a reading, and the alert it raises: the pacing judged on it,
 * or, when the reading cannot be judged, the pacing the buy had, unchanged and silent.
 */
export function nextPacing(before: Pacing, judged: Pacing, judgeable: boolean): { pacing: Pacing; alert: 'under' | 'over' | null } {
  if (!judgeable) return { pacing: before, alert: null };
  return { pacing: judged, alert: pacingAlert(before.state, judged.state) };
}

/**
 * A buy-level pacing index from its packages' (weighted by package budget when
 * every package with an index has one), or null when no package has one.
 */
export function buyPacingIndex(packages: Array<{ budget?: number | null; pacing_index?: number | null }>): number | null {
  const withIndex = packages.filter((p) => typeof p.pacing_index === 'number' && Number.isFinite(p.pacing_index));
  if (withIndex.length === 0) return null;
  const weighted = withIndex.every((p) => typeof p.budget === 'number' && p.budget > 0);
  if (!weighted) return withIndex.reduce((s, p) => s + p.pacing_index!, 0) / withIndex.length;
  const total = withIndex.reduce((s, p) => s + p.budget!, 0);
  return withIndex.reduce((s, p) => s + p.pacing_index! * p.budget!, 0) / total;
}

/** Whether thresholds make sense together (for settings validation). */
export function pacingThresholdProblem(t: PacingThresholds): string | null {
  if (!(t.under > 0 && t.under <= 1)) return 'pacing.under must be above 0 and at most 1';
  if (!(t.over >= 1 && t.over <= 100)) return 'pacing.over must be from 1 to 100';
  if (!(t.min_elapsed >= 0 && t.min_elapsed < 1)) return 'pacing.min_elapsed must be from 0 up to (not including) 1';
  return null;
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}

function round(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}
