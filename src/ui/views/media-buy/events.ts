/**
 * What happened to a buy, beside what happened to the operation that bought it: the
 * buy's own events (status read from the seller, reports, pacing, a person's
 * requests) and the create_media_buy's (sent, answered, governed), merged newest
 * first with a column saying whose each is; then the operations started on the buy
 * (pause, resume, cancel, refresh) with their status.
 */
import type { BuyEventRow, EventRow, OperationRow } from '../../../store/index.js';
import { shortId, statusBadge, utc } from '../../format.js';
import { html, type SafeHtml } from '../../html.js';
import { change, detailCell, SOURCE_LABELS } from '../timeline.js';
import type { MediaBuyView } from './view.js';

type Shown = { of: 'buy'; e: BuyEventRow } | { of: 'operation'; e: EventRow };

/** Newest first; at equal times the operation's first (it came before the buy existed). */
export function mergedEvents(buyEvents: readonly BuyEventRow[], operationEvents: readonly EventRow[]): Shown[] {
  const all: Shown[] = [...buyEvents.map((e) => ({ of: 'buy' as const, e })), ...operationEvents.map((e) => ({ of: 'operation' as const, e }))];
  return all.sort((a, b) => b.e.at - a.e.at || (a.of === b.of ? b.e.id - a.e.id : a.of === 'buy' ? -1 : 1));
}

function eventRow(s: Shown, operationId: string): SafeHtml {
  const e = s.e;
  const whose = s.of === 'buy' ? html`<span class="of of-buy">buy</span>` : html`<a class="of of-operation" href="/operations/${operationId}">operation</a>`;
  return html`<tr data-event-of="${s.of}" data-event-kind="${e.kind}">
    <td class="nowrap"><time datetime="${new Date(e.at).toISOString()}">${utc(e.at)}</time></td>
    <td>${whose}</td>
    <td><span class="source source-${e.source}">${SOURCE_LABELS[e.source] ?? e.source}</span></td>
    <td>${change(e)}</td>
    <td class="actor">${e.actor ?? html`<span class="muted">—</span>`}</td>
    <td>${detailCell(e.detail)}</td>
  </tr>`;
}

/** The task an operation on the buy ran, in a person's words. */
function requestLabel(o: OperationRow): string {
  if (o.type !== 'update_media_buy') return o.type;
  try {
    const p = JSON.parse(o.request_body) as { paused?: unknown; canceled?: unknown };
    if (p.canceled === true) return 'cancel';
    if (p.paused === true) return 'pause';
    if (p.paused === false) return 'resume';
  } catch {
    /* shown by its type */
  }
  return o.type;
}

function requests(v: MediaBuyView): SafeHtml {
  if (v.requests.length === 0) return html``;
  return html`<h3 class="sub">Operations on this buy</h3>
<ul class="related requests">${v.requests.map(
    (o) => html`<li data-request="${requestLabel(o)}" data-operation-id="${o.id}"><strong>${requestLabel(o)}</strong> <a href="/operations/${o.id}">${shortId(o.id)}</a> <code>${o.type}</code> ${statusBadge(o.status)} <span class="muted small">${utc(o.created_at)}</span></li>`,
  )}</ul>`;
}

export function buyEvents(v: MediaBuyView): SafeHtml {
  const shown = mergedEvents(v.buyEvents, v.operationEvents);
  const table =
    shown.length === 0
      ? html`<p class="empty">No events yet.</p>`
      : html`<div class="table-wrap"><table class="timeline buy-timeline">
  <caption class="visually-hidden">Events of the buy and of its create_media_buy operation, newest first</caption>
  <thead><tr><th scope="col">At</th><th scope="col">Of</th><th scope="col">Source</th><th scope="col">Change</th><th scope="col">Actor</th><th scope="col">Detail</th></tr></thead>
  <tbody>${shown.map((s) => eventRow(s, v.buy.operation_id))}</tbody>
</table></div>`;
  return html`<h2 id="events-title">Events</h2>
${requests(v)}
${table}
${v.eventsLeftOut > 0 ? html`<p class="muted small">${v.eventsLeftOut} older events not shown: <code>GET /v1/media-buys/${v.buy.id}</code> and <code>GET /v1/operations/${v.buy.operation_id}</code> have them all.</p>` : ''}`;
}
