/**
 * The media buys pages' views: every string a seller, a caller or a person chose is
 * escaped (ids, names, package and product ids, event details, report types); the
 * actions are there for an operator and absent for a viewer or an ended buy; the
 * page is made of named sections in order, so another can be slotted in.
 */
import { describe, expect, it } from 'vitest';
import type { AgentRow, BuyEventRow, CampaignRow, MediaBuyRow, OperationRow, ReportRow } from '../../../src/store/index.js';
import { newMediaBuyRow } from '../../../src/store/media-buy-row.js';
import { newOperationRow } from '../../../src/store/operation-row.js';
import { BUY_SECTIONS, buyPage, buyRegion } from '../../../src/ui/views/media-buy/page.js';
import type { MediaBuyView } from '../../../src/ui/views/media-buy/view.js';
import { flightText, mediaBuysPage, type MediaBuysListView } from '../../../src/ui/views/media-buys-list.js';
import { html } from '../../../src/ui/html.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const HOUR = 3_600_000;
const EVIL = '<img src=x onerror=alert(1)>"\'`';

function buyRow(over: Partial<MediaBuyRow> = {}): MediaBuyRow {
  return newMediaBuyRow(
    { id: 'buy_1', tenant_id: 't1', agent_id: 'agt_1', operation_id: 'op_1', media_buy_id: `mb_${EVIL}`, created_at: NOW - 5 * HOUR },
    {
      campaign_id: `cmp_${EVIL}`,
      governance: JSON.stringify({ agent_id: 'agt_gov', plan_id: `plan_${EVIL}` }),
      status: 'active',
      revision: 3,
      flight_start: NOW - 4 * HOUR,
      flight_end: NOW + 4 * HOUR,
      budget_amount: 8000,
      currency: 'USD',
      packages: JSON.stringify([{ package_id: `pkg_${EVIL}`, product_id: `prod_${EVIL}`, budget: 8000, pacing_index: 0.9, delivery_status: `x_${EVIL}`, delivered: { impressions: 1000, spend: 3000 } }]),
      impressions: 300_000,
      spend: 3000,
      delivered_through: NOW - HOUR,
      delivery_source: 'webhook',
      delivery_updated_at: NOW - 60_000,
      pacing_state: 'under',
      pacing_ratio: 0.5,
      pacing_expected: 6000,
      report_frequency: 'hourly',
      reports_received: 2,
      last_sequence: 2,
      next_expected_at: NOW + 60_000,
      reports_missing: 1,
      reporting_token: 'secret-token-never-shown',
      reporting_secret_enc: 'sealed-secret-never-shown',
      reporting_auth: 'hmac',
      updated_at: NOW - 60_000,
      ...over,
    },
  );
}

const report = (id: string, i: number, over: Partial<ReportRow> = {}): ReportRow => ({
  id,
  buy_id: 'buy_1',
  tenant_id: 't1',
  source: 'webhook',
  kind: 'period',
  notification_type: 'scheduled',
  sequence_number: i + 1,
  period_start: NOW - 4 * HOUR + i * HOUR,
  period_end: NOW - 3 * HOUR + i * HOUR,
  impressions: 150_000,
  spend: 1500,
  clicks: null,
  currency: 'USD',
  by_package: '[]',
  status: 'active',
  is_adjusted: 0,
  dedupe_key: `k${i}`,
  superseded_by: null,
  fire_id: null,
  received_at: NOW - 2 * HOUR + i,
  ...over,
});

const buyEvent = (id: number, over: Partial<BuyEventRow> = {}): BuyEventRow => ({ id, buy_id: 'buy_1', tenant_id: 't1', at: NOW - id * 1000, source: 'webhook', kind: 'report_received', from_status: null, to_status: null, detail: JSON.stringify({ note: EVIL }), actor: null, ...over });

function view(over: Partial<MediaBuyView> = {}): MediaBuyView {
  const op: OperationRow = newOperationRow({ id: 'op_1', tenant_id: 't1', agent_id: 'agt_1', type: 'create_media_buy', idempotency_key: 'key-0000000000000001', request_body: '{}', created_at: NOW - 5 * HOUR }, { status: 'completed' });
  return {
    buy: buyRow(),
    reports: [report('rpt_a', 0, { superseded_by: 'rpt_b' }), report('rpt_b', 0, { notification_type: `adjusted`, is_adjusted: 1, spend: 1200, sequence_number: 3 }), report('rpt_c', 1, { notification_type: EVIL })],
    buyEvents: [buyEvent(1), buyEvent(2, { source: 'user', kind: 'pause_requested', actor: `ops ${EVIL}` })],
    operation: op,
    operationEvents: [{ id: 7, operation_id: 'op_1', tenant_id: 't1', at: NOW - 5 * HOUR, source: 'user', kind: 'transition', from_status: null, to_status: 'requested', detail: null, actor: `creator ${EVIL}` } as never],
    eventsLeftOut: 0,
    requests: [],
    agent: { id: 'agt_1', tenant_id: 't1', name: `seller ${EVIL}`, role: 'seller' } as AgentRow,
    campaign: { id: `cmp_${EVIL}`, name: `Spring ${EVIL}` } as CampaignRow,
    now: NOW,
    csrf: 'csrf-token',
    canAct: true,
    ...over,
  };
}

/** No tag or attribute the hostile text could have opened survives. */
function expectEscaped(page: string): void {
  expect(page).not.toContain('<img');
  expect(page).not.toMatch(/onerror=alert\(1\)>"/);
  expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&#96;');
}

describe('a buy’s page', () => {
  it('escapes every string that came from a seller, a caller or a person, and shows no reporting secret', () => {
    const page = buyPage(view()).value;
    expectEscaped(page);
    expect(page).not.toContain('secret-token-never-shown');
    expect(page).not.toContain('sealed-secret-never-shown');
  });

  it('says first, in a banner, that the seller no longer answers for the buy: since when, why, its last known status', () => {
    expect(buyRegion(view()).value).not.toContain('data-unreadable-since');
    const page = buyRegion(view({ buy: buyRow({ unreadable_since: NOW - 2 * HOUR, unreadable_reason: `the seller answered ${EVIL}` }) })).value;
    const banner = /<p class="notice notice-warn" role="alert" data-unreadable-since="([^"]+)">([\s\S]*?)<\/p>/.exec(page)!;
    expect(banner[1]).toBe(new Date(NOW - 2 * HOUR).toISOString());
    expect(banner[2]).toContain('The seller no longer answers for this buy');
    expect(banner[2]).toContain('2026-06-01 10:00:00 UTC');
    expect(banner[2]).toContain('data-buy-status="active"');
    expect(page.indexOf('data-unreadable-since')).toBeLessThan(page.indexOf('class="op-head buy-head"'));
    expectEscaped(page);
  });

  it('is made of its sections in order, each in a <section> named by its id, and takes another slotted in', () => {
    const page = buyRegion(view()).value;
    const ids = [...page.matchAll(/<section class="buy-section" id="buy-([a-z]+)"/g)].map((m) => m[1]);
    expect(ids).toEqual(['header', 'actions', 'delivery', 'packages', 'creatives', 'reports', 'events']);
    const withNotes = [...BUY_SECTIONS.slice(0, 5), { id: 'notes', render: () => html`<h2>Notes</h2>` }, ...BUY_SECTIONS.slice(5)];
    const ids2 = [...buyRegion(view(), withNotes).value.matchAll(/<section class="buy-section" id="buy-([a-z]+)"/g)].map((m) => m[1]);
    expect(ids2).toEqual(['header', 'actions', 'delivery', 'packages', 'creatives', 'notes', 'reports', 'events']);
  });

  it('offers pause, refresh and cancel to an operator; resume instead of pause for a paused buy', () => {
    const active = buyRegion(view()).value;
    expect([...active.matchAll(/data-action="(\w+)"/g)].map((m) => m[1])).toEqual(['pause', 'refresh', 'cancel']);
    expect(active).toContain('action="/media-buys/buy_1/pause"');
    expect(active).toContain('name="_csrf" value="csrf-token"');
    const paused = buyRegion(view({ buy: buyRow({ status: 'paused' }) })).value;
    expect([...paused.matchAll(/data-action="(\w+)"/g)].map((m) => m[1])).toEqual(['resume', 'refresh', 'cancel']);
  });

  it('shows a viewer no action, and an ended buy none to anyone', () => {
    for (const v of [view({ canAct: false }), view({ buy: buyRow({ status: 'completed', ended_at: NOW }) }), view({ buy: buyRow({ status: 'canceled' }) })]) {
      const page = buyRegion(v).value;
      expect(page).not.toMatch(/data-action=/);
      expect(page).not.toContain('/pause"');
      expect(page).not.toContain('/cancel"');
      expect(page).not.toContain('id="buy-actions"');
    }
  });

  it('does not offer a second cancel while one is on its way', () => {
    const cancel = newOperationRow({ id: 'op_c', tenant_id: 't1', agent_id: 'agt_1', type: 'update_media_buy', idempotency_key: 'key-0000000000000002', request_body: JSON.stringify({ media_buy_id: 'mb', canceled: true }), created_at: NOW }, { status: 'submitted', parent_id: 'op_1' });
    const page = buyRegion(view({ requests: [cancel] })).value;
    expect(page).not.toContain('data-action="cancel"');
    expect(page).toContain('data-cancel-pending');
    expect(page).toContain('data-request="cancel"');
  });

  it('marks the restated report and the one it replaced; lists the buy’s events beside its operation’s', () => {
    const page = buyRegion(view()).value;
    expect(page).toMatch(/<tr id="report-rpt_a" class="report-superseded" data-report-id="rpt_a" data-superseded-by="rpt_b"/);
    expect(page).toMatch(/data-report-id="rpt_b"[^]*?restated[^]*?data-report-state="counted"/);
    expect([...page.matchAll(/data-event-of="(\w+)"/g)].map((m) => m[1])).toEqual(['buy', 'buy', 'operation']);
    // The chart draws the counted ones: the restatement and the second period.
    expect([...page.matchAll(/<rect class="bar[^"]*"[^>]*data-report-id="(\w+)"/g)].map((m) => m[1])).toEqual(['rpt_b', 'rpt_c']);
  });

  it('an empty buy: says no report has come yet, and still draws its plan', () => {
    const page = buyRegion(view({ reports: [], buy: buyRow({ spend: 0, impressions: 0, reports_received: 0, pacing_state: 'not_started', pacing_ratio: null }) })).value;
    expect(page).toContain('No delivery report yet.');
    expect(page).toContain('No delivery reported yet');
    expect(page).toContain('class="plan"');
  });
});

describe('the media buys list', () => {
  const list = (over: Partial<MediaBuysListView> = {}): MediaBuysListView => ({
    filters: {},
    rows: [buyRow(), buyRow({ id: 'buy_2', status: 'paused', pacing_state: 'over', pacing_ratio: 1.6, campaign_id: null })],
    agents: [{ id: 'agt_1', tenant_id: 't1', name: `seller ${EVIL}`, role: 'seller' } as AgentRow],
    campaigns: new Map([[`cmp_${EVIL}`, { id: `cmp_${EVIL}`, name: `Spring ${EVIL}` } as CampaignRow]]),
    recentCampaigns: [{ id: `cmp_${EVIL}`, name: `Spring ${EVIL}`, plan_id: 'p' } as CampaignRow],
    now: NOW,
    ...over,
  });

  it('escapes seller ids, names and campaigns, and keeps filters in links escaped', () => {
    const page = mediaBuysPage(list({ filters: { campaign: EVIL, status: 'active' }, cursor: 'abc', nextCursor: 'def' })).value;
    expectEscaped(page);
    expect(page).toContain('<tr data-buy-id="buy_1" data-status="active" data-pacing="under">');
    expect(page).toContain('data-pacing="over"');
    expect(page).toMatch(/rel="next" href="\/media-buys\?campaign=%3Cimg[^"]+&amp;status=active&amp;cursor=def"/);
  });

  it('says when nothing matches, differently from when there is nothing', () => {
    expect(mediaBuysPage(list({ rows: [] })).value).toContain('No media buys yet');
    expect(mediaBuysPage(list({ rows: [], filters: { pacing: 'over' } })).value).toContain('No media buys match these filters');
  });

  it('writes a flight as short as its span allows', () => {
    expect(flightText(Date.parse('2026-12-02T13:06:00Z'), Date.parse('2026-12-02T21:06:00Z'))).toBe('Dec 2, 13:06–21:06');
    expect(flightText(Date.parse('2026-12-02T13:06:00Z'), Date.parse('2027-01-05T00:00:00Z'))).toBe('Dec 2 → Jan 5');
    expect(flightText(Date.parse('2026-12-02T00:00:00Z'), Date.parse('2028-01-05T00:00:00Z'))).toBe('Dec 2 2026 → Jan 5 2028');
  });
});
