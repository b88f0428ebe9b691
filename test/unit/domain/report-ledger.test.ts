/** The delivery ledger: dedupe keys, which report supersedes which, totals counting each period once, and the buy's figures with a poll. */
import { describe, expect, it } from 'vitest';
import { fireDedupeKey, ledgerTotals, placeInLedger, reportDedupeKey, type LedgerEntry } from '../../../src/domain/report-ledger.js';
import { deliveryFigures } from '../../../src/domain/media-buy-delivery.js';

const H = 3_600_000;
let n = 0;
const entry = (start: number, spend: number, over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  id: `r${++n}`,
  kind: 'period',
  notification_type: 'scheduled',
  sequence_number: n,
  period_start: start,
  period_end: start + H,
  impressions: spend * 100,
  spend,
  clicks: null,
  by_package: [{ package_id: 'p1', spend, impressions: spend * 100 }],
  received_at: n,
  superseded_by: null,
  ...over,
});

describe('dedupe keys', () => {
  it('a fire is known by its sender key, else by its content', () => {
    expect(fireDedupeKey('abc-key-0123456789', 'sha256:x')).toBe('abc-key-0123456789');
    expect(fireDedupeKey(undefined, 'sha256:x')).toBe('content:sha256:x');
  });
  it('a report by (type, sequence, period); an adjusted one of the same period differs; a snapshot by its figure', () => {
    const base = { kind: 'period' as const, notificationType: 'scheduled', sequenceNumber: 2, period: { start: 0, end: H }, spend: 5, impressions: 500 };
    expect(reportDedupeKey(base)).toBe(reportDedupeKey({ ...base, spend: 6 }));
    expect(reportDedupeKey(base)).not.toBe(reportDedupeKey({ ...base, notificationType: 'adjusted', sequenceNumber: 3 }));
    expect(reportDedupeKey({ ...base, sequenceNumber: null })).toBe('scheduled:-:0:3600000');
    const snap = { ...base, kind: 'snapshot' as const, notificationType: null, sequenceNumber: null };
    expect(reportDedupeKey(snap)).not.toBe(reportDedupeKey({ ...snap, spend: 6 }));
  });
});

describe('placeInLedger', () => {
  it('a later report of the same period (adjusted, window_update, a resend) supersedes the earlier one', () => {
    const first = entry(0, 10, { sequence_number: 1 });
    const other = entry(H, 10, { sequence_number: 2 });
    for (const type of ['adjusted', 'window_update', 'scheduled'] as const) {
      expect(placeInLedger({ notificationType: type, sequenceNumber: 3, period: { start: 0, end: H } }, [first, other])).toEqual({ supersedes: [first.id], supersededBy: null });
    }
  });
  it('an older report arriving late is itself superseded by the later one of its period', () => {
    const adjusted = entry(0, 8, { sequence_number: 5, notification_type: 'adjusted' });
    expect(placeInLedger({ notificationType: 'scheduled', sequenceNumber: 1, period: { start: 0, end: H } }, [adjusted])).toEqual({ supersedes: [], supersededBy: adjusted.id });
  });
  it('another period, or an overlapping but different one, supersedes nothing', () => {
    expect(placeInLedger({ notificationType: 'scheduled', sequenceNumber: 9, period: { start: 0, end: 2 * H } }, [entry(0, 1)]).supersedes).toEqual([]);
  });
});

describe('ledgerTotals', () => {
  it('counts each period once (superseded reports and snapshots are left out) and sums per package', () => {
    const a = entry(0, 10.1);
    const b = entry(H, 20.2);
    const old = entry(0, 99, { superseded_by: 'x' });
    const snap = entry(0, 1000, { kind: 'snapshot' });
    const t = ledgerTotals([a, b, old, snap]);
    expect(t).toMatchObject({ spend: 30.3, impressions: 3030, periods: 2, through: 2 * H, clicks: null });
    expect(t.byPackage.p1).toEqual({ spend: 30.3, impressions: 3030 });
  });
});

describe('deliveryFigures', () => {
  it('without a poll: the ledger, from webhooks', () => {
    expect(deliveryFigures([entry(0, 5)], null)).toMatchObject({ spend: 5, source: 'webhook', through: H });
    expect(deliveryFigures([], null)).toMatchObject({ spend: 0, source: null, through: null });
  });
  it("with one: the seller's cumulative figure up to its end, plus the periods reported since", () => {
    const snapshot = { impressions: 3000, spend: 30, clicks: null, period_end: 3 * H, by_package: [{ package_id: 'p1', spend: 30, impressions: 3000 }] };
    // Period 2 never came: the snapshot covers it.
    const ledger = [entry(0, 10), entry(2 * H, 10)];
    expect(deliveryFigures(ledger, snapshot)).toMatchObject({ spend: 30, source: 'poll', through: 3 * H });
    const later = [...ledger, entry(3 * H, 7)];
    expect(deliveryFigures(later, snapshot)).toMatchObject({ spend: 37, source: 'webhook', through: 4 * H, byPackage: { p1: { spend: 37, impressions: 3700 } } });
  });
});
