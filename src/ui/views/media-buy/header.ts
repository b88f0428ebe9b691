/**
 * A buy's header: who sells it, its status, and the figures a person looks for first (budget, spend, pacing, reports);
 * above them, a banner when its seller no longer answers for it (unreadable.ts).
 */
import { isTerminalBuyStatus } from '../../../domain/media-buy-status.js';
import { deliveryRouteText } from '../../../domain/reporting-webhook.js';
import { parseJsonOr } from './json.js';
import { shortId, utc, when } from '../../format.js';
import { html, type SafeHtml } from '../../html.js';
import { money } from '../campaigns.js';
import { amount, buyStatusBadge, pacingBadge, spendBar } from './bits.js';
import { periodRange } from './delivery-chart.js';
import { unreadableBanner } from './unreadable.js';
import type { MediaBuyView } from './view.js';

function fact(label: string, value: SafeHtml | string | null | undefined, key?: string): SafeHtml {
  if (value === null || value === undefined || value === '') return html``;
  return html`<div${key ? html` data-fact="${key}"` : ''}><dt>${label}</dt><dd>${value}</dd></div>`;
}

function flight(v: MediaBuyView): SafeHtml | null {
  const { flight_start: start, flight_end: end } = v.buy;
  if (start === null && end === null) return null;
  if (start !== null && end !== null) return html`<span title="${utc(start)} → ${utc(end)}">${periodRange(start, end)}</span>`;
  return html`${start === null ? '—' : utc(start)} → ${end === null ? '—' : utc(end)}`;
}

function reportsLine(v: MediaBuyView): SafeHtml {
  const b = v.buy;
  const via = deliveryRouteText(b.reporting_auth);
  return html`<span data-reports-received="${b.reports_received}">${b.reports_received}</span> received${b.report_frequency ? html`, ${b.report_frequency}` : ''}, ${via}${
    b.reports_missing > 0 ? html`; <strong class="warn-text">${b.reports_missing} missing</strong>` : ''
  }${b.final_received === 1 ? '; final report in' : ''}`;
}

export function buyHeader(v: MediaBuyView): SafeHtml {
  const b = v.buy;
  const governance = parseJsonOr<{ plan_id?: string } | null>(b.governance, null);
  const ended = isTerminalBuyStatus(b.status);
  return html`${unreadableBanner(v)}<div class="op-head buy-head">
  <h1><span>Media buy <code>${b.media_buy_id}</code></span> ${buyStatusBadge(b.status)}</h1>
  <p class="op-id">Ours <code>${b.id}</code> <button type="button" class="copy" data-copy-text="${b.id}" aria-label="Copy media buy id">Copy id</button> · sold by <strong>${v.agent?.name ?? b.agent_id}</strong></p>
</div>
<div class="stat-cards">
  <div class="stat" data-stat="budget"><span class="stat-label">Budget</span><span class="stat-value">${amount(b.budget_amount, b.currency)}</span></div>
  <div class="stat stat-wide" data-stat="spend"><span class="stat-label">Spent</span>${spendBar(b)}</div>
  <div class="stat" data-stat="pacing"><span class="stat-label">Pacing</span><span class="stat-value">${pacingBadge(b.pacing_state, b.pacing_ratio)}</span><span class="stat-note">plan by then ${amount(b.pacing_expected, b.currency)}</span></div>
  <div class="stat" data-stat="impressions"><span class="stat-label">Impressions</span><span class="stat-value">${money(b.impressions)}</span>${b.clicks !== null ? html`<span class="stat-note">${money(b.clicks)} clicks</span>` : ''}</div>
</div>
<dl class="facts">
  ${fact('Flight', flight(v), 'flight')}
  ${fact('Delivered through', b.delivered_through === null ? null : utc(b.delivered_through), 'through')}
  ${fact('Reports', reportsLine(v), 'reports')}
  ${fact('Next report expected', !ended && b.next_expected_at !== null ? when(b.next_expected_at, v.now) : null)}
  ${fact('Figures updated', b.delivery_updated_at === null ? null : html`${when(b.delivery_updated_at, v.now)} <span class="muted">by ${b.delivery_source ?? '—'}</span>`)}
  ${fact('Campaign', b.campaign_id ? html`<a href="/campaigns/${b.campaign_id}">${v.campaign?.name ?? shortId(b.campaign_id)}</a>` : null, 'campaign')}
  ${fact('Governance plan', governance?.plan_id ? html`<code>${governance.plan_id}</code>` : null)}
  ${fact('Bought by', html`<a href="/operations/${b.operation_id}">${shortId(b.operation_id)}</a> <span class="muted">create_media_buy</span>`, 'operation')}
  ${fact('Seller revision', b.revision === null ? null : String(b.revision))}
  ${fact('Created', when(b.created_at, v.now))}
  ${fact('Ended', b.ended_at === null ? null : when(b.ended_at, v.now))}
  ${fact('Next check', b.next_check_at === null ? null : when(b.next_check_at, v.now))}
</dl>`;
}
