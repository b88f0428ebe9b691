/**
 * The governance panel of a governed operation's page: what the governance agent
 * decided and until when it holds, and whether the outcome was reported or is still
 * owed. It reads the same `governance` block the API shows (presentGovernance), so no
 * token ever reaches the page.
 */
import { presentGovernance, type GovernedState } from '../../domain/governed-flow.js';
import { when } from '../format.js';
import { html, type SafeHtml } from '../html.js';
import { money } from './campaigns.js';

type Shown = ReturnType<typeof presentGovernance>;

const STEP_TEXT: Record<string, string> = {
  checking: 'Checking with the governance agent before anything is sent to the seller.',
  reviewing: 'A person at the governance agent is reviewing the request.',
  conditions: 'The governance agent approves on conditions; a person here decides whether to apply them.',
  approved: 'Approved: the seller is called with this approval.',
  reporting: 'The seller’s result is in; its outcome is owed to the governance agent and is being reported.',
  reported: 'The outcome was reported to the governance agent.',
  ended: 'Ended by governance: nothing was bought.',
};

const DECISION_TONES: Record<string, string> = { approved: 'good', denied: 'bad', conditions: 'attention', submitted: 'pending' };

function fact(label: string, value: SafeHtml | string | number | null | undefined, attr = ''): SafeHtml {
  if (value === null || value === undefined || value === '') return html``;
  return html`<div${attr ? html` data-gov="${attr}"` : ''}><dt>${label}</dt><dd>${value}</dd></div>`;
}

const iso = (s: string | undefined | null) => (s ? Date.parse(s) : undefined);

/** Conditions and findings read as a list: field and reason where the agent gave them, else their JSON. */
function items(title: string, list: unknown[] | undefined): SafeHtml {
  if (!list || list.length === 0) return html``;
  const line = (x: unknown) => {
    if (x && typeof x === 'object') {
      const o = x as Record<string, unknown>;
      const head = [o.field, o.category_id, o.code].find((v) => typeof v === 'string') as string | undefined;
      const text = [o.reason, o.explanation, o.message].find((v) => typeof v === 'string') as string | undefined;
      const value = o.required_value !== undefined ? html` <span class="muted">(required: <code>${JSON.stringify(o.required_value)}</code>)</span>` : '';
      if (head || text) return html`<li>${head ? html`<code>${head}</code> ` : ''}${text ?? ''}${value}</li>`;
    }
    return html`<li><code>${JSON.stringify(x)}</code></li>`;
  };
  return html`<div class="gov-list" data-gov="${title.toLowerCase()}"><strong>${title}</strong><ul>${list.map(line)}</ul></div>`;
}

function outcomeText(g: Shown, operationEnded: boolean): SafeHtml {
  const o = g.outcome;
  if (!o) {
    if (g.step === 'ended') return html`none owed (nothing was bought)`;
    return operationEnded ? html`<strong>owed</strong>, not yet reported` : html`owed once the seller’s result is in`;
  }
  if (o.status === 'pending') return html`<strong>owed</strong>: ${o.outcome}, being reported`;
  if (o.status === 'refused') return html`<strong>refused</strong> by the governance agent${o.error ? html`: <code>${o.error.code}</code> ${o.error.message ?? ''}` : ''}`;
  return html`<strong>reported</strong>: ${o.outcome}, ${o.status}`;
}

export function governancePanel(state: GovernedState, opts: { now: number; operationEnded: boolean; agentName?: string }): SafeHtml {
  const g = presentGovernance(state);
  const c = g.check;
  const expires = iso(c?.expires_at);
  const usable = iso((c as { usable_until?: string } | null)?.usable_until);
  const o = g.outcome;
  return html`<section class="panel governance" id="governance" aria-labelledby="governance-title" data-step="${g.step}">
  <h2 id="governance-title">Governance ${c ? html`<span class="badge badge-${DECISION_TONES[c.decision] ?? 'neutral'}" data-decision="${c.decision}">${c.decision}</span>` : html`<span class="badge badge-pending" data-decision="">not decided yet</span>`}</h2>
  <p>${STEP_TEXT[g.step] ?? g.step}</p>
  <dl class="facts">
    ${fact('Plan', html`<code>${g.plan_id}</code>`)}
    ${fact('Governance agent', opts.agentName ?? g.agent_id)}
    ${fact('Check id', c?.check_id ? html`<code>${c.check_id}</code>` : null, 'check-id')}
    ${fact('Decided', c ? when(Date.parse(c.decided_at), opts.now) : null)}
    ${fact('Review task', c?.task_id ? html`<code>${c.task_id}</code>` : null)}
    ${fact(expires !== undefined && expires <= opts.now ? 'Expired' : 'Expires', expires !== undefined ? when(expires, opts.now) : null, 'expires')}
    ${fact('Approval usable until', usable !== undefined ? when(usable, opts.now) : null)}
    ${fact('Checks sent', g.checks)}
    ${fact('Conditions rounds', g.rounds > 0 ? g.rounds : null)}
    ${fact('Outcome', outcomeText(g, opts.operationEnded), 'outcome')}
    ${fact('Committed budget', o && o.committed_budget !== null ? money(o.committed_budget) : null, 'committed')}
    ${fact('Outcome key', o?.idempotency_key ? html`<code>${String(o.idempotency_key)}</code>` : null)}
    ${fact('Reported', o?.reported_at ? when(Date.parse(o.reported_at), opts.now) : null)}
    ${fact('Last problem', g.last_error ? html`<code>${g.last_error.code}</code> ${g.last_error.message ?? ''}` : null)}
  </dl>
  ${c?.explanation ? html`<p class="muted">${c.explanation}</p>` : ''}
  ${items('Conditions', c?.conditions)}
  ${items('Check findings', c?.findings)}
  ${items('Outcome findings', o?.findings)}
</section>`;
}
