/** The paragraph beside a live media buy, its listing and its delivery: what a model reads to act. */
import { describe, expect, it } from 'vitest';
import { presentMediaBuy, type MediaBuyJsonSource } from '../../../src/domain/media-buy-json.js';
import { DashboardLinks } from '../../../src/mcp/links.js';
import { deliverySummary, mediaBuyPageSummary, mediaBuySummary } from '../../../src/mcp/media-buy-summary.js';

const links = new DashboardLinks(() => 'https://orch.example.net/');
const T = Date.parse('2026-12-01T10:00:00Z');

const row = (over: Partial<MediaBuyJsonSource> = {}): MediaBuyJsonSource => ({
  id: 'buy_1',
  agent_id: 'ag-1',
  media_buy_id: 'mb_1',
  operation_id: 'op-1',
  campaign_id: null,
  governance: null,
  status: 'active',
  revision: 1,
  valid_actions: null,
  flight_start: T,
  flight_end: T + 10 * 3_600_000,
  budget_amount: 8000,
  currency: 'USD',
  packages: '[]',
  impressions: 120_000,
  spend: 1200,
  clicks: null,
  delivered_through: T + 3 * 3_600_000,
  delivery_source: 'webhook',
  delivery_updated_at: T + 3 * 3_600_000,
  pacing_state: 'under',
  pacing_ratio: 0.5,
  pacing_expected: 2400,
  report_frequency: 'hourly',
  reports_received: 3,
  last_sequence: 4,
  next_expected_at: T + 4 * 3_600_000,
  reports_missing: 1,
  final_received: 0,
  reporting_auth: 'hmac',
  next_check_at: null,
  created_at: T,
  updated_at: T,
  ended_at: null,
  ...over,
});

describe('the paragraph beside a media buy', () => {
  it('says its status, spend of budget, pacing, reports missing, what may be done and where', () => {
    const text = mediaBuySummary(presentMediaBuy(row()), links);
    expect(text).toContain('Media buy buy_1 (the seller’s mb_1, at agent ag-1) is active.');
    expect(text).toContain('Spent 1,200 of 8,000 USD (15 %), 120,000 impressions');
    expect(text).toContain('under-pacing');
    expect(text).toContain('spend is 0.5× the 2,400 expected by now');
    expect(text).toContain('3 received, next expected at 2026-12-01T14:00:00.000Z. 1 came late or not at all');
    expect(text).toContain('pause_media_buy');
    expect(text).toContain('https://orch.example.net/media-buys/buy_1');
  });

  it('points a paused buy to resume_media_buy, and says an ended one can no longer change', () => {
    expect(mediaBuySummary(presentMediaBuy(row({ status: 'paused' })), links)).toContain('resume_media_buy');
    const ended = mediaBuySummary(presentMediaBuy(row({ status: 'completed', final_received: 1, reports_missing: 0, ended_at: T + 11 * 3_600_000 })), links);
    expect(ended).toContain('the final one among them');
    expect(ended).toContain('It ended at 2026-12-01T21:00:00.000Z; nothing more can be changed.');
    expect(ended).not.toContain('pause_media_buy');
  });

  it('says nothing was delivered yet, without inventing a currency or a budget', () => {
    const text = mediaBuySummary(presentMediaBuy(row({ spend: 0, impressions: 0, delivered_through: null, currency: null, budget_amount: null, pacing_state: 'not_started', pacing_ratio: null, pacing_expected: null })), links);
    expect(text).toContain('Nothing delivered yet.');
    expect(mediaBuySummary(presentMediaBuy(row({ spend: 0, delivered_through: null })), links)).toContain('Nothing delivered yet of its 8,000 USD budget.');
    expect(text).toContain('Pacing: not judged yet');
  });

  it('lists buys one line each, and says where the next page is', () => {
    const page = { media_buys: [presentMediaBuy(row()), presentMediaBuy(row({ id: 'buy_2', status: 'paused', pacing_state: 'on_track', reports_missing: 0 }))], next_cursor: 'abc' };
    const text = mediaBuyPageSummary(page);
    expect(text).toContain('2 media buy(s): buy_1 active, spent 1,200 of 8,000 USD (15 %), pacing under, 1 report(s) missing; buy_2 paused');
    expect(text).toContain('pass next_cursor as cursor');
    expect(mediaBuyPageSummary({ media_buys: [], next_cursor: null })).toBe('No media buys.');
  });

  it('sums up the delivery: periods counted once, restatements, the latest report', () => {
    const report = (id: string, start: string, spend: number, superseded?: string) => ({
      id,
      period: { start, end: start },
      notification_type: 'scheduled',
      sequence_number: 1,
      impressions: spend * 100,
      spend,
      currency: 'USD',
      by_package: [],
      status: null,
      is_adjusted: false,
      received_at: start,
      source: 'webhook',
      ...(superseded ? { superseded_by: superseded } : {}),
    });
    const view = {
      reports: [report('r1', '2026-12-01T10:00:00Z', 100, 'r2'), report('r2', '2026-12-01T10:00:00Z', 90)],
      totals: { impressions: 9000, spend: 90, clicks: null, currency: 'USD', periods: 1, through: '2026-12-01T11:00:00.000Z' },
    };
    const text = deliverySummary('buy_1', view, links);
    expect(text).toContain('2 report(s) covering 1 period(s), each counted once: 9,000 impressions, 90 USD through 2026-12-01T11:00:00.000Z');
    expect(text).toContain('1 report(s) were restated');
    expect(text).toContain('https://orch.example.net/media-buys/buy_1');
    expect(deliverySummary('buy_1', { reports: [], totals: { ...view.totals, periods: 0 } }, links)).toContain('no delivery report yet');
  });
});
