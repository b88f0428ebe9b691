/** An operation's history as a table: when, from where, what changed, who did it, and the detail. */
import type { EventRow } from '../../store/index.js';
import { utc } from '../format.js';
import { html, type SafeHtml } from '../html.js';

export const SOURCE_LABELS: Record<string, string> = {
  call: 'call',
  webhook: 'webhook',
  poll: 'poll',
  reconcile: 'reconcile',
  user: 'person',
  timer: 'timer',
};

function scalar(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Short details read as "key: value" lines; anything long or nested opens on demand. */
export function detailCell(detail: string | null): SafeHtml {
  if (detail === null) return html`<span class="muted">—</span>`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(detail);
  } catch {
    return html`<span>${detail}</span>`;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return html`<code>${scalar(parsed)}</code>`;
  const entries = Object.entries(parsed as Record<string, unknown>);
  const simple = entries.every(([, v]) => v === null || typeof v !== 'object') && detail.length <= 400;
  if (simple) {
    return html`<dl class="kv">${entries.map(([k, v]) => html`<div><dt>${k}</dt><dd>${scalar(v)}</dd></div>`)}</dl>`;
  }
  return html`<details class="detail"><summary>${entries.map(([k]) => k).join(', ')}</summary><pre>${JSON.stringify(parsed, null, 2)}</pre></details>`;
}

/** What an event changed: its kind, and the status move when there is one (also used for a live buy's events). */
export function change(e: Pick<EventRow, 'kind' | 'from_status' | 'to_status'>): SafeHtml {
  const kind = e.kind === 'transition' ? '' : html`<span class="event-kind">${e.kind.replace(/_/g, ' ')}</span> `;
  if (e.from_status && e.to_status && e.from_status !== e.to_status) {
    return html`${kind}<span class="transition">${e.from_status} <span aria-label="to">→</span> <strong>${e.to_status}</strong></span>`;
  }
  if (e.to_status && !e.from_status) return html`${kind}<span class="transition"><span aria-label="to">→</span> <strong>${e.to_status}</strong></span>`;
  return kind || html`<span class="muted">${e.kind}</span>`;
}

export function timeline(events: EventRow[]): SafeHtml {
  if (events.length === 0) return html`<p class="empty">No events yet.</p>`;
  return html`<div class="table-wrap"><table class="timeline">
  <caption class="visually-hidden">Events, oldest first</caption>
  <thead><tr><th scope="col">At</th><th scope="col">Source</th><th scope="col">Change</th><th scope="col">Actor</th><th scope="col">Detail</th></tr></thead>
  <tbody>${events.map(
    (e) => html`<tr data-event-kind="${e.kind}">
    <td class="nowrap"><time datetime="${new Date(e.at).toISOString()}">${utc(e.at)}</time></td>
    <td><span class="source source-${e.source}">${SOURCE_LABELS[e.source] ?? e.source}</span></td>
    <td>${change(e)}</td>
    <td class="actor">${e.actor ?? html`<span class="muted">—</span>`}</td>
    <td>${detailCell(e.detail)}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
}
