/**
 * A buy's delivery reports, newest period first: each one's period, kind, sequence,
 * figures, where it came from, and whether it counts. A restatement (`adjusted`,
 * `window_update`) is marked, and the report it replaced is shown struck through
 * with a link to its replacement, so a person sees why a period's figure changed.
 */
import type { ReportRow } from '../../../store/index.js';
import { utc, when } from '../../format.js';
import { html, type SafeHtml } from '../../html.js';
import { money } from '../campaigns.js';
import { amount } from './bits.js';
import type { MediaBuyView } from './view.js';

/** The table stays short on a long flight; the API has them all. */
export const REPORTS_SHOWN = 100;

function state(r: ReportRow): SafeHtml {
  if (r.kind === 'snapshot') return html`<span class="badge badge-neutral" data-report-state="snapshot" title="The seller's cumulative figure, read by polling: shown on the buy when newer, never added to the periods">snapshot</span>`;
  if (r.superseded_by) return html`<span class="badge badge-neutral" data-report-state="superseded">superseded</span> <span class="small muted">by <a href="#report-${r.superseded_by}"><code>${r.superseded_by.slice(0, 12)}…</code></a></span>`;
  return html`<span class="badge badge-good" data-report-state="counted">counted</span>`;
}

function kind(r: ReportRow): SafeHtml {
  const type = r.kind === 'snapshot' ? 'snapshot' : (r.notification_type ?? 'report');
  const restates = r.is_adjusted === 1 || type === 'adjusted' || type === 'window_update';
  return html`<code>${type}</code>${restates ? html` <span class="flag flag-adjusted" data-adjusted="true">restated</span>` : ''}`;
}

function reportRow(r: ReportRow, v: MediaBuyView): SafeHtml {
  const superseded = r.superseded_by !== null;
  return html`<tr id="report-${r.id}" class="${superseded ? 'report-superseded' : ''}" data-report-id="${r.id}" data-superseded-by="${r.superseded_by ?? ''}" data-period-start="${new Date(r.period_start).toISOString()}">
  <td class="nowrap"><time datetime="${new Date(r.period_start).toISOString()}">${utc(r.period_start)}</time><br><span class="muted small">to ${utc(r.period_end)}</span></td>
  <td>${kind(r)}</td>
  <td class="num hide-narrow">${r.sequence_number ?? '—'}</td>
  <td class="num figure">${money(r.impressions)}</td>
  <td class="num figure" data-spend="${r.spend}">${amount(r.spend, r.currency ?? v.buy.currency)}</td>
  <td class="hide-narrow"><span class="source source-${r.source}">${r.source}</span></td>
  <td class="nowrap hide-narrow">${when(r.received_at, v.now)}</td>
  <td>${state(r)}</td>
</tr>`;
}

export function buyReports(v: MediaBuyView): SafeHtml {
  const head = html`<h2 id="reports-title">Reports <span class="muted small">(${v.reports.length})</span></h2>`;
  if (v.reports.length === 0) {
    const b = v.buy;
    const next = b.next_expected_at !== null ? html` The next is expected ${when(b.next_expected_at, v.now)}.` : '';
    return html`${head}<p class="empty">No delivery report yet.${next}</p>`;
  }
  const newest = [...v.reports].sort((a, b) => b.period_start - a.period_start || b.received_at - a.received_at).slice(0, REPORTS_SHOWN);
  const more = v.reports.length - newest.length;
  return html`${head}
<div class="table-wrap"><table class="reports">
  <caption class="visually-hidden">Delivery reports, newest period first</caption>
  <thead><tr><th scope="col">Period (UTC)</th><th scope="col">Kind</th><th scope="col" class="num hide-narrow">Seq</th><th scope="col" class="num">Impressions</th><th scope="col" class="num">Spend</th><th scope="col" class="hide-narrow">Source</th><th scope="col" class="hide-narrow">Received</th><th scope="col">Counts</th></tr></thead>
  <tbody>${newest.map((r) => reportRow(r, v))}</tbody>
</table></div>
${more > 0 ? html`<p class="muted small">${more} older report${more === 1 ? '' : 's'} not shown: <code>GET /v1/media-buys/${v.buy.id}/delivery</code> has them all.</p>` : ''}`;
}
