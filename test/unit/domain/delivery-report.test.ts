/** Reading delivery reports: both fire body styles, a poll's reply, what is lenient and what is refused. */
import { describe, expect, it } from 'vitest';
import { readDeliveryReply, readFire, reportOfFire } from '../../../src/domain/delivery-report.js';

const NOW = Date.parse('2026-05-04T12:00:00Z');
const report = (extra: Record<string, unknown> = {}, row: Record<string, unknown> = {}) => ({
  notification_type: 'scheduled',
  sequence_number: 3,
  next_expected_at: '2026-05-04T13:00:00Z',
  reporting_period: { start: '2026-05-04T10:00:00Z', end: '2026-05-04T11:00:00Z' },
  currency: 'USD',
  media_buy_deliveries: [
    {
      media_buy_id: 'mb_1',
      status: 'active',
      totals: { impressions: 1000, spend: 12.5, clicks: 3 },
      by_package: [{ package_id: 'p1', spend: 12.5, impressions: 1000, pacing_index: 0.9, delivery_status: 'delivering', paused: false }],
      ...row,
    },
  ],
  ...extra,
});

describe('readFire', () => {
  it('reads a 3.0 bare body', () => {
    const r = readFire(report(), NOW);
    expect(r).toEqual({
      ok: true,
      reading: {
        style: 'bare',
        notificationType: 'scheduled',
        sequenceNumber: 3,
        nextExpectedAt: Date.parse('2026-05-04T13:00:00Z'),
        period: { start: Date.parse('2026-05-04T10:00:00Z'), end: Date.parse('2026-05-04T11:00:00Z') },
        currency: 'USD',
        partialData: false,
        rows: [
          {
            mediaBuyId: 'mb_1',
            status: 'active',
            impressions: 1000,
            spend: 12.5,
            clicks: 3,
            isAdjusted: false,
            byPackage: [{ package_id: 'p1', spend: 12.5, impressions: 1000, pacing_index: 0.9, delivery_status: 'delivering', paused: false }],
          },
        ],
      },
    });
  });

  it('reads a 3.1 envelope the same, with its idempotency_key; and a Prebid-style update_media_buy one by its body', () => {
    const bare = readFire(report(), NOW);
    const envelope = readFire({ idempotency_key: 'k'.repeat(20), task_id: 't', task_type: 'media_buy_delivery', status: 'completed', timestamp: '2026-05-04T11:00:05Z', result: report() }, NOW);
    expect(envelope.ok && bare.ok && { ...envelope.reading, style: 'bare', idempotencyKey: undefined }).toEqual({ ...(bare.ok && bare.reading), idempotencyKey: undefined });
    expect(envelope.ok && envelope.reading).toMatchObject({ style: 'envelope', idempotencyKey: 'k'.repeat(20) });
    const prebid = readFire({ task_type: 'update_media_buy', status: 'completed', result: report({ aggregated_totals: { spend: 12.5, impressions: 1000, media_buy_count: 1 } }) }, NOW);
    expect(prebid.ok).toBe(true);
    // An envelope of another task is no report.
    expect(reportOfFire({ task_type: 'update_media_buy', status: 'completed', result: { media_buy_id: 'mb_1' } })).toBeNull();
  });

  it('is lenient where meaning does not change: aggregated_totals ignored, a missing notification_type is scheduled, unknown fields kept out', () => {
    const r = readFire({ ...report({ aggregated_totals: { impressions: 1, spend: 999, media_buy_count: 7 } }), notification_type: undefined, extra: 'x' }, NOW);
    expect(r.ok && r.reading.notificationType).toBe('scheduled');
    expect(r.ok && r.reading.rows[0]!.spend).toBe(12.5);
  });

  it.each([
    ['an unknown notification_type', report({ notification_type: 'weekly' }), 'report_notification_type_unknown'],
    ['no report', { hello: 1 }, 'report_body_unrecognized'],
    ['negative spend', report({}, { totals: { spend: -1 } }), 'report_invalid'],
    ['spend as a string', report({}, { totals: { spend: '12' } }), 'report_invalid'],
    ['no spend', report({}, { totals: { impressions: 5 } }), 'report_invalid'],
    ['a negative package figure', report({}, { by_package: [{ package_id: 'p', spend: -2 }] }), 'report_invalid'],
    ['an absurd figure', report({}, { totals: { spend: 1, impressions: 1e14 } }), 'report_invalid'],
    ['a period that has not begun', report({ reporting_period: { start: '2026-05-04T12:10:00Z', end: '2026-05-04T13:00:00Z' } }), 'report_invalid'],
    ['a period ending before it starts', report({ reporting_period: { start: '2026-05-04T11:00:00Z', end: '2026-05-04T10:00:00Z' } }), 'report_invalid'],
    ['a period that is no date', report({ reporting_period: { start: 'yesterday', end: '2026-05-04T10:00:00Z' } }), 'report_invalid'],
    ['a fractional sequence number', report({ sequence_number: 1.5 }), 'report_invalid'],
    ['a row without its buy', report({}, { media_buy_id: '' }), 'report_invalid'],
  ])('refuses %s', (_what, body, code) => {
    const r = readFire(body, NOW);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.code).toBe(code);
  });

  it('allows a seller clock a little fast, and more when told (a compressed flight)', () => {
    const early = report({ reporting_period: { start: '2026-05-04T12:04:00Z', end: '2026-05-04T12:30:00Z' } });
    expect(readFire(early, NOW).ok).toBe(true);
    const later = report({ reporting_period: { start: '2026-06-04T12:00:00Z', end: '2026-06-05T12:00:00Z' } });
    expect(readFire(later, NOW).ok).toBe(false);
    expect(readFire(later, NOW, 366 * 86_400_000).ok).toBe(true);
  });
});

describe('readDeliveryReply', () => {
  it('reads a get_media_buy_delivery reply as a scheduled reading without webhook fields', () => {
    const { notification_type: _n, sequence_number: _s, next_expected_at: _x, ...reply } = report();
    const r = readDeliveryReply({ ...reply, aggregated_totals: { spend: 12.5, impressions: 1000, media_buy_count: 1 } }, NOW);
    expect(r.ok && r.reading).toMatchObject({ style: 'reply', notificationType: 'scheduled', rows: [{ mediaBuyId: 'mb_1', spend: 12.5 }] });
    expect(r.ok && r.reading.sequenceNumber).toBeUndefined();
    expect(readDeliveryReply({ media_buys: [] }, NOW).ok).toBe(false);
  });
});
