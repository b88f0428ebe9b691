/**
 * What a sandbox package delivers in one reporting period, and how that reads
 * as pacing. Pure and deterministic (the same buy always delivers the same
 * figures), so tests can predict them.
 *
 * - `linear`: the package's budget spread over the flight in proportion to
 *   each period's length, with a deterministic ±5 % wobble per period; the
 *   last period lands the total exactly on the budget (unless a pause lost
 *   more than half a period's worth: that stays lost).
 * - `under`: 40 % of linear (pacing index about 0.4): an under-delivering buy.
 * - `over`: 150 % of linear until the budget is gone (pacing index about
 *   1.5, then `budget_exhausted`): an over-delivering buy.
 *
 * A period in which the package (or its buy) is paused delivers nothing; the
 * flight does not stretch to make up for it. Spend is in whole cents;
 * impressions follow from the CPM rate, clicks from a fixed 0.2 % CTR.
 */
import { createHash } from 'node:crypto';
import type { Period } from './flight.js';

export type DeliveryCurve = 'linear' | 'under' | 'over';

const CURVE_FACTOR: Readonly<Record<DeliveryCurve, number>> = { linear: 1, under: 0.4, over: 1.5 };
const WOBBLE = 0.05;
const CLICK_THROUGH_RATE = 0.002;
/** How much more than its share the last linear period may deliver to land on the budget. */
const CATCH_UP = 0.5;

export interface PackageFigures {
  spend: number;
  impressions: number;
  clicks: number;
}

export const roundCents = (n: number): number => Math.round(n * 100) / 100;

/** A fixed number in [-0.05, 0.05] for a seed: the same seed, the same wobble. */
export function wobble(seed: string): number {
  const x = createHash('sha256').update(seed).digest().readUInt32BE(0) / 2 ** 32;
  return (x * 2 - 1) * WOBBLE;
}

/** Impressions and clicks that `spend` buys at a CPM `rate`. */
export function figuresFor(spend: number, rate: number): PackageFigures {
  const impressions = rate > 0 ? Math.round((spend / rate) * 1000) : 0;
  return { spend: roundCents(spend), impressions, clicks: Math.round(impressions * CLICK_THROUGH_RATE) };
}

export interface PeriodSpendInput {
  budget: number;
  curve: DeliveryCurve;
  /** Makes the wobble particular to this package, e.g. its package_id. */
  seed: string;
  periods: readonly Period[];
  index: number;
  /** What the package spent in the periods before this one. */
  spentBefore: number;
  paused: boolean;
}

/** The package's spend in period `index` (never below 0, never past its budget). */
export function periodSpend(p: PeriodSpendInput): number {
  const left = Math.max(0, roundCents(p.budget - p.spentBefore));
  if (p.paused || left === 0 || p.budget <= 0) return 0;
  const period = p.periods[p.index];
  if (!period) throw new Error(`no period ${p.index} in a flight of ${p.periods.length}`);
  const first = p.periods[0]!.start;
  const flight = p.periods[p.periods.length - 1]!.end - first;
  const share = (period.end - period.start) / flight;
  // The last period of a linear package absorbs the wobble, landing the total on
  // the budget; what a pause lost is more than that, and stays lost.
  const last = p.index === p.periods.length - 1;
  if (p.curve === 'linear' && last && left <= p.budget * share * (1 + CATCH_UP)) return left;
  const spend = p.budget * share * CURVE_FACTOR[p.curve] * (1 + wobble(`${p.seed}:${p.index}`));
  return Math.min(left, roundCents(spend));
}

/**
 * Cumulative spend against the linear plan through `through` (epoch ms):
 * 1.0 on track, below behind, above ahead; two decimals. Undefined before
 * the flight has run at all.
 */
export function pacingIndex(budget: number, spent: number, periods: readonly Period[], through: number): number | undefined {
  const first = periods[0]?.start;
  const end = periods[periods.length - 1]?.end;
  if (first === undefined || end === undefined || through <= first || budget <= 0) return undefined;
  const expected = (budget * (Math.min(through, end) - first)) / (end - first);
  return Math.round((spent / expected) * 100) / 100;
}

export type PackageDeliveryStatus = 'delivering' | 'completed' | 'budget_exhausted' | 'flight_ended';

/** The package's operational state after `delivered` of `total` periods. */
export function packageDeliveryStatus(budget: number, spent: number, delivered: number, total: number): PackageDeliveryStatus {
  const exhausted = budget > 0 && roundCents(budget - spent) <= 0;
  if (delivered >= total) return exhausted ? 'completed' : 'flight_ended';
  return exhausted ? 'budget_exhausted' : 'delivering';
}
