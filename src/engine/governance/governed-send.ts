/**
 * The two points where a governed operation meets the ordinary send path
 * (src/engine/operation-service.ts):
 *
 * - just before the seller call: the stored request (built once, before the
 *   check, and checked byte for byte) goes with the approval's
 *   `governance_context`, only while that approval is still usable. Otherwise
 *   (it expired while the send waited: a crash, a seller that was down, a slow
 *   approval) nothing is sent and the operation goes back to its check: a
 *   resend after a re-check is the same bytes and key with a fresh token;
 * - the seller's terminal result: the outcome report is scheduled in the same
 *   commit (an outbox), so no result goes unreported across a crash.
 */
import { randomUUID } from 'node:crypto';
import { approvalUsable } from '../../domain/governance-decision.js';
import { CHECK_STEP, outcomeRequest, parseGovernance, recheck, REPORT_STEP, sellerArguments, SYNC_STEP, type GovernedState } from '../../domain/governed-flow.js';
import { isTerminal, type OperationStatus } from '../../domain/status.js';
import type { Lease, OperationRow } from '../../store/index.js';
import type { MutationPlan } from '../../store/operations-repo.js';
import type { ObservationOutcome } from '../observation-plan.js';
import { json, released, type StepWriter } from './step-writes.js';

export class GovernedSend {
  constructor(private readonly writer: StepWriter) {}

  async argumentsFor(row: OperationRow, lease: Lease): Promise<Record<string, unknown> | null> {
    const state = parseGovernance(row.governance);
    const request = this.writer.deps.operations.requests.open(row.request_body);
    if (!state) return request;
    const now = this.writer.now();
    if (state.step === 'approved' && state.approval && approvalUsable(state.approval, now)) return sellerArguments(request, this.writer.tokens.open(state.approval.token));
    if (state.step === 'syncing') {
      // Sent before its registration with the seller (a held buy a person approved): that comes first.
      await this.writer.commit(row, lease, 'syncing', (current) => ({
        patch: { check_kind: SYNC_STEP, next_check_at: now, attempt: 0, ...released },
        events: [{ source: 'timer', kind: 'governance_sync_due', from: current.status, to: current.status, detail: { reason: 'the governance agent is registered with the seller before the check' } }],
        value: null,
      }));
      return null;
    }
    const expired = state.step === 'approved' ? state.approval : undefined;
    await this.writer.commit(row, lease, ['approved', 'checking'], (current, s) => ({
      patch: { governance: json(recheck(s, now)), check_kind: CHECK_STEP, next_check_at: now, attempt: 0, ...released },
      events: [
        expired
          ? {
              source: 'timer',
              kind: 'approval_expired',
              from: current.status,
              to: current.status,
              detail: { check_id: expired.check_id ?? null, expires_at: new Date(expired.expires_at).toISOString(), reason: 'the approval is no longer usable: checked again before anything is sent' },
            }
          : { source: 'timer', kind: 'governance_check_due', from: current.status, to: current.status, detail: { reason: 'no approval yet: checked before anything is sent' } },
      ],
      value: null,
    }));
    return null;
  }

  amendObservation(row: OperationRow, plan: MutationPlan<ObservationOutcome>, now: number): MutationPlan<ObservationOutcome> {
    const state = parseGovernance(row.governance);
    if (!state) return plan;
    const patch = plan.patch ?? {};
    const to = patch.status as OperationStatus | undefined;
    if (state.step === 'approved' && to && isTerminal(to) && !isTerminal(row.status as OperationStatus)) {
      const key = randomUUID();
      const { outcome, request } = outcomeRequest(state, key, {
        status: to,
        request: this.writer.deps.operations.requests.open(row.request_body),
        ...(patch.result ? { result: JSON.parse(patch.result) as Record<string, unknown> } : row.result ? { result: JSON.parse(row.result) as Record<string, unknown> } : {}),
        ...(patch.error ? { error: JSON.parse(patch.error) as { code: string; message?: string } } : {}),
      });
      const next: GovernedState = { ...state, step: 'reporting', outcome: { outcome, request, status: 'pending' } };
      const source = plan.events?.[0]?.source ?? 'call';
      const committed = (request.seller_response as { committed_budget?: number } | undefined)?.committed_budget;
      return {
        ...plan,
        patch: { ...patch, governance: json(next), next_check_at: now, check_kind: REPORT_STEP },
        events: [
          ...(plan.events ?? []),
          { source, kind: 'outcome_due', from: to, to, detail: { outcome, idempotency_key: key, ...(committed !== undefined ? { committed_budget: committed } : {}) } },
        ],
      };
    }
    // Whatever else arrives while the report is owed (a late duplicate, a poll) leaves its timer alone.
    if (state.step === 'reporting' && 'check_kind' in patch && patch.check_kind !== REPORT_STEP) {
      return { ...plan, patch: { ...patch, check_kind: REPORT_STEP, next_check_at: row.check_kind === REPORT_STEP && row.next_check_at !== null ? row.next_check_at : now } };
    }
    return plan;
  }
}
