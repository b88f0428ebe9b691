/**
 * A buy's creatives on its page (README, Creatives): each creative sent to the
 * seller, where its review stands as the seller says it, why a rejected one was
 * rejected, whether a review is stalled, and the sync_creatives operation that
 * sent it (where a rejection waits for a person, answered in the inbox).
 */
import { presentCreative, type CreativeJson } from '../../../domain/creatives.js';
import type { CreativeRow } from '../../../store/index.js';
import { shortId, when } from '../../format.js';
import { html, type SafeHtml } from '../../html.js';
import type { MediaBuyView } from './view.js';

const TONES: Record<string, string> = { processing: 'pending', pending_review: 'pending', approved: 'good', rejected: 'bad', archived: 'neutral' };

export function creativeStatusBadge(status: string): SafeHtml {
  return html`<span class="badge badge-${TONES[status] ?? 'neutral'}" data-creative-status="${status}">${status.replace(/_/g, ' ')}</span>`;
}

/** What a person may want to know beyond the status: a rejection's fate, a stall, a send that failed. */
function notes(c: CreativeJson, now: number): SafeHtml {
  const parts: SafeHtml[] = [];
  if (c.stalled) parts.push(html`<span class="flag flag-stalled" title="Its review has waited past ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS; it is still followed">review stalled</span>`);
  if (c.inbox === 'asked' || c.inbox === 'owed') parts.push(html`<a class="flag flag-input" href="/inbox">waits for a person</a>`);
  if (c.dismissed) parts.push(html`<span class="muted small">dismissed by ${c.dismissed.by ?? 'someone'}</span>`);
  if (c.sync.state === 'failed') parts.push(html`<span class="flag flag-stalled">not sent</span>`);
  if (c.review_deadline_at && !c.stalled) parts.push(html`<span class="muted small">review due ${when(Date.parse(c.review_deadline_at), now)}</span>`);
  return html`${parts.map((p, i) => html`${i > 0 ? ' ' : ''}${p}`)}`;
}

function creativeRow(c: CreativeJson, now: number): SafeHtml {
  const error = c.sync.error as { message?: unknown } | undefined;
  return html`<tr data-creative-id="${c.creative_id}">
  <td>${c.name ?? html`<span class="muted">unnamed</span>`}<br><code class="small">${c.creative_id}</code></td>
  <td>${creativeStatusBadge(c.status)} ${notes(c, now)}</td>
  <td class="reason">${c.rejection_reason ?? (c.sync.state === 'failed' && typeof error?.message === 'string' ? error.message : html`<span class="muted">—</span>`)}</td>
  <td class="hide-narrow">${c.package_ids.length ? c.package_ids.map((p, i) => html`${i > 0 ? ', ' : ''}<code>${p}</code>`) : html`<span class="muted">none</span>`}</td>
  <td class="hide-narrow"><a href="/operations/${c.sync.operation_id}">${shortId(c.sync.operation_id)}</a>${c.sync.advisory_status ? html` <span class="muted small" title="What the sync reply said of it: advice only, never taken for the review">(reply said ${c.sync.advisory_status.replace(/_/g, ' ')})</span>` : ''}</td>
  <td class="hide-narrow">${c.updated_at ? when(Date.parse(c.updated_at), now) : ''}</td>
</tr>`;
}

/** The creatives section: empty-handed it says what the buy waits for. */
export function buyCreatives(v: Pick<MediaBuyView, 'buy' | 'now'> & { creatives?: CreativeRow[] }): SafeHtml {
  const list = (v.creatives ?? []).map(presentCreative);
  const head = html`<h2 id="creatives-title">Creatives</h2>`;
  if (list.length === 0) {
    const waits = v.buy.status === 'pending_creatives' ? ' The seller waits for creatives before this buy can start.' : '';
    return html`${head}<p class="empty">No creatives have been sent to this buy.${waits} Send them with <code>POST /v1/media-buys/${v.buy.id}/creatives</code>.</p>`;
  }
  return html`${head}
<div class="table-wrap"><table class="creatives">
  <caption class="visually-hidden">Creatives sent to the seller for this buy, and their reviews</caption>
  <thead><tr><th scope="col">Creative</th><th scope="col">Review</th><th scope="col">Reason</th><th scope="col" class="hide-narrow">Packages</th><th scope="col" class="hide-narrow">Sent with</th><th scope="col" class="hide-narrow">Updated</th></tr></thead>
  <tbody>${list.map((c) => creativeRow(c, v.now))}</tbody>
</table></div>`;
}
