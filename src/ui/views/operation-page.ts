/** One operation: where it stands, how long it has waited, what happened, what was sent and received, and what a person may do. */
import { presentOperation } from '../../api/present.js';
import { TERMINAL_STATUSES, type OperationStatus } from '../../domain/status.js';
import type { AgentRow, EventRow, OperationRow } from '../../store/index.js';
import { parseGovernance } from '../../domain/governed-flow.js';
import { shortId, statusBadge, utc, when } from '../format.js';
import { html, type SafeHtml } from '../html.js';
import { governancePanel } from './governance-panel.js';
import { timeInStatus } from './operations-list.js';
import { timeline } from './timeline.js';

export interface OperationView {
  operation: OperationRow;
  events: EventRow[];
  agent?: AgentRow;
  /** The governance agent of a governed operation, for its name. */
  governanceAgent?: AgentRow;
  children: OperationRow[];
  now: number;
  csrf: string;
  /** What the signed-in key may do here (its role decides). */
  canCancel: boolean;
  /** What it waits for and the answer forms, when it waits for a person (see answer-forms.ts). */
  answer?: SafeHtml;
  notice?: string;
}

function jsonBlock(id: string, title: string, value: unknown): SafeHtml {
  if (value === null || value === undefined) return html``;
  return html`<section class="json-block" aria-labelledby="${id}-title">
  <div class="json-head"><h2 id="${id}-title">${title}</h2><button type="button" class="copy" data-copy="${id}" aria-label="Copy ${title.toLowerCase()} JSON">Copy</button></div>
  <pre id="${id}" tabindex="0"><code>${JSON.stringify(value, null, 2)}</code></pre>
</section>`;
}

function fact(label: string, value: SafeHtml | string | null | undefined): SafeHtml {
  if (value === null || value === undefined || value === '') return html``;
  return html`<div><dt>${label}</dt><dd>${value}</dd></div>`;
}

function cancelPanel(v: OperationView): SafeHtml {
  const o = v.operation;
  const ended = TERMINAL_STATUSES.has(o.status as OperationStatus);
  const atSeller = ended && o.type === 'create_media_buy' && o.status === 'completed';
  if (!v.canCancel || (ended && !atSeller)) return html``;
  const hasCancel = v.children.some((c) => c.type === 'update_media_buy' && c.status !== 'failed' && c.status !== 'rejected');
  if (hasCancel) return html``;
  const explain = atSeller
    ? 'The seller created this media buy. Canceling sends update_media_buy with canceled: true, as an operation of its own.'
    : 'Tracking stops here and the operation ends canceled. AdCP has no call that cancels a pending task, so the seller is not told.';
  // Preserved across live refreshes (an open panel and a typed reason stay), under an id
  // that changes with what canceling would do, so a changed offer replaces the old one.
  return html`<details class="panel danger cancel-panel" id="cancel-${atSeller ? 'at-seller' : 'here'}" hx-preserve="true">
  <summary>${atSeller ? 'Cancel this media buy at the seller…' : 'Cancel this operation…'}</summary>
  <form method="post" action="/operations/${o.id}/cancel" class="stack">
    <input type="hidden" name="_csrf" value="${v.csrf}">
    <p>${explain}</p>
    <label for="cancel-reason">Reason <span class="muted">(optional, recorded with your name)</span></label>
    <input id="cancel-reason" name="reason" maxlength="1000">
    <button type="submit" class="danger">Yes, cancel it</button>
  </form>
</details>`;
}

/** A campaign's buys have the campaign as their parent (ids `cmp_…`, src/engine/governance/campaigns.ts). */
function parentLink(parentId: string): SafeHtml {
  if (parentId.startsWith('cmp_')) return html`campaign <a href="/campaigns/${parentId}">${shortId(parentId)}</a>`;
  return html`<a href="/operations/${parentId}">${shortId(parentId)}</a>`;
}

function related(v: OperationView): SafeHtml {
  const o = v.operation;
  if (!o.parent_id && v.children.length === 0) return html``;
  return html`<section aria-labelledby="related-title"><h2 id="related-title">Related operations</h2><ul class="related">
  ${o.parent_id ? html`<li>Started on behalf of ${parentLink(o.parent_id)}</li>` : ''}
  ${v.children.map((c) => html`<li><a href="/operations/${c.id}">${shortId(c.id)}</a> <code>${c.type}</code> ${statusBadge(c.status)}</li>`)}
</ul></section>`;
}

/** The part that refreshes live (forms inside keep what a person typed: hx-preserve). */
export function operationRegion(v: OperationView): SafeHtml {
  const o = v.operation;
  const shown = presentOperation(o);
  const ended = TERMINAL_STATUSES.has(o.status as OperationStatus);
  const governed = parseGovernance(o.governance);
  return html`<div class="op-head">
  <h1><code>${o.type}</code> ${statusBadge(o.status)}</h1>
  <p class="op-id">Operation <code>${o.id}</code> <button type="button" class="copy" data-copy-text="${o.id}" aria-label="Copy operation id">Copy id</button></p>
</div>
<p class="waited" data-waited>${ended ? `Ended ${o.status}, ${timeInStatus(o, v.now)}.` : `${o.status} ${timeInStatus(o, v.now)} (started ${utc(o.created_at)}).`}</p>
${o.stalled === 1 ? html`<p class="notice notice-warn" role="status"><strong>Stalled:</strong> ${o.stalled_reason ?? 'its deadline passed'}. Reconciling continues at a slower pace until a person cancels it.</p>` : ''}
${v.answer ?? ''}
${governed ? governancePanel(governed, { now: v.now, operationEnded: ended, agentName: v.governanceAgent?.name }) : ''}
<dl class="facts">
  ${fact('Agent', v.agent ? html`${v.agent.name} <span class="muted">(${v.agent.protocol})</span>` : o.agent_id)}
  ${fact('Seller task id', o.task_id ? html`<code>${o.task_id}</code>` : null)}
  ${fact('Context id', o.context_id ? html`<code>${o.context_id}</code>` : null)}
  ${fact('Idempotency key', html`<code>${o.idempotency_key}</code>`)}
  ${fact('Created', when(o.created_at, v.now))}
  ${fact('Updated', when(o.updated_at, v.now))}
  ${fact('Ended', o.completed_at ? when(o.completed_at, v.now) : null)}
  ${fact('Deadline', !ended && o.deadline_at ? when(o.deadline_at, v.now) : null)}
  ${fact('Next check', o.next_check_at ? when(o.next_check_at, v.now) : null)}
  ${fact('Webhooks', o.webhook_mode)}
</dl>
${cancelPanel(v)}
${related(v)}
<section aria-labelledby="timeline-title"><h2 id="timeline-title">Timeline</h2>${timeline(v.events)}</section>
${jsonBlock('json-request', 'Request', shown.request)}
${jsonBlock('json-result', 'Result', shown.result)}
${jsonBlock('json-error', 'Error', shown.error)}`;
}

export function operationPage(v: OperationView, liveRegionUrl: string): SafeHtml {
  return html`<div class="page-head crumbs-row">
  <nav class="crumbs" aria-label="Breadcrumb"><a href="/operations">Operations</a> <span aria-hidden="true">/</span> <span>${shortId(v.operation.id)}</span></nav>
  <p class="live-state" data-live-state role="status"></p>
</div>
${v.notice ? html`<p class="notice notice-info" role="status">${v.notice}</p>` : ''}
<article id="operation" hx-get="${liveRegionUrl}" hx-trigger="sse:change, every 30s" hx-swap="innerHTML" hx-sync="this:queue last">
${operationRegion(v)}
</article>`;
}
