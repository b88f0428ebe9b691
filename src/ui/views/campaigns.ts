/**
 * Governed campaigns (README.md, Dashboard): the list, with each campaign's budget planned
 * vs committed and its buys counted by state, and one campaign with its buys. Every
 * figure comes from the same pure functions the API answers with (src/domain/campaign.ts),
 * so the page and GET /v1/campaigns cannot disagree.
 */
import { buyState, campaignBudget, campaignStatus, campaignSummary, type BuySource, type BuyState, type CampaignBudget } from '../../domain/campaign.js';
import { committedBudgetOf, parseGovernance } from '../../domain/governed-flow.js';
import type { CampaignRow, MediaBuyRow, OperationRow } from '../../store/index.js';
import { shortId, statusBadge, when } from '../format.js';
import { html, type SafeHtml } from '../html.js';

export interface CampaignListItem {
  campaign: CampaignRow;
  buys: BuySource[];
  /** What its live media buys delivered so far (absent before any buy exists). */
  delivered?: Delivered;
}

/** Spend and impressions the campaign's live buys report, summed (MediaBuysRepo.deliveredByCampaigns). */
export interface Delivered {
  spend: number;
  impressions: number;
  buys: number;
}

export interface CampaignsListView {
  items: CampaignListItem[];
  /** Names of the tenant's agents, by id. */
  agentNames: Map<string, string>;
  /** The cursor of the page shown (absent on the first page). */
  cursor?: string;
  nextCursor?: string;
  now: number;
}

export interface CampaignView {
  campaign: CampaignRow;
  buys: OperationRow[];
  delivered?: Delivered;
  /** The live media buy each buy operation made, by operation id. */
  mediaBuys?: Map<string, MediaBuyRow>;
  agentNames: Map<string, string>;
  now: number;
}

const STATE_LABELS: Record<BuyState, string> = {
  done: 'done',
  running: 'running',
  waiting_on_people: 'waiting on people',
  denied: 'denied',
  failed: 'failed',
  canceled: 'canceled',
};
const STATE_TONES: Record<BuyState, string> = { done: 'good', running: 'pending', waiting_on_people: 'attention', denied: 'bad', failed: 'bad', canceled: 'neutral' };
const STATES = Object.keys(STATE_LABELS) as BuyState[];

/** "12,500": amounts in the plan's currency, which the governance agent states (the plan's, not ours). */
export function money(n: number | null): string {
  if (n === null) return '—';
  return MONEY.format(n);
}
/** One formatter for every amount: toLocaleString with options builds a new one per call (a chart of 720 periods spent 100 ms there). */
const MONEY = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** The campaign's state as the API states it: read from its buys until the watcher marks it done. */
export function shownStatus(c: CampaignRow, buys: BuySource[]): string {
  return c.status === 'done' ? 'done' : campaignStatus(buys);
}

function campaignBadge(status: string): SafeHtml {
  const tone = status === 'done' ? 'good' : status === 'waiting_on_people' ? 'attention' : 'pending';
  return html`<span class="badge badge-${tone}" data-campaign-status="${status}">${status.replace(/_/g, ' ')}</span>`;
}

export function buyStateBadge(state: BuyState): SafeHtml {
  return html`<span class="badge badge-${STATE_TONES[state]}" data-buy-state="${state}">${STATE_LABELS[state]}</span>`;
}

/** Only the states that have buys, e.g. "2 done · 1 denied", each with a machine-readable count. */
export function stateCounts(buys: BuySource[]): SafeHtml {
  const summary = campaignSummary(buys);
  const parts = STATES.filter((s) => summary[s] > 0).map((s) => html`<li class="state-count state-${STATE_TONES[s]}" data-state="${s}" data-count="${summary[s]}"><strong>${summary[s]}</strong> ${STATE_LABELS[s]}</li>`);
  if (parts.length === 0) return html`<span class="muted">no buys</span>`;
  return html`<ul class="state-counts" aria-label="Buys by state (${summary.total} in all)">${parts}</ul>`;
}

/** Planned vs committed (and delivered, once buys report) as numbers and meters (no inline style: the CSP forbids it). */
export function budgetCell(b: CampaignBudget, delivered?: Delivered): SafeHtml {
  const max = Math.max(b.planned, b.committed, 1);
  const spent = delivered?.spend ?? 0;
  return html`<div class="budget" data-planned="${b.planned}" data-committed="${b.committed}" data-remaining="${b.remaining ?? ''}" data-delivered="${spent}">
  <div><span class="muted">committed</span> <strong>${money(b.committed)}</strong> <span class="muted">of ${money(b.planned)} planned</span></div>
  <meter min="0" max="${max}" value="${b.committed}" aria-label="Committed of planned">${money(b.committed)} of ${money(b.planned)}</meter>
  <div class="delivered"><span class="muted">delivered</span> <strong>${money(spent)}</strong>${delivered ? html` <span class="muted small">by ${delivered.buys} live buy${delivered.buys === 1 ? '' : 's'}</span>` : ''}</div>
  <meter min="0" max="${Math.max(b.committed, spent, 1)}" value="${spent}" aria-label="Delivered of committed">${money(spent)} of ${money(b.committed)}</meter>
  ${b.remaining !== null ? html`<div class="small muted">plan remaining ${money(b.remaining)}</div>` : ''}
</div>`;
}

function title(c: CampaignRow): SafeHtml {
  return c.name ? html`${c.name}` : html`Campaign ${shortId(c.id)}`;
}

function listRow(item: CampaignListItem, v: CampaignsListView): SafeHtml {
  const c = item.campaign;
  return html`<tr data-campaign-id="${c.id}">
  <td><a href="/campaigns/${c.id}"><strong>${title(c)}</strong></a><br><code class="muted small">${c.id}</code></td>
  <td class="hide-narrow"><code>${c.plan_id}</code><br><span class="muted small">${v.agentNames.get(c.governance_agent_id) ?? c.governance_agent_id}</span></td>
  <td>${campaignBadge(shownStatus(c, item.buys))}</td>
  <td>${budgetCell(campaignBudget(item.buys), item.delivered)}</td>
  <td>${stateCounts(item.buys)}</td>
  <td class="hide-narrow nowrap">${when(c.created_at, v.now)}</td>
</tr>`;
}

/** The part of the list page that refreshes live. */
export function campaignsRegion(v: CampaignsListView): SafeHtml {
  const table =
    v.items.length === 0
      ? html`<p class="empty">No campaigns yet. Start one with <code>POST /v1/campaigns</code> (a plan synced with <code>POST /v1/plans</code> first).</p>`
      : html`<div class="table-wrap"><table class="campaigns">
  <caption class="visually-hidden">Campaigns, newest first</caption>
  <thead><tr><th scope="col">Campaign</th><th scope="col" class="hide-narrow">Plan</th><th scope="col">Status</th><th scope="col">Budget</th><th scope="col">Buys</th><th scope="col" class="hide-narrow">Created</th></tr></thead>
  <tbody>${v.items.map((item) => listRow(item, v))}</tbody>
</table></div>`;
  const pager = html`<nav class="pager" aria-label="Pages">
  ${v.cursor ? html`<a href="/campaigns">← Newest</a>` : html`<span class="muted">Newest first</span>`}
  ${v.nextCursor ? html`<a rel="next" href="/campaigns?cursor=${encodeURIComponent(v.nextCursor)}">Older →</a>` : ''}
</nav>`;
  return html`${table}${pager}`;
}

export function campaignsPage(v: CampaignsListView): SafeHtml {
  const regionUrl = v.cursor ? `/campaigns?cursor=${encodeURIComponent(v.cursor)}` : '/campaigns';
  return html`<div class="page-head">
  <h1>Campaigns</h1>
  <p class="live-state" data-live-state role="status"></p>
</div>
<section id="campaigns" aria-label="Campaigns list" hx-get="${regionUrl}" hx-trigger="sse:change, every 30s" hx-swap="innerHTML" hx-sync="this:queue last">
${campaignsRegion(v)}
</section>`;
}

/** What a buy asked for, and what the governance agent recorded as committed once its outcome was reported. */
function buyAmounts(b: OperationRow): { asked: number; committed: number | null; governance: string } {
  const asked = committedBudgetOf(JSON.parse(b.request_body) as Record<string, unknown>, undefined);
  const g = parseGovernance(b.governance);
  const o = g?.outcome;
  const reported = o && (o.status === 'accepted' || o.status === 'findings') && o.outcome === 'completed';
  const decision = g?.check?.decision;
  const governance = !g ? '—' : g.step === 'reporting' ? `${decision ?? 'checked'}; outcome owed` : g.step === 'reported' ? `${decision ?? 'checked'}; outcome ${o?.status ?? 'reported'}` : (decision ?? g.step);
  return { asked, committed: reported ? (o!.committed_budget ?? 0) : null, governance };
}

/** What the buy's live media buy delivered, linking to its page; "—" before the seller made one. */
function deliveredCell(b: OperationRow, v: CampaignView): SafeHtml {
  const live = v.mediaBuys?.get(b.id);
  if (!live) return html`<td class="num" data-delivered="">—</td>`;
  return html`<td class="num" data-delivered="${live.spend}"><a href="/media-buys/${live.id}" aria-label="Media buy ${live.media_buy_id}: ${money(live.spend)} delivered">${money(live.spend)}</a></td>`;
}

function buyRow(b: OperationRow, v: CampaignView): SafeHtml {
  const a = buyAmounts(b);
  return html`<tr data-operation-id="${b.id}" data-status="${b.status}">
  <td><a href="/operations/${b.id}" aria-label="Operation ${b.id}">${shortId(b.id)}</a></td>
  <td class="hide-narrow">${v.agentNames.get(b.agent_id) ?? b.agent_id}</td>
  <td>${buyStateBadge(buyState(b))}</td>
  <td>${statusBadge(b.status)}</td>
  <td class="num" data-amount="${a.asked}">${money(a.asked)}</td>
  <td class="num" data-committed="${a.committed ?? ''}">${money(a.committed)}</td>
  ${deliveredCell(b, v)}
  <td class="hide-narrow">${a.governance}</td>
</tr>`;
}

/** The part of a campaign's page that refreshes live. */
export function campaignRegion(v: CampaignView): SafeHtml {
  const c = v.campaign;
  const budget = campaignBudget(v.buys);
  return html`<div class="op-head">
  <h1>${title(c)} ${campaignBadge(shownStatus(c, v.buys))}</h1>
  <p class="op-id">Campaign <code>${c.id}</code> <button type="button" class="copy" data-copy-text="${c.id}" aria-label="Copy campaign id">Copy id</button></p>
</div>
<dl class="facts">
  <div><dt>Plan</dt><dd><code>${c.plan_id}</code></dd></div>
  <div><dt>Governance agent</dt><dd>${v.agentNames.get(c.governance_agent_id) ?? c.governance_agent_id}</dd></div>
  <div><dt>Planned</dt><dd data-budget="planned">${money(budget.planned)}</dd></div>
  <div><dt>Committed</dt><dd data-budget="committed">${money(budget.committed)}</dd></div>
  <div><dt>Delivered</dt><dd data-budget="delivered">${money(v.delivered?.spend ?? 0)}</dd></div>
  <div><dt>Plan remaining</dt><dd data-budget="remaining">${money(budget.remaining)}</dd></div>
  <div><dt>Plan committed, all spend</dt><dd data-budget="plan_committed">${money(budget.plan_committed)}</dd></div>
  <div><dt>Created</dt><dd>${when(c.created_at, v.now)}${c.created_by ? html` <span class="muted">by ${c.created_by}</span>` : ''}</dd></div>
  ${c.completed_at ? html`<div><dt>Done</dt><dd>${when(c.completed_at, v.now)}</dd></div>` : ''}
</dl>
${budgetCell(budget, v.delivered)}
<section aria-labelledby="buys-title"><h2 id="buys-title">Buys</h2>
${stateCounts(v.buys)}
<div class="table-wrap"><table class="buys">
  <caption class="visually-hidden">The campaign's buys, in the order asked for</caption>
  <thead><tr><th scope="col">Operation</th><th scope="col" class="hide-narrow">Seller</th><th scope="col">State</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Committed</th><th scope="col" class="num">Delivered</th><th scope="col" class="hide-narrow">Governance</th></tr></thead>
  <tbody>${v.buys.map((b) => buyRow(b, v))}</tbody>
</table></div>
</section>`;
}

export function campaignPage(v: CampaignView): SafeHtml {
  return html`<div class="page-head crumbs-row">
  <nav class="crumbs" aria-label="Breadcrumb"><a href="/campaigns">Campaigns</a> <span aria-hidden="true">/</span> <span>${shortId(v.campaign.id)}</span></nav>
  <p class="live-state" data-live-state role="status"></p>
</div>
<article id="campaign" hx-get="/campaigns/${v.campaign.id}" hx-trigger="sse:change, every 30s" hx-swap="innerHTML" hx-sync="this:queue last">
${campaignRegion(v)}
</article>`;
}
