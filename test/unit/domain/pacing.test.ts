/** Pacing: linear by flight or the seller's index, thresholds, not_started, one alert per crossing. */
import { describe, expect, it } from 'vitest';
import { buyPacingIndex, DEFAULT_PACING, figuresArePartial, judgeableReading, nextPacing, pacingAlert, pacingOf, pacingThresholdProblem, type Pacing, type PacingState } from '../../../src/domain/pacing.js';

const flight = { budget: 1000, flightStart: 0, flightEnd: 100 };

describe('pacingOf', () => {
  it('compares spend with budget × elapsed fraction of the flight, at the time the data runs to', () => {
    expect(pacingOf({ ...flight, spend: 500, through: 50 })).toEqual({ expected_spend: 500, ratio: 1, state: 'on_track' });
    expect(pacingOf({ ...flight, spend: 300, through: 50 })).toEqual({ expected_spend: 500, ratio: 0.6, state: 'under' });
    expect(pacingOf({ ...flight, spend: 700, through: 50 })).toEqual({ expected_spend: 500, ratio: 1.4, state: 'over' });
    // The thresholds themselves are on track.
    expect(pacingOf({ ...flight, spend: 400, through: 50 }).state).toBe('on_track');
    expect(pacingOf({ ...flight, spend: 600, through: 50 }).state).toBe('on_track');
  });
  it("uses the seller's pacing index when there is one", () => {
    expect(pacingOf({ ...flight, spend: 500, through: 50, pacingIndex: 0.5 })).toMatchObject({ ratio: 0.5, state: 'under' });
  });
  it('is not_started before min_elapsed, before any data, and without a budget or flight', () => {
    expect(pacingOf({ ...flight, spend: 0, through: 5 })).toMatchObject({ state: 'not_started', expected_spend: 50, ratio: 0 });
    expect(pacingOf({ ...flight, spend: 0, through: null }).state).toBe('not_started');
    expect(pacingOf({ ...flight, budget: null, spend: 10, through: 50 }).state).toBe('not_started');
    expect(pacingOf({ ...flight, flightEnd: null, spend: 10, through: 50 }).state).toBe('not_started');
  });
  it('clamps past the flight and follows tenant thresholds', () => {
    expect(pacingOf({ ...flight, spend: 1000, through: 500 })).toMatchObject({ expected_spend: 1000, ratio: 1 });
    expect(pacingOf({ ...flight, spend: 450, through: 50 }, { under: 0.95, over: 1.05, min_elapsed: 0 }).state).toBe('under');
  });
});

describe('pacingAlert', () => {
  it('alerts once when crossing into under or over, never while staying or on recovery', () => {
    const path: PacingState[] = ['not_started', 'under', 'under', 'on_track', 'over', 'over', 'under'];
    const alerts = path.slice(1).map((s, i) => pacingAlert(path[i]!, s));
    expect(alerts).toEqual(['under', null, null, 'over', null, 'under']);
  });
});

describe('judging only whole figures', () => {
  it("an on-plan buy whose first hour is reported late (a delayed report of a tenth), then whole: no crossing, no alert", () => {
    const notStarted: Pacing = { state: 'not_started', ratio: null, expected_spend: null };
    // Partial: a tenth of the plan by then. Judged as it stands it is under-pacing.
    const partial = pacingOf({ ...flight, spend: 25, through: 25 });
    expect(partial.state).toBe('under');
    const held = nextPacing(notStarted, partial, judgeableReading({ notificationType: 'delayed', partialData: true, rowStatus: 'reporting_delayed' }));
    expect(held).toEqual({ pacing: notStarted, alert: null });
    // Whole: on plan.
    const whole = nextPacing(held.pacing, pacingOf({ ...flight, spend: 250, through: 25 }), judgeableReading({ notificationType: 'scheduled', partialData: false, rowStatus: 'active' }));
    expect(whole).toEqual({ pacing: { expected_spend: 250, ratio: 1, state: 'on_track' }, alert: null });
  });
  it('a real crossing on whole figures still alerts, once', () => {
    const onTrack: Pacing = { state: 'on_track', ratio: 1, expected_spend: 500 };
    const under = pacingOf({ ...flight, spend: 300, through: 50 });
    expect(nextPacing(onTrack, under, true)).toEqual({ pacing: under, alert: 'under' });
    expect(nextPacing(under, pacingOf({ ...flight, spend: 350, through: 60 }), true).alert).toBeNull();
  });
  it('tells partial readings: delayed, a row reporting_delayed or failed, partial_data without a row status, figures still counting one', () => {
    expect(judgeableReading({ notificationType: 'scheduled', partialData: false })).toBe(true);
    expect(judgeableReading({ notificationType: 'final', partialData: true, rowStatus: 'completed' })).toBe(true);
    expect(judgeableReading({ notificationType: 'delayed', partialData: false, rowStatus: 'active' })).toBe(false);
    expect(judgeableReading({ notificationType: 'scheduled', partialData: true, rowStatus: 'reporting_delayed' })).toBe(false);
    expect(judgeableReading({ notificationType: 'scheduled', partialData: false, rowStatus: 'failed' })).toBe(false);
    expect(judgeableReading({ notificationType: 'scheduled', partialData: true })).toBe(false);
    expect(judgeableReading({ notificationType: 'scheduled', partialData: false, rowStatus: 'active', figuresPartial: true })).toBe(false);
  });
  it("figures are partial while they count a partial report: a period after the latest poll's snapshot, or that snapshot", () => {
    const delayed = { notification_type: 'delayed', status: 'reporting_delayed', period_start: 0 };
    const whole = { notification_type: 'scheduled', status: 'active', period_start: 10 };
    expect(figuresArePartial([whole], null)).toBe(false);
    expect(figuresArePartial([delayed, whole], null)).toBe(true);
    expect(figuresArePartial([{ ...whole, status: 'reporting_delayed' }], null)).toBe(true);
    // A snapshot through 10 replaces the periods before it.
    expect(figuresArePartial([delayed, whole], { notification_type: null, status: 'active', period_end: 10 })).toBe(false);
    expect(figuresArePartial([whole], { notification_type: null, status: 'reporting_delayed', period_end: 10 })).toBe(true);
  });
});

describe('buyPacingIndex', () => {
  it('weights package indexes by budget, or averages them', () => {
    expect(buyPacingIndex([{ budget: 300, pacing_index: 1 }, { budget: 100, pacing_index: 0.2 }])).toBeCloseTo(0.8);
    expect(buyPacingIndex([{ pacing_index: 1 }, { pacing_index: 0.5 }])).toBe(0.75);
    expect(buyPacingIndex([{ budget: 5 }])).toBeNull();
  });
});

describe('pacingThresholdProblem', () => {
  it('accepts the defaults and refuses nonsense', () => {
    expect(pacingThresholdProblem(DEFAULT_PACING)).toBeNull();
    expect(pacingThresholdProblem({ under: 0, over: 1.2, min_elapsed: 0.1 })).toMatch(/under/);
    expect(pacingThresholdProblem({ under: 0.8, over: 0.9, min_elapsed: 0.1 })).toMatch(/over/);
    expect(pacingThresholdProblem({ under: 0.8, over: 1.2, min_elapsed: 1 })).toMatch(/min_elapsed/);
  });
});
