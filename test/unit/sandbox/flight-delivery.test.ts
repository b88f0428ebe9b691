/**
 * The sandbox's compressed flight (how a flight is cut into reporting
 * periods) and its spend curves (linear, under, over), as pure functions.
 */
import { describe, expect, it } from 'vitest';
import { FREQUENCY_MS, flightOf, planPeriods, type Period } from '../../../src/sandbox/flight.js';
import { figuresFor, packageDeliveryStatus, pacingIndex, periodSpend, roundCents, wobble, type DeliveryCurve } from '../../../src/sandbox/delivery.js';

const HOUR = FREQUENCY_MS.hourly;
const DAY = FREQUENCY_MS.daily;
const T0 = Date.parse('2026-05-01T00:00:00Z');

const contiguous = (periods: Period[]): boolean => periods.every((p, i) => i === 0 || p.start === periods[i - 1]!.end);

describe('planPeriods', () => {
  it('cuts a short flight into periods of the frequency, the last one cut at the flight end', () => {
    const periods = planPeriods(T0, T0 + 5 * HOUR + 30 * 60_000, 'hourly', 6);
    expect(periods).toHaveLength(6);
    expect(periods.slice(0, 5).every((p) => p.end - p.start === HOUR)).toBe(true);
    expect(periods[5]).toEqual({ start: T0 + 5 * HOUR, end: T0 + 5 * HOUR + 30 * 60_000 });
    expect(contiguous(periods)).toBe(true);
  });

  it('cuts a long flight into at most maxPeriods periods of whole frequency units', () => {
    const periods = planPeriods(T0, T0 + 180 * DAY, 'daily', 6);
    expect(periods).toHaveLength(6);
    expect(periods.every((p) => p.end - p.start === 30 * DAY)).toBe(true);
    const odd = planPeriods(T0, T0 + 500 * DAY, 'daily', 6);
    expect(odd.length).toBeLessThanOrEqual(6);
    expect(odd.slice(0, -1).every((p) => (p.end - p.start) % DAY === 0 && p.end - p.start === odd[0]!.end - odd[0]!.start)).toBe(true);
    expect(odd.at(-1)!.end).toBe(T0 + 500 * DAY);
    expect(contiguous(odd)).toBe(true);
  });

  it('a flight a hair past whole units is not one period more: the last period absorbs the hair', () => {
    const periods = planPeriods(T0, T0 + 4 * HOUR + 700, 'hourly', 4);
    expect(periods).toHaveLength(4);
    expect(periods[3]).toEqual({ start: T0 + 3 * HOUR, end: T0 + 4 * HOUR + 700 });
    expect(planPeriods(T0, T0 + 4 * HOUR + 10 * 60_000, 'hourly', 6)).toHaveLength(5);
  });

  it('monthly periods are 30 days; a flight of exactly maxPeriods units is cut into them', () => {
    const periods = planPeriods(T0, T0 + 3 * FREQUENCY_MS.monthly, 'monthly', 3);
    expect(periods.map((p) => p.end - p.start)).toEqual([30 * DAY, 30 * DAY, 30 * DAY]);
  });

  it('refuses a flight that does not end after it starts, and a bad maxPeriods', () => {
    expect(() => planPeriods(T0, T0, 'daily', 6)).toThrow(/end after/);
    expect(() => planPeriods(T0, T0 + DAY, 'daily', 0)).toThrow(/maxPeriods/);
  });
});

describe('flightOf', () => {
  const booked = T0 + 1234; // mid-second: asap starts at the whole second

  it('asap starts at booking; the end is the buyer’s', () => {
    const f = flightOf({ start_time: 'asap', end_time: '2026-05-01T06:00:00Z' }, booked, 'hourly', 6);
    expect(f.start).toBe('2026-05-01T00:00:01.000Z');
    expect(f.end).toBe('2026-05-01T06:00:00.000Z');
    expect(f.periods).toHaveLength(6);
  });

  it('a start in the future is kept; one in the past starts at booking', () => {
    expect(flightOf({ start_time: '2026-06-01T00:00:00Z', end_time: '2026-07-01T00:00:00Z' }, booked, 'daily', 6).start).toBe('2026-06-01T00:00:00.000Z');
    expect(flightOf({ start_time: '2026-04-01T00:00:00Z', end_time: '2026-07-01T00:00:00Z' }, booked, 'daily', 6).start).toBe('2026-05-01T00:00:01.000Z');
  });

  it('a missing or backwards end gives maxPeriods frequency units instead of failing', () => {
    const f = flightOf({ start_time: 'asap' }, T0, 'daily', 4);
    expect(Date.parse(f.end) - Date.parse(f.start)).toBe(4 * DAY);
    expect(flightOf({ start_time: 'asap', end_time: '2020-01-01T00:00:00Z' }, T0, 'hourly', 2).periods).toHaveLength(2);
  });
});

describe('spend curves', () => {
  const periods = planPeriods(T0, T0 + 6 * DAY, 'daily', 6);
  /** Runs a package through its whole flight; `pausedAt` periods deliver nothing. */
  const run = (curve: DeliveryCurve, budget = 6000, pausedAt: number[] = []): number[] => {
    const spends: number[] = [];
    for (let i = 0; i < periods.length; i++) {
      const spentBefore = roundCents(spends.reduce((a, b) => a + b, 0));
      spends.push(periodSpend({ budget, curve, seed: 'pkg_1', periods, index: i, spentBefore, paused: pausedAt.includes(i) }));
    }
    return spends;
  };

  it('linear spreads the budget with a small deterministic wobble and lands on it exactly', () => {
    const spends = run('linear');
    expect(roundCents(spends.reduce((a, b) => a + b, 0))).toBe(6000);
    for (const s of spends.slice(0, -1)) expect(Math.abs(s - 1000)).toBeLessThanOrEqual(50);
    expect(new Set(spends.slice(0, -1)).size).toBeGreaterThan(1);
    expect(run('linear')).toEqual(spends);
    expect(spends.every((s) => Number.isInteger(Math.round(s * 100)) && Math.abs(s * 100 - Math.round(s * 100)) < 1e-6)).toBe(true);
  });

  it('the wobble is within ±5 % and fixed per seed', () => {
    for (const seed of ['a', 'b', 'mb_1:pkg_1:0', 'mb_1:pkg_1:1']) {
      expect(Math.abs(wobble(seed))).toBeLessThanOrEqual(0.05);
      expect(wobble(seed)).toBe(wobble(seed));
    }
    expect(wobble('a')).not.toBe(wobble('b'));
  });

  it('under delivers about 40 % of linear, and pacing reads about 0.4', () => {
    const spends = run('under');
    const total = spends.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(0.37 * 6000);
    expect(total).toBeLessThan(0.43 * 6000);
    expect(pacingIndex(6000, spends[0]!, periods, periods[0]!.end)).toBeGreaterThan(0.35);
    expect(pacingIndex(6000, spends[0]!, periods, periods[0]!.end)).toBeLessThan(0.45);
  });

  it('over delivers 150 % of linear until the budget runs out, never past it', () => {
    const spends = run('over');
    expect(roundCents(spends.reduce((a, b) => a + b, 0))).toBe(6000);
    expect(spends[0]).toBeGreaterThan(1400);
    expect(spends.at(-1)).toBe(0);
    expect(pacingIndex(6000, spends[0]!, periods, periods[0]!.end)).toBeGreaterThan(1.2);
    const before = spends.slice(0, 4).reduce((a, b) => a + b, 0);
    expect(packageDeliveryStatus(6000, before, 4, 6)).toBe('budget_exhausted');
  });

  it('a paused period delivers nothing and the flight does not stretch: linear then ends under budget', () => {
    const spends = run('linear', 6000, [2]);
    expect(spends[2]).toBe(0);
    expect(Math.abs(spends[5]! - 1000)).toBeLessThanOrEqual(50);
    const total = spends.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(4800);
    expect(total).toBeLessThan(5200);
    const lastPaused = run('linear', 6000, [5]);
    expect(lastPaused[5]).toBe(0);
    expect(lastPaused.reduce((a, b) => a + b, 0)).toBeLessThan(6000);
  });

  it('a package without budget delivers nothing', () => {
    expect(run('linear', 0)).toEqual([0, 0, 0, 0, 0, 0]);
  });
});

describe('figures and status', () => {
  it('impressions follow the CPM, clicks a 0.2 % CTR', () => {
    expect(figuresFor(1000, 10)).toEqual({ spend: 1000, impressions: 100_000, clicks: 200 });
    expect(figuresFor(0.004, 10)).toEqual({ spend: 0, impressions: 0, clicks: 0 });
  });

  it('pacing is cumulative spend against the linear plan through a moment', () => {
    const periods = planPeriods(T0, T0 + 4 * DAY, 'daily', 4);
    expect(pacingIndex(4000, 1000, periods, T0 + DAY)).toBe(1);
    expect(pacingIndex(4000, 1000, periods, T0 + 2 * DAY)).toBe(0.5);
    expect(pacingIndex(4000, 0, periods, T0)).toBeUndefined();
  });

  it('delivery status: delivering, budget_exhausted, completed, flight_ended', () => {
    expect(packageDeliveryStatus(100, 50, 1, 4)).toBe('delivering');
    expect(packageDeliveryStatus(100, 100, 2, 4)).toBe('budget_exhausted');
    expect(packageDeliveryStatus(100, 100, 4, 4)).toBe('completed');
    expect(packageDeliveryStatus(100, 40, 4, 4)).toBe('flight_ended');
  });
});
