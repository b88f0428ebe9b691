/**
 * The outcome report after a governed operation's seller result (AdCP
 * spec, governance): `report_plan_outcome`, the plan's ledger. Its arguments were stored with
 * the seller's result (governed-send.ts), so every attempt sends the same
 * `idempotency_key` and bytes; it is retried until the governance agent has
 * taken it (`accepted`, or `findings`: also taken, and kept). An answer saying
 * the report itself is wrong (correctable or terminal) cannot get better by
 * resending: it is kept as `refused`, the operation is marked stalled, and a
 * person looks.
 */
import type { GovernedState, OutcomeState } from '../../domain/governed-flow.js';
import type { OperationRow } from '../../store/index.js';
import { json, leaseOf, released, type CallFailure, type StepWriter } from './step-writes.js';

/** Whether the governance agent took an outcome report: `accepted` or `findings` (3.2 `outcome_state`), else undefined. */
export function outcomeReplyStatus(data: Record<string, unknown>): 'accepted' | 'findings' | undefined {
  if (data.status === 'accepted' || data.status === 'findings') return data.status;
  return data.outcome_state === 'accepted' ? 'accepted' : data.outcome_state ? 'findings' : undefined;
}

export class OutcomeReport {
  constructor(private readonly writer: StepWriter) {}

  async report(row: OperationRow): Promise<void> {
    const lease = leaseOf(row);
    const state = JSON.parse(row.governance!) as GovernedState;
    const outcome = state.outcome;
    if (state.step !== 'reporting' || !outcome || outcome.status !== 'pending') {
      await this.writer.commit(row, lease, 'reporting', () => ({ patch: { next_check_at: null, check_kind: null }, value: null }));
      return;
    }
    const agent = await this.writer.governanceAgent(state);
    if (!agent) {
      await this.refused(row, { error: { code: 'GOVERNANCE_AGENT_NOT_FOUND', message: `governance agent ${state.agent_id} was removed` }, transient: false });
      return;
    }
    const answer = await this.writer.call(agent, 'report_plan_outcome', this.writer.tokens.openedRequest(outcome.request));
    if ('failure' in answer) {
      // A code we do not know is transient only within the retry budget: past it, kept as refused.
      if (answer.failure.transient && !this.writer.budgetSpent(row, answer.failure)) await this.writer.retryLater(row, lease, 'reporting', answer.failure);
      else await this.refused(row, answer.failure);
      return;
    }
    const data = answer.reply.data;
    const status = outcomeReplyStatus(data);
    if (typeof data.outcome_id !== 'string' || !status) {
      await this.writer.retryLater(row, lease, 'reporting', { error: { code: 'NO_OUTCOME', message: 'the reply carries no outcome_id and status' }, transient: true });
      return;
    }
    const now = this.writer.now();
    const reported: OutcomeState = {
      ...outcome,
      status,
      outcome_id: data.outcome_id,
      ...(typeof data.committed_budget === 'number' ? { committed_budget: data.committed_budget } : {}),
      ...(data.plan_summary !== undefined ? { plan_summary: data.plan_summary } : {}),
      ...(Array.isArray(data.findings) && data.findings.length > 0 ? { findings: data.findings } : {}),
      reported_at: new Date(now).toISOString(),
    };
    const result = await this.writer.commit(row, lease, 'reporting', (current, s) => ({
      patch: { governance: json({ ...s, step: 'reported', outcome: reported, last_error: undefined }), next_check_at: null, check_kind: null, attempt: 0, stalled: 0, stalled_reason: null, ...released },
      events: [
        {
          source: 'call',
          kind: 'outcome_reported',
          from: current.status,
          to: current.status,
          detail: {
            outcome: reported.outcome,
            status,
            outcome_id: reported.outcome_id,
            committed_budget: reported.committed_budget ?? null,
            plan_summary: reported.plan_summary ?? null,
            ...(reported.findings ? { findings: reported.findings } : {}),
            ...(data.replayed === true ? { replayed: true } : {}),
          },
        },
      ],
      value: true,
    }));
    if (result.outcome === 'applied' && result.value) this.writer.deps.metrics.governanceOutcome(reported.outcome, status);
  }

  private async refused(row: OperationRow, failure: CallFailure): Promise<void> {
    const reason = `the governance agent refused the outcome report (${failure.error.code}${failure.error.message ? `: ${failure.error.message}` : ''}); a person must look`;
    const result = await this.writer.commit(row, leaseOf(row), 'reporting', (current, s) => ({
      patch: {
        governance: json({ ...s, step: 'reported', outcome: { ...s.outcome!, status: 'refused', error: { code: failure.error.code, ...(failure.error.message ? { message: failure.error.message } : {}) } } }),
        next_check_at: null,
        check_kind: null,
        attempt: 0,
        stalled: 1,
        stalled_reason: reason,
        ...released,
      },
      events: [
        { source: 'call', kind: 'outcome_refused', from: current.status, to: current.status, detail: { error: failure.error } },
        { source: 'call', kind: 'stalled', from: current.status, to: current.status, detail: { reason } },
      ],
      value: true,
    }));
    const outcome = (JSON.parse(row.governance!) as GovernedState).outcome?.outcome ?? 'unknown';
    if (result.outcome === 'applied' && result.value) this.writer.deps.metrics.governanceOutcome(outcome, 'refused');
  }
}
