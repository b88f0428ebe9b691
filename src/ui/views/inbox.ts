/** The inbox: everything that waits for a person, oldest first, with the answers each allows. */
import type { AgentRow, OperationRow } from '../../store/index.js';
import { duration, shortId, utc, when } from '../format.js';
import { html, type SafeHtml } from '../html.js';
import { answerForms, inputRequestOf, KIND_LABELS, whyAsked, type AnswerFormsOptions } from './answer-forms.js';
import { rejectedCreatives } from './creative-answer.js';

export interface InboxView {
  rows: OperationRow[];
  agents: AgentRow[];
  now: number;
  forms: Omit<AnswerFormsOptions, 'returnTo'>;
  notice?: string;
  /** More wait than are shown. */
  more: boolean;
}

function waitedSince(o: OperationRow, requestedAt: string | undefined): number {
  const asked = requestedAt ? Date.parse(requestedAt) : NaN;
  return Number.isFinite(asked) ? asked : (o.status_since ?? o.updated_at);
}

/** For a buy, what it would spend: the packages' budgets added up. */
function budgetOf(o: OperationRow): string | undefined {
  if (o.type !== 'create_media_buy') return undefined;
  try {
    const packages = (JSON.parse(o.request_body) as { packages?: Array<{ budget?: unknown }> }).packages ?? [];
    const budgets = packages.map((p) => p.budget).filter((b): b is number => typeof b === 'number');
    if (budgets.length === 0) return undefined;
    const total = budgets.reduce((a, b) => a + b, 0);
    return `${total.toLocaleString('en-US')} across ${packages.length} package${packages.length === 1 ? '' : 's'}`;
  } catch {
    return undefined;
  }
}

function item(o: OperationRow, agentName: string, v: InboxView): SafeHtml {
  const request = inputRequestOf(o)!;
  const since = waitedSince(o, request.requested_at);
  const expires = request.expires_at ? Date.parse(request.expires_at) : NaN;
  return html`<li class="card inbox-item" data-operation-id="${o.id}" data-kind="${request.kind}">
  <div class="card-head">
    <span class="kind kind-${request.kind}">${KIND_LABELS[request.kind] ?? request.kind}</span>
    <a href="/operations/${o.id}" class="card-title"><code>${o.type}</code> ${shortId(o.id)}</a>
    <span class="muted">${agentName}</span>
  </div>
  <p class="message">${request.message}</p>
  ${request.fields?.length ? html`<ul class="conditions">${request.fields.map((f) => html`<li><code>${f.field}</code>${f.required_value !== undefined ? html` → <code>${JSON.stringify(f.required_value)}</code>` : ''}: ${f.reason}</li>`)}</ul>` : ''}
  <p class="meta">
    <span>Waiting <strong>${duration(v.now - since)}</strong> <span class="muted">(since ${utc(since)})</span></span>
    <span>${Number.isFinite(expires) ? html`Expires ${when(expires, v.now)}` : 'No expiry'}</span>
    ${budgetOf(o) ? html`<span>Budget <strong>${budgetOf(o)}</strong></span>` : ''}
  </p>
  ${whyAsked(request)}
  ${request.kind === 'creative_rejected' ? rejectedCreatives(request) : ''}
  ${answerForms(o, request, { ...v.forms, returnTo: 'inbox' })}
</li>`;
}

export function inboxRegion(v: InboxView): SafeHtml {
  if (v.rows.length === 0) return html`<p class="empty">Nothing waits for a person right now.</p>`;
  const names = new Map(v.agents.map((a) => [a.id, a.name]));
  return html`<ol class="inbox">${v.rows.map((o) => item(o, names.get(o.agent_id) ?? o.agent_id, v))}</ol>
${v.more ? html`<p class="muted">Showing the oldest ${v.rows.length}. <a href="/operations?needs_input=true">All that need input</a></p>` : ''}`;
}

export function inboxPage(v: InboxView): SafeHtml {
  return html`<div class="page-head">
  <h1>Inbox</h1>
  <p class="live-state" data-live-state role="status"></p>
</div>
<p class="muted lead">Everything that waits for a person, oldest first.</p>
${v.notice ? html`<p class="notice notice-info" role="status">${v.notice}</p>` : ''}
<section id="inbox" aria-label="Waiting for a person" hx-get="/inbox" hx-trigger="sse:change, every 30s" hx-swap="innerHTML" hx-sync="this:queue last">
${inboxRegion(v)}
</section>`;
}
