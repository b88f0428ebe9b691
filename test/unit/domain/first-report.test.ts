/** A buy's first report: owed a period after its start, at its flight's end if sooner, a grace after the seller ends it if sooner still. */
import { describe, expect, it } from 'vitest';
import { firstReportDueOnEnd, firstReportExpectedBy, type FirstReportFacts } from '../../../src/domain/first-report.js';

const HOUR = 3_600_000;
const NOW = 10 * HOUR;
const policy = { graceMs: 500 };

describe('firstReportExpectedBy', () => {
  it('a period after the later of creation and flight start', () => {
    expect(firstReportExpectedBy(NOW, { start: null, end: null }, 'hourly')).toBe(NOW + HOUR);
    expect(firstReportExpectedBy(NOW, { start: NOW + 2 * HOUR, end: NOW + 30 * HOUR }, 'daily')).toBe(NOW + 26 * HOUR);
    expect(firstReportExpectedBy(NOW, { start: NOW - 5 * HOUR, end: NOW + 30 * HOUR }, 'hourly')).toBe(NOW + HOUR);
  });
  it("at the flight's end when the flight is shorter than a period; at once when it is over already", () => {
    expect(firstReportExpectedBy(NOW, { start: NOW, end: NOW + 1_500 }, 'hourly')).toBe(NOW + 1_500);
    expect(firstReportExpectedBy(NOW, { start: NOW, end: NOW + 3 * HOUR }, 'daily')).toBe(NOW + 3 * HOUR);
    expect(firstReportExpectedBy(NOW, { start: NOW - 2 * HOUR, end: NOW - HOUR }, 'daily')).toBe(NOW);
  });
});

describe('firstReportDueOnEnd', () => {
  const awaiting: FirstReportFacts = { status: 'active', flight_start: NOW - HOUR, report_due_at: NOW + HOUR, reports_received: 0, final_received: 0, gap_open: 0 };
  it('a buy the seller ended before its first report came owes it a grace from now (or sooner, if it was due sooner)', () => {
    expect(firstReportDueOnEnd(awaiting, 'completed', policy, NOW)).toBe(NOW + 500);
    expect(firstReportDueOnEnd(awaiting, 'canceled', policy, NOW)).toBe(NOW + 500);
    expect(firstReportDueOnEnd({ ...awaiting, report_due_at: NOW + 100 }, 'completed', policy, NOW)).toBe(NOW + 100);
  });
  it('owes nothing while it runs, once a report came or its silence was told, when its fires go elsewhere, or when it never ran', () => {
    expect(firstReportDueOnEnd(awaiting, 'active', policy, NOW)).toBeNull();
    expect(firstReportDueOnEnd({ ...awaiting, reports_received: 1 }, 'completed', policy, NOW)).toBeNull();
    expect(firstReportDueOnEnd({ ...awaiting, final_received: 1 }, 'completed', policy, NOW)).toBeNull();
    expect(firstReportDueOnEnd({ ...awaiting, gap_open: 1 }, 'completed', policy, NOW)).toBeNull();
    expect(firstReportDueOnEnd({ ...awaiting, report_due_at: null }, 'completed', policy, NOW)).toBeNull();
    expect(firstReportDueOnEnd(awaiting, 'rejected', policy, NOW)).toBeNull();
    expect(firstReportDueOnEnd({ ...awaiting, flight_start: NOW + HOUR }, 'canceled', policy, NOW)).toBeNull();
  });
});
