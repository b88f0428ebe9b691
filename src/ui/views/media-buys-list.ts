/**
 * The media buys page (GET /media-buys): the tenant's live buys, newest first, with
 * status, spend of budget, pacing, seller and campaign; filters by status, seller,
 * campaign and pacing; keyset pages; refreshed live when a buy changes.
 */
import { MEDIA_BUY_STATUSES } from '../../domain/media-buy-status.js';
import type { AgentRow, CampaignRow, MediaBuyRow } from '../../store/index.js';
import { shortId, utc, when } from '../format.js';
import { html, queryString, type SafeHtml } from '../html.js';
import { buyStatusBadge, pacingBadge, spendBar } from './media-buy/bits.js';

export interface BuyListFilters {
  status?: string;
  agent?: string;
  campaign?: string;
  pacing?: string;
}

export interface MediaBuysListView {
  filters: BuyListFilters;
  rows: MediaBuyRow[];
  agents: AgentRow[];
  /** The campaigns the rows belong to, and the newest ones to pick from. */
  campaigns: Map<string, CampaignRow>;
  recentCampaigns: CampaignRow[];
  cursor?: string;
  nextCursor?: string;
  now: number;
  notice?: string;
}

const PACING_OPTIONS: Array<[string, string]> = [
  ['on_track', 'on track'],
  ['under', 'under'],
  ['over', 'over'],
  ['not_started', 'not judged yet'],
];

export function buyListQuery(filters: BuyListFilters, cursor?: string): string {
  return queryString({ ...filters, cursor });
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const day = (d: Date) => `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;

/** A flight in a column's width (UTC): "Dec 2, 13:06–21:06" within a day, "Dec 2 → Jan 5" within a year, else with years. */
export function flightText(start: number, end: number): string {
  const a = new Date(start);
  const b = new Date(end);
  if (utc(start).slice(0, 10) === utc(end).slice(0, 10)) return `${day(a)}, ${utc(start).slice(11, 16)}–${utc(end).slice(11, 16)}`;
  if (end - start < 365 * 86_400_000) return `${day(a)} → ${day(b)}`;
  return `${day(a)} ${a.getUTCFullYear()} → ${day(b)} ${b.getUTCFullYear()}`;
}

function flight(b: MediaBuyRow): SafeHtml {
  if (b.flight_start === null || b.flight_end === null) return html`<span class="muted">—</span>`;
  return html`<span class="small" title="${utc(b.flight_start)} → ${utc(b.flight_end)}">${flightText(b.flight_start, b.flight_end)}</span>`;
}

/** The seller's id, cut to what a column holds (the whole id on hover and for screen readers). */
function sellerId(id: string): SafeHtml {
  return html`<code title="${id}">${id.length > 14 ? `${id.slice(0, 12)}…` : id}</code>`;
}

function row(b: MediaBuyRow, v: MediaBuysListView, agentNames: Map<string, string>): SafeHtml {
  const campaign = b.campaign_id ? v.campaigns.get(b.campaign_id) : undefined;
  return html`<tr data-buy-id="${b.id}" data-status="${b.status}" data-pacing="${b.pacing_state}">
  <td><a href="/media-buys/${b.id}" aria-label="Media buy ${b.media_buy_id}">${sellerId(b.media_buy_id)}</a></td>
  <td class="hide-narrow">${agentNames.get(b.agent_id) ?? b.agent_id}</td>
  <td>${buyStatusBadge(b.status)}</td>
  <td class="spend-cell">${spendBar(b)}</td>
  <td>${pacingBadge(b.pacing_state, b.pacing_ratio)}</td>
  <td class="hide-narrow">${b.campaign_id ? html`<a href="/campaigns/${b.campaign_id}">${campaign?.name ?? shortId(b.campaign_id)}</a>` : html`<span class="muted">—</span>`}</td>
  <td class="hide-narrow nowrap">${flight(b)}</td>
  <td class="hide-narrow nowrap">${when(b.delivery_updated_at ?? b.updated_at, v.now)}</td>
</tr>`;
}

/** The part of the page that refreshes live: table and pager. */
export function mediaBuysRegion(v: MediaBuysListView): SafeHtml {
  const names = new Map(v.agents.map((a) => [a.id, a.name]));
  const filtered = Object.values(v.filters).some((x) => x !== undefined && x !== '');
  const table =
    v.rows.length === 0
      ? html`<p class="empty">${filtered ? 'No media buys match these filters.' : 'No media buys yet. A create_media_buy that completes (POST /v1/media-buys) makes one.'}</p>`
      : html`<div class="table-wrap"><table class="buys-list">
  <caption class="visually-hidden">Media buys, newest first</caption>
  <thead><tr><th scope="col">Buy</th><th scope="col" class="hide-narrow">Seller</th><th scope="col">Status</th><th scope="col">Spend of budget</th><th scope="col">Pacing</th><th scope="col" class="hide-narrow">Campaign</th><th scope="col" class="hide-narrow">Flight (UTC)</th><th scope="col" class="hide-narrow">Updated</th></tr></thead>
  <tbody>${v.rows.map((b) => row(b, v, names))}</tbody>
</table></div>`;
  const pager = html`<nav class="pager" aria-label="Pages">
  ${v.cursor ? html`<a href="/media-buys${buyListQuery(v.filters)}">← Newest</a>` : html`<span class="muted">Newest first</span>`}
  ${v.nextCursor ? html`<a rel="next" href="/media-buys${buyListQuery(v.filters, v.nextCursor)}">Older →</a>` : ''}
</nav>`;
  return html`${table}${pager}`;
}

function options(values: ReadonlyArray<[string, string]>, selected: string | undefined): SafeHtml[] {
  return values.map(([value, label]) => html`<option value="${value}"${selected === value ? html` selected` : ''}>${label}</option>`);
}

function filterForm(v: MediaBuysListView): SafeHtml {
  const f = v.filters;
  return html`<form class="filters buy-filters" method="get" action="/media-buys" role="search" aria-label="Filter media buys">
  <div class="field">
    <label for="b-status">Status</label>
    <select id="b-status" name="status"><option value="">any</option>${options(MEDIA_BUY_STATUSES.map((s) => [s, s.replace(/_/g, ' ')]), f.status)}</select>
  </div>
  <div class="field">
    <label for="b-agent">Seller</label>
    <select id="b-agent" name="agent"><option value="">any</option>${options(v.agents.filter((a) => a.role === 'seller').map((a) => [a.id, a.name]), f.agent)}</select>
  </div>
  <div class="field">
    <label for="b-campaign">Campaign</label>
    <input id="b-campaign" name="campaign" value="${f.campaign ?? ''}" list="b-campaigns" maxlength="100" placeholder="any (campaign id)">
    <datalist id="b-campaigns">${v.recentCampaigns.map((c) => html`<option value="${c.id}">${c.name ?? c.plan_id}</option>`)}</datalist>
  </div>
  <div class="field">
    <label for="b-pacing">Pacing</label>
    <select id="b-pacing" name="pacing"><option value="">any</option>${options(PACING_OPTIONS, f.pacing)}</select>
  </div>
  <div class="field actions">
    <button type="submit" class="primary">Apply</button>
    <a href="/media-buys" class="button">Clear</a>
  </div>
</form>`;
}

export function mediaBuysPage(v: MediaBuysListView): SafeHtml {
  const regionUrl = `/media-buys${buyListQuery(v.filters, v.cursor)}`;
  return html`<div class="page-head">
  <h1>Media buys</h1>
  <p class="live-state" data-live-state role="status"></p>
</div>
${v.notice ? html`<p class="notice notice-info" role="status">${v.notice}</p>` : ''}
${filterForm(v)}
<section id="media-buys" aria-label="Media buys list" hx-get="${regionUrl}" hx-trigger="sse:change, every 30s" hx-swap="innerHTML" hx-sync="this:queue last">
${mediaBuysRegion(v)}
</section>`;
}
