/** Subscriptions (outbound notifications) and one subscription's deliveries, each with its attempts and, when it failed, a redeliver button. */
import type { AttemptRow, DeliveryRow } from '../../store/subscription-deliveries-repo.js';
import type { SubscriptionRow } from '../../store/subscriptions-repo.js';
import { shortId, utc, when } from '../format.js';
import { html, queryString, type SafeHtml } from '../html.js';

const DELIVERY_TONES: Record<string, string> = { delivered: 'good', failed: 'bad', pending: 'pending' };

function events(s: SubscriptionRow): string {
  return s.events === null ? 'all notifications' : (JSON.parse(s.events) as string[]).join(', ');
}

function state(s: SubscriptionRow): SafeHtml {
  return s.disabled_at === null
    ? html`<span class="badge badge-good">active</span>`
    : html`<span class="badge badge-bad" title="${s.disabled_reason ?? ''}">disabled</span>`;
}

export function subscriptionsPage(rows: SubscriptionRow[], now: number): SafeHtml {
  const body =
    rows.length === 0
      ? html`<p class="empty">No subscriptions yet. Add one with <code>POST /v1/subscriptions</code> or <code>adcp-orchestrator subscriptions add</code>.</p>`
      : html`<div class="table-wrap"><table class="subscriptions">
  <caption class="visually-hidden">Subscriptions</caption>
  <thead><tr><th scope="col">Target</th><th scope="col">Format</th><th scope="col" class="hide-narrow">Notifications</th><th scope="col">State</th><th scope="col" class="hide-narrow">Created</th></tr></thead>
  <tbody>${rows.map(
    (s) => html`<tr data-subscription-id="${s.id}">
    <td><a href="/subscriptions/${s.id}"><code class="wrap">${s.url_display}</code></a></td>
    <td>${s.format}</td>
    <td class="hide-narrow">${events(s)}</td>
    <td>${state(s)}</td>
    <td class="hide-narrow nowrap">${when(s.created_at, now)}${s.created_by ? html` <span class="muted">by ${s.created_by}</span>` : ''}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
  return html`<div class="page-head"><h1>Subscriptions</h1></div>${body}`;
}

export interface SubscriptionView {
  subscription: SubscriptionRow;
  deliveries: DeliveryRow[];
  attempts: Map<string, AttemptRow[]>;
  status?: string;
  nextCursor?: string;
  paged: boolean;
  now: number;
  csrf: string;
  canRedeliver: boolean;
  notice?: string;
}

function attemptsOf(list: AttemptRow[]): SafeHtml {
  if (list.length === 0) return html`<span class="muted">none yet</span>`;
  return html`<details class="detail"><summary>${list.length} attempt${list.length === 1 ? '' : 's'}</summary><ol class="attempts">${list.map(
    (a) => html`<li><time datetime="${new Date(a.started_at).toISOString()}">${utc(a.started_at)}</time> · ${a.outcome}${a.http_status !== null ? html` · HTTP ${a.http_status}` : ''} · ${a.duration_ms} ms${a.error ? html` · <span class="muted">${a.error}</span>` : ''}</li>`,
  )}</ol></details>`;
}

function deliveryRow(d: DeliveryRow, v: SubscriptionView): SafeHtml {
  const s = v.subscription;
  const redeliver =
    v.canRedeliver && d.status !== 'delivered' && s.disabled_at === null
      ? html`<form method="post" action="/subscriptions/${s.id}/deliveries/${d.id}/redeliver" class="inline">
      <input type="hidden" name="_csrf" value="${v.csrf}">
      <button type="submit" class="small-button">${d.status === 'failed' ? 'Redeliver' : 'Send now'}</button>
    </form>`
      : '';
  return html`<tr data-delivery-id="${d.id}" data-status="${d.status}">
  <td><code>${d.type}</code>${d.operation_id ? html`<br><a href="/operations/${d.operation_id}">${shortId(d.operation_id)}</a>` : ''}</td>
  <td><span class="badge badge-${DELIVERY_TONES[d.status] ?? 'neutral'}">${d.status}</span>${d.last_status !== null ? html` <span class="muted">HTTP ${d.last_status}</span>` : ''}${d.last_error && d.last_error !== `HTTP ${d.last_status}` ? html`<br><span class="muted small">${d.last_error}</span>` : ''}</td>
  <td>${attemptsOf(v.attempts.get(d.id) ?? [])}</td>
  <td class="hide-narrow nowrap">${when(d.created_at, v.now)}${d.status === 'pending' && d.next_attempt_at ? html`<br><span class="muted small">next ${when(d.next_attempt_at, v.now)}</span>` : ''}${d.redelivered_by ? html`<br><span class="muted small">redelivered by ${d.redelivered_by}</span>` : ''}</td>
  <td>${redeliver}</td>
</tr>`;
}

export function subscriptionPage(v: SubscriptionView): SafeHtml {
  const s = v.subscription;
  const filters = ['', 'pending', 'delivered', 'failed'].map(
    (st) => html`<a href="/subscriptions/${s.id}${queryString({ status: st })}"${(v.status ?? '') === st ? html` aria-current="true"` : ''}>${st || 'all'}</a>`,
  );
  const table =
    v.deliveries.length === 0
      ? html`<p class="empty">No deliveries${v.status ? ` ${v.status}` : ''} yet.</p>`
      : html`<div class="table-wrap"><table class="deliveries">
  <caption class="visually-hidden">Deliveries, newest first</caption>
  <thead><tr><th scope="col">Notification</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col" class="hide-narrow">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${v.deliveries.map((d) => deliveryRow(d, v))}</tbody>
</table></div>`;
  return html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/subscriptions">Subscriptions</a> <span aria-hidden="true">/</span> <span>${shortId(s.id)}</span></nav>
${v.notice ? html`<p class="notice notice-info" role="status">${v.notice}</p>` : ''}
<div class="op-head"><h1><code class="wrap">${s.url_display}</code> ${state(s)}</h1></div>
<dl class="facts">
  <div><dt>Format</dt><dd>${s.format}</dd></div>
  <div><dt>Notifications</dt><dd>${events(s)}</dd></div>
  <div><dt>Created</dt><dd>${when(s.created_at, v.now)}${s.created_by ? ` by ${s.created_by}` : ''}</dd></div>
  ${s.disabled_at ? html`<div><dt>Disabled</dt><dd>${when(s.disabled_at, v.now)}: ${s.disabled_reason ?? ''}</dd></div>` : ''}
</dl>
<h2>Deliveries</h2>
<nav class="tabs" aria-label="Deliveries by status">${filters}</nav>
${table}
<nav class="pager" aria-label="Pages">
  ${v.paged ? html`<a href="/subscriptions/${s.id}${queryString({ status: v.status })}">← Newest</a>` : html`<span class="muted">Newest first</span>`}
  ${v.nextCursor ? html`<a rel="next" href="/subscriptions/${s.id}${queryString({ status: v.status, cursor: v.nextCursor })}">Older →</a>` : ''}
</nav>`;
}
