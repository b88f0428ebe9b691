/** The operations page: filters, search, the live table and keyset paging. */
import { OPERATION_STATUSES, TERMINAL_STATUSES, type OperationStatus } from '../../domain/status.js';
import type { AgentRow, OperationRow } from '../../store/index.js';
import { duration, shortId, statusBadge, when } from '../format.js';
import { html, queryString, type SafeHtml } from '../html.js';

export interface ListFilters {
  q?: string;
  status?: string;
  type?: string;
  agent?: string;
  needs_input?: 'true';
  stalled?: 'true';
}

export interface OperationsListView {
  filters: ListFilters;
  rows: OperationRow[];
  agents: AgentRow[];
  /** The cursor of the page shown (absent on the first page). */
  cursor?: string;
  nextCursor?: string;
  now: number;
  notice?: string;
}

/** Task types a person is likely to filter by; any other can be typed. */
const COMMON_TYPES = ['create_media_buy', 'update_media_buy', 'get_products', 'sync_creatives', 'list_creatives', 'get_media_buy_delivery', 'sync_plans', 'check_governance'];

export function listQuery(filters: ListFilters, cursor?: string): string {
  return queryString({ ...filters, cursor });
}

/** How long it has been in its status, or for an ended one how long it took. */
export function timeInStatus(o: OperationRow, now: number): string {
  if (TERMINAL_STATUSES.has(o.status as OperationStatus)) return `took ${duration((o.completed_at ?? o.updated_at) - o.created_at)}`;
  return `for ${duration(now - (o.status_since ?? o.updated_at))}`;
}

function flags(o: OperationRow): SafeHtml {
  return html`${o.needs_input === 1 ? html` <span class="flag flag-input">needs input</span>` : ''}${o.stalled === 1 ? html` <span class="flag flag-stalled" title="${o.stalled_reason ?? ''}">stalled</span>` : ''}`;
}

function row(o: OperationRow, agentName: string, now: number): SafeHtml {
  return html`<tr data-operation-id="${o.id}" data-status="${o.status}">
  <td><a href="/operations/${o.id}" aria-label="Operation ${o.id}">${shortId(o.id)}</a><span class="only-narrow"><code>${o.type}</code></span></td>
  <td class="hide-narrow"><code>${o.type}</code></td>
  <td class="hide-narrow">${agentName}</td>
  <td>${statusBadge(o.status)}${flags(o)}</td>
  <td class="nowrap">${timeInStatus(o, now)}</td>
  <td class="hide-narrow nowrap">${when(o.created_at, now)}</td>
</tr>`;
}

/** The part of the page that refreshes live: table and pager. */
export function operationsRegion(v: OperationsListView): SafeHtml {
  const names = new Map(v.agents.map((a) => [a.id, a.name]));
  const filtered = Object.values(v.filters).some((x) => x !== undefined && x !== '');
  const table =
    v.rows.length === 0
      ? html`<p class="empty">${filtered ? 'No operations match these filters.' : 'No operations yet. Start one with POST /v1/media-buys or POST /v1/operations.'}</p>`
      : html`<div class="table-wrap"><table class="ops">
  <caption class="visually-hidden">Operations, newest first</caption>
  <thead><tr><th scope="col">Operation</th><th scope="col" class="hide-narrow">Type</th><th scope="col" class="hide-narrow">Agent</th><th scope="col">Status</th><th scope="col">Time</th><th scope="col" class="hide-narrow">Created</th></tr></thead>
  <tbody>${v.rows.map((o) => row(o, names.get(o.agent_id) ?? o.agent_id, v.now))}</tbody>
</table></div>`;
  const pager = html`<nav class="pager" aria-label="Pages">
  ${v.cursor ? html`<a href="/operations${listQuery(v.filters)}">← Newest</a>` : html`<span class="muted">Newest first</span>`}
  ${v.nextCursor ? html`<a rel="next" href="/operations${listQuery(v.filters, v.nextCursor)}">Older →</a>` : ''}
</nav>`;
  return html`${table}${pager}`;
}

function filterForm(v: OperationsListView): SafeHtml {
  const f = v.filters;
  const statusOptions = OPERATION_STATUSES.map((s) => html`<option value="${s}"${f.status === s ? html` selected` : ''}>${s}</option>`);
  const agentOptions = v.agents.map((a) => html`<option value="${a.id}"${f.agent === a.id ? html` selected` : ''}>${a.name}</option>`);
  return html`<form class="filters" method="get" action="/operations" role="search" aria-label="Filter operations">
  <div class="field field-wide">
    <label for="f-q">Search</label>
    <input id="f-q" type="search" name="q" value="${f.q ?? ''}" placeholder="operation id, task id or idempotency key" maxlength="200">
  </div>
  <div class="field">
    <label for="f-status">Status</label>
    <select id="f-status" name="status"><option value="">any</option>${statusOptions}</select>
  </div>
  <div class="field">
    <label for="f-type">Type</label>
    <input id="f-type" name="type" value="${f.type ?? ''}" list="f-types" maxlength="64" placeholder="any">
    <datalist id="f-types">${COMMON_TYPES.map((t) => html`<option value="${t}"></option>`)}</datalist>
  </div>
  <div class="field">
    <label for="f-agent">Agent</label>
    <select id="f-agent" name="agent"><option value="">any</option>${agentOptions}</select>
  </div>
  <div class="field checks">
    <label><input type="checkbox" name="needs_input" value="true"${f.needs_input ? html` checked` : ''}> Needs input</label>
    <label><input type="checkbox" name="stalled" value="true"${f.stalled ? html` checked` : ''}> Stalled</label>
  </div>
  <div class="field actions">
    <button type="submit" class="primary">Apply</button>
    <a href="/operations" class="button">Clear</a>
  </div>
</form>`;
}

export function operationsPage(v: OperationsListView): SafeHtml {
  const regionUrl = `/operations${listQuery(v.filters, v.cursor)}`;
  return html`<div class="page-head">
  <h1>Operations</h1>
  <p class="live-state" data-live-state role="status"></p>
</div>
${v.notice ? html`<p class="notice notice-info" role="status">${v.notice}</p>` : ''}
${filterForm(v)}
<section id="operations" aria-label="Operations list" hx-get="${regionUrl}" hx-trigger="sse:change, every 30s" hx-swap="innerHTML" hx-sync="this:queue last">
${operationsRegion(v)}
</section>`;
}
