/**
 * The sandbox's compressed flight: how a buy's flight is cut into the
 * reporting periods it delivers and reports, one period per tick of the
 * accelerated clock (see docs/SANDBOX.md, "Live media buys").
 *
 * The flight is the buyer's own (`start_time`/`end_time`; `asap` is the moment
 * of booking), so everything a buyer computes from it (linear pacing, the plan
 * line of a chart, the final report at the flight's end) agrees with what the
 * sandbox reports. A flight is cut into periods of the reporting frequency
 * (hourly: 1 h, daily: 1 day, monthly: 30 days) when it holds at most
 * `maxPeriods` of them; a longer flight is cut into at most `maxPeriods`
 * periods, each a whole number of frequency units, so that a 180-day daily
 * flight still ends after six ticks (30-day periods) instead of 180. The last
 * period ends at the flight's end (shorter, or up to 1 % of a unit longer).
 * Pure: no clock, no state.
 */

export const REPORTING_FREQUENCIES = ['hourly', 'daily', 'monthly'] as const;
export type ReportingFrequency = (typeof REPORTING_FREQUENCIES)[number];

const HOUR_MS = 3_600_000;
export const FREQUENCY_MS: Readonly<Record<ReportingFrequency, number>> = {
  hourly: HOUR_MS,
  daily: 24 * HOUR_MS,
  monthly: 30 * 24 * HOUR_MS,
};

/** The share of a frequency unit a flight may overrun before it counts as another unit. */
const SLACK = 0.01;

/** A reporting period in epoch milliseconds, `end` exclusive (the next period starts there). */
export interface Period {
  start: number;
  end: number;
}

/** Cuts [start, end) into at most `maxPeriods` contiguous periods (see the module comment). */
export function planPeriods(start: number, end: number, frequency: ReportingFrequency, maxPeriods: number): Period[] {
  if (!Number.isInteger(maxPeriods) || maxPeriods < 1) throw new Error(`maxPeriods must be a positive integer, got ${maxPeriods}`);
  if (!(end > start)) throw new Error('a flight must end after it starts');
  const unit = FREQUENCY_MS[frequency];
  // A flight a hair past a whole number of units (an `asap` start rounded to the second) is not one more period.
  const units = Math.max(1, Math.ceil((end - start) / unit - SLACK));
  const perPeriod = Math.ceil(units / maxPeriods);
  const count = Math.ceil(units / perPeriod);
  const length = unit * perPeriod;
  return Array.from({ length: count }, (_, i) => ({ start: start + i * length, end: i === count - 1 ? end : start + (i + 1) * length }));
}

export interface Flight {
  /** ISO start and end as the sandbox flies them. */
  start: string;
  end: string;
  frequency: ReportingFrequency;
  periods: Period[];
}

/**
 * The flight of a `create_media_buy` request booked at `bookedAt` (epoch ms).
 * `asap`, or a start before booking, starts at booking (whole seconds). A
 * missing, unreadable or non-positive flight gets `maxPeriods` frequency
 * units from its start rather than a refusal: the sandbox never refused such
 * requests, and buyers' tests rely on that.
 */
export function flightOf(request: Record<string, unknown>, bookedAt: number, frequency: ReportingFrequency, maxPeriods: number): Flight {
  const booked = Math.floor(bookedAt / 1000) * 1000;
  const askedStart = typeof request.start_time === 'string' ? Date.parse(request.start_time) : NaN;
  const start = Number.isNaN(askedStart) || askedStart < booked ? booked : askedStart;
  const askedEnd = typeof request.end_time === 'string' ? Date.parse(request.end_time) : NaN;
  const end = !Number.isNaN(askedEnd) && askedEnd > start ? askedEnd : start + FREQUENCY_MS[frequency] * maxPeriods;
  return {
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
    frequency,
    periods: planPeriods(start, end, frequency, maxPeriods),
  };
}

/** The ISO form of a period, as reports carry it. */
export function isoPeriod(p: Period): { start: string; end: string } {
  return { start: new Date(p.start).toISOString(), end: new Date(p.end).toISOString() };
}
