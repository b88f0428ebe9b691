/**
 * What a person may answer to an operation that waits (docs/ARCHITECTURE.md, People in the loop), as forms.
 * Only the decisions the request allows are offered, and only to a key whose role
 * may answer; the server applies the same rules again whatever a form says.
 */
import type { InputRequest } from '../../domain/input-request.js';
import { questionIdOf } from '../../domain/input-question.js';
import { parseInputRequest } from '../../engine/input-requests.js';
import type { OperationRow } from '../../store/index.js';
import { html, type SafeHtml } from '../html.js';
import { correctionTemplate, rejectedCreatives } from './creative-answer.js';

/** What a waiting operation asks (docs/ARCHITECTURE.md, People in the loop); `allowed` is empty when nothing can be answered here. */
export type InputRequestView = Pick<InputRequest, 'id' | 'kind' | 'message' | 'reason' | 'seller_status' | 'fields' | 'expires_at' | 'creatives' | 'media_buy'> & { allowed: string[]; requested_at?: string };

export const KIND_LABELS: Record<string, string> = {
  seller_input: 'Seller asks',
  spend_approval: 'Spend approval',
  governance_conditions: 'Governance conditions',
  creative_rejected: 'Creative rejected',
};

/** The stored request, or, for a wait recorded without one (older rows), what the seller said, with nothing to answer. */
export function inputRequestOf(o: OperationRow): InputRequestView | undefined {
  if (o.needs_input !== 1) return undefined;
  return parseInputRequest(o) ?? { kind: 'seller_input', message: o.input_message ?? 'The seller needs input.', reason: o.status, allowed: [] };
}

export interface AnswerFormsOptions {
  csrf: string;
  /** Whether the signed-in key may answer (approver or admin). */
  canAnswer: boolean;
  /** Whether this build takes answers at all. */
  answersEnabled: boolean;
  role: string;
  returnTo: 'inbox' | 'operation';
}

export function answerForms(o: OperationRow, request: InputRequestView, opts: AnswerFormsOptions): SafeHtml {
  if (!opts.canAnswer) return html`<p class="muted role-note">Answering needs the approver role; you are signed in as ${opts.role}.</p>`;
  if (!opts.answersEnabled) return html`<p class="muted">Answering from the dashboard is not available in this version.</p>`;
  const allows = (d: string) => request.allowed.includes(d);
  if (!allows('approve') && !allows('reject') && !allows('respond')) return html`<p class="muted">Nothing can be answered here.</p>`;
  // A rejected creative's `reject` dismisses the rejection (nothing is sent); a message is welcome, not needed.
  const creative = request.kind === 'creative_rejected';
  const rejectNeedsWhy = request.kind !== 'seller_input' && !creative;
  // Each form says which question it answers: an answer to a question asked since is refused, not taken for it.
  const questionId = request.requested_at !== undefined ? questionIdOf({ id: request.id, requested_at: request.requested_at }) : undefined;
  const question = questionId !== undefined ? html`<input type="hidden" name="question_id" value="${questionId}">` : '';
  // The id names the question: live refreshes keep a form a person is filling in (hx-preserve),
  // and a new question replaces it.
  const idBase = `answer-${o.id}-${(questionId ?? `${request.kind}-${[...request.allowed].sort().join('-')}`).replace(/[^A-Za-z0-9_-]/g, '-')}`;
  const decide =
    allows('approve') || allows('reject')
      ? html`<form method="post" action="/operations/${o.id}/input" class="stack answer-form">
    <input type="hidden" name="_csrf" value="${opts.csrf}">
    <input type="hidden" name="return_to" value="${opts.returnTo}">
    ${question}
    <label for="${idBase}-message">Message <span class="muted">(${rejectNeedsWhy && allows('reject') ? 'required to reject' : 'optional'}; recorded with your name)</span></label>
    <textarea id="${idBase}-message" name="message" rows="2" maxlength="2000"></textarea>
    <div class="button-row">
      ${allows('approve') ? html`<button type="submit" name="decision" value="approve" class="primary">${request.kind === 'spend_approval' ? 'Approve and send' : 'Approve'}</button>` : ''}
      ${allows('reject') ? html`<button type="submit" name="decision" value="reject" class="danger">${creative ? 'Dismiss the rejection' : 'Reject'}</button>` : ''}
    </div>
  </form>`
      : '';
  const respond = allows('respond')
    ? html`<details class="respond">
    <summary>${creative ? 'Send a corrected creative…' : 'Respond with corrected parameters…'}</summary>
    <form method="post" action="/operations/${o.id}/input" class="stack answer-form">
      <input type="hidden" name="_csrf" value="${opts.csrf}">
      <input type="hidden" name="return_to" value="${opts.returnTo}">
      <input type="hidden" name="decision" value="respond">
      ${question}
      ${
        creative
          ? html`<label for="${idBase}-params">Corrected creatives (JSON: <code>{"creatives": [...]}</code>, as sent; fix what the seller rejected)</label>
      <textarea id="${idBase}-params" name="params" rows="10" required spellcheck="false" class="mono">${correctionTemplate(o, request)}</textarea>`
          : html`<label for="${idBase}-params">Parameters (a JSON object merged over the request)</label>
      <textarea id="${idBase}-params" name="params" rows="5" required spellcheck="false" class="mono" placeholder='{"packages": [{"budget": 20000}]}'></textarea>`
      }
      <label for="${idBase}-respond-message">Note with the corrections <span class="muted">(optional)</span></label>
      <input id="${idBase}-respond-message" name="message" maxlength="2000">
      <button type="submit" class="primary">${creative ? 'Send corrected creative' : 'Send corrected request'}</button>
    </form>
  </details>`
    : '';
  return html`<div class="answer" id="${idBase}" hx-preserve="true">${decide}${respond}</div>`;
}

/** On an operation's own page: what it waits for, and the forms. */
export function waitingPanel(o: OperationRow, opts: Omit<AnswerFormsOptions, 'returnTo'>): SafeHtml {
  const request = inputRequestOf(o);
  if (!request) return html``;
  return html`<section class="panel waiting" aria-labelledby="waiting-title">
  <h2 id="waiting-title"><span class="kind kind-${request.kind}">${KIND_LABELS[request.kind] ?? request.kind}</span> Waiting for a person</h2>
  <p class="message">${request.message}</p>
  ${whyAsked(request)}
  ${request.kind === 'creative_rejected' ? rejectedCreatives(request) : ''}
  ${answerForms(o, request, { ...opts, returnTo: 'operation' })}
</section>`;
}

/** The machine-readable why of a request (the seller's own reason code, or the tenant rule), and the seller status that asked when it says more. */
export function whyAsked(request: InputRequestView): SafeHtml {
  if (!request.reason) return html``;
  const status = request.seller_status && request.seller_status !== request.reason ? html` <span class="muted">(seller status <code>${request.seller_status}</code>)</span>` : '';
  return html`<p class="meta reason"><span>Reason: <code>${request.reason}</code>${status}</span></p>`;
}
