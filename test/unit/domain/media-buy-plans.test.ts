/** A live buy's bookkeeping: sequence gaps, silence, timers after reports and reads, status changes, frequency choice. */
import { describe, expect, it } from 'vitest';
import { sequencePart, silencePart, statusPart, timersAfterDeliveryRead, timersAfterReport, timersAfterStatusRead, type TrackedBuy } from '../../../src/domain/media-buy-plans.js';
import { chooseFrequency, commonFrequencies } from '../../../src/domain/reporting-webhook.js';
import { statusNotification } from '../../../src/domain/media-buy-status.js';

const NOW = 1_000_000;
const policy = { graceMs: 500, statusIntervalMs: 10_000 };
const buy = (over: Partial<TrackedBuy> = {}): TrackedBuy => ({
  status: 'active',
  last_sequence: 2,
  gap_open: 0,
  reports_missing: 0,
  final_received: 0,
  next_expected_at: NOW - 100,
  reports_received: 2,
  flight_start: NOW - 3_600_000,
  report_frequency: 'hourly',
  reporting_auth: 'hmac',
  ended_at: null,
  status_check_at: NOW + 60_000,
  report_due_at: NOW + 400,
  delivery_poll_at: null,
  creative_check_at: null,
  ...over,
});

describe('sequencePart', () => {
  it('the next number is no gap; a jump is one, told once; a lower one fills in', () => {
    expect(sequencePart(buy(), 3, 'webhook')).toEqual({ patch: { last_sequence: 3 }, events: [], gap: false });
    const jump = sequencePart(buy(), 5, 'webhook');
    expect(jump.gap).toBe(true);
    expect(jump.patch).toEqual({ last_sequence: 5, reports_missing: 1 });
    expect(jump.events).toEqual([{ source: 'webhook', kind: 'report_missing', detail: { reason: 'sequence_gap', expected_sequence: 3, received_sequence: 5, missing: 2 } }]);
    expect(sequencePart(buy(), 1, 'webhook')).toEqual({ patch: {}, events: [], gap: false });
    // The first fire we see already past 1: the earlier ones are missing.
    expect(sequencePart(buy({ last_sequence: null }), 3, 'webhook').gap).toBe(true);
  });
  it('a fire after a silence closes it, and the silence already told of the gap', () => {
    const after = sequencePart(buy({ gap_open: 1, reports_missing: 1 }), 6, 'webhook');
    expect(after).toEqual({ patch: { gap_open: 0, last_sequence: 6 }, events: [], gap: true });
  });
});

describe('silencePart', () => {
  it('tells once per silence, reads the delivery now, and looks again a period later', () => {
    const first = silencePart(buy(), policy, NOW);
    expect(first.events).toHaveLength(1);
    expect(first.patch).toMatchObject({ gap_open: 1, reports_missing: 1, delivery_poll_at: NOW, report_due_at: NOW + 3_600_000, next_check_at: NOW });
    const again = silencePart(buy({ gap_open: 1, reports_missing: 1 }), policy, NOW);
    expect(again.events).toEqual([]);
    expect(again.patch).not.toHaveProperty('reports_missing');
  });
});

describe('timers', () => {
  it("after a fire: the watchdog follows the seller's next_expected_at + grace, a status read soon, a read now on a gap", () => {
    const t = timersAfterReport(buy(), { fire: true, final: false, nextExpectedAt: NOW + 3_000, gap: false }, policy, NOW);
    expect(t).toMatchObject({ next_expected_at: NOW + 3_000, report_due_at: NOW + 3_500, status_check_at: NOW + 1_000, delivery_poll_at: null, next_check_at: NOW + 1_000 });
    expect(timersAfterReport(buy(), { fire: true, final: false, gap: true }, policy, NOW)).toMatchObject({ delivery_poll_at: NOW, next_check_at: NOW });
  });
  it('a final report ends tracking (after one delivery read if a gap came before it)', () => {
    expect(timersAfterReport(buy({ creative_check_at: NOW + 5 }), { fire: true, final: true, gap: false }, policy, NOW)).toEqual({
      status_check_at: null, report_due_at: null, delivery_poll_at: null, creative_check_at: null, next_check_at: null, final_received: 1, next_expected_at: null, ended_at: NOW,
    });
    expect(timersAfterReport(buy(), { fire: true, final: true, gap: true }, policy, NOW)).toMatchObject({ delivery_poll_at: NOW, ended_at: null });
  });
  it('a terminal status read stops status reads and asks the last delivery; that read ends tracking', () => {
    // An ended buy has no creative left to review: its creative timer ends too.
    const t = timersAfterStatusRead(buy({ creative_check_at: NOW + 5 }), 'completed', policy, NOW, () => 0);
    expect(t).toEqual({ status_check_at: null, report_due_at: null, delivery_poll_at: NOW, creative_check_at: null, next_check_at: NOW });
    expect(timersAfterDeliveryRead(buy({ status: 'completed' }), policy, NOW, () => 0)).toMatchObject({ next_check_at: null, ended_at: NOW });
    expect(timersAfterStatusRead(buy(), 'active', policy, NOW, () => 0)).toMatchObject({ status_check_at: NOW + 10_000 });
    // A live buy's creative timer is kept, and counts for next_check_at.
    expect(timersAfterStatusRead(buy({ creative_check_at: NOW + 5 }), 'active', policy, NOW, () => 0)).toMatchObject({ creative_check_at: NOW + 5, next_check_at: NOW + 5 });
  });
  it('a buy over before its first report came waits for it a grace at most, then its silence is told before the last read', () => {
    const silent = buy({ reports_received: 0, last_sequence: null, report_due_at: NOW + 3_600_000 });
    const ended = timersAfterStatusRead(silent, 'completed', policy, NOW, () => 0);
    expect(ended).toEqual({ status_check_at: null, report_due_at: NOW + 500, delivery_poll_at: null, creative_check_at: null, next_check_at: NOW + 500 });
    // A read of its delivery meanwhile (a person's refresh) does not end it either.
    const read = timersAfterDeliveryRead({ ...silent, status: 'completed', report_due_at: NOW + 500 }, policy, NOW, () => 0);
    expect(read).toMatchObject({ report_due_at: NOW + 500, next_check_at: NOW + 500 });
    expect(read).not.toHaveProperty('ended_at');
    // Once the silence is told (gap open), the read after it ends tracking.
    const told = silencePart({ ...silent, status: 'completed', report_due_at: NOW + 500 }, policy, NOW + 500);
    expect(told.events.map((e) => e.kind)).toEqual(['report_missing']);
    expect(timersAfterDeliveryRead({ ...silent, status: 'completed', gap_open: 1 }, policy, NOW, () => 0)).toMatchObject({ next_check_at: null, ended_at: NOW });
  });
  it('a buy whose fires go elsewhere is read on the status interval', () => {
    expect(timersAfterDeliveryRead(buy({ reporting_auth: 'none' }), policy, NOW, () => 0)).toMatchObject({ delivery_poll_at: NOW + 10_000 });
  });
});

describe('statuses', () => {
  it('records what the seller says, terminal absorbing; notifies what people act on', () => {
    expect(statusPart({ status: 'active' }, 'paused', 'poll')).toEqual({ patch: { status: 'paused' }, events: [{ source: 'poll', kind: 'status_changed', from: 'active', to: 'paused' }] });
    expect(statusPart({ status: 'completed' }, 'active', 'poll')).toBeNull();
    expect(statusPart({ status: 'active' }, 'reporting_delayed', 'poll')).toBeNull();
    expect([statusNotification('pending_start', 'active'), statusNotification('paused', 'active'), statusNotification(null, 'pending_creatives'), statusNotification('active', 'pending_start')]).toEqual([
      'media_buy.activated', 'media_buy.resumed', 'media_buy.creatives_needed', null,
    ]);
  });
});

describe('reporting frequency', () => {
  it("asks what the caller asked when the products offer it; the tenant's default gives way to the nearest offered", () => {
    expect(chooseFrequency('hourly', 'daily', null)).toEqual({ ok: true, frequency: 'hourly' });
    expect(chooseFrequency('hourly', 'daily', ['daily', 'monthly']).ok).toBe(false);
    expect(chooseFrequency(undefined, 'daily', ['hourly', 'monthly'])).toEqual({ ok: true, frequency: 'hourly' });
    expect(chooseFrequency(undefined, 'daily', ['monthly'])).toEqual({ ok: true, frequency: 'monthly' });
    expect(commonFrequencies([{ available_reporting_frequencies: ['hourly', 'daily'] }, { available_reporting_frequencies: ['daily'] }, undefined])).toEqual(['daily']);
    expect(commonFrequencies([undefined])).toBeNull();
  });
});
