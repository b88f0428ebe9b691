/**
 * The governed flow as the rest of the engine sees it: the hooks the operation
 * service calls (hooks.ts), the runner of the flow's own steps (check, review
 * poll, outcome report) for the scheduler, and what a person's answer to
 * `governance_conditions` changes. The steps themselves are in seller-sync.ts,
 * governance-check.ts, governed-send.ts and outcome-report.ts.
 */
import type { RecordedAnswer } from '../../domain/input-request.js';
import { afterConditionsApplied, CHECK_STEP, GOVERNANCE_STEPS, parseGovernance, REPORT_STEP, REVIEW_STEP, SYNC_STEP } from '../../domain/governed-flow.js';
import type { Lease, OperationRow } from '../../store/index.js';
import type { MutationPlan, NewEvent, OperationPatch } from '../../store/operations-repo.js';
import { EngineError } from '../errors.js';
import type { ObservationOutcome } from '../observation-plan.js';
import { GovernanceCheck, rekeyedRequest } from './governance-check.js';
import { GovernedSend } from './governed-send.js';
import type { GovernanceHooks } from './hooks.js';
import { OutcomeReport } from './outcome-report.js';
import { SellerSync } from './seller-sync.js';
import { json, StepWriter, type FlowDeps } from './step-writes.js';

export class GovernanceFlow implements GovernanceHooks {
  private readonly writer: StepWriter;
  private readonly checks: GovernanceCheck;
  private readonly sends: GovernedSend;
  private readonly reports: OutcomeReport;
  private readonly syncs: SellerSync;
  private readonly unsubscribe: () => void;

  constructor(deps: FlowDeps) {
    this.writer = new StepWriter(deps);
    this.checks = new GovernanceCheck(this.writer);
    this.sends = new GovernedSend(this.writer);
    this.reports = new OutcomeReport(this.writer);
    this.syncs = new SellerSync(this.writer, (row) => this.checks.check(row));
    deps.operations.governance = this;
    // A step made due by a write elsewhere (the seller's result scheduling its report) runs at once.
    this.unsubscribe = deps.bus.subscribe(({ operation: op }) => {
      if (GOVERNANCE_STEPS.has(op.check_kind ?? '') && op.lease_owner === null && op.next_check_at !== null && op.next_check_at <= deps.clock.now()) deps.wake();
    });
  }

  handles(checkKind: string | null): boolean {
    return checkKind !== null && GOVERNANCE_STEPS.has(checkKind);
  }

  async run(row: OperationRow): Promise<void> {
    switch (row.check_kind) {
      case SYNC_STEP:
        return this.syncs.run(row);
      case CHECK_STEP:
        return this.checks.check(row);
      case REVIEW_STEP:
        return this.checks.review(row);
      case REPORT_STEP:
        return this.reports.report(row);
      default:
        throw new Error(`not a governed step: ${row.check_kind}`);
    }
  }

  argumentsFor(row: OperationRow, lease: Lease): Promise<Record<string, unknown> | null> {
    return this.sends.argumentsFor(row, lease);
  }

  amendObservation(row: OperationRow, plan: MutationPlan<ObservationOutcome>, now: number): MutationPlan<ObservationOutcome> {
    return this.sends.amendObservation(row, plan, now);
  }

  /**
   * A person approves the conditions (their `required_value`s, with the person's
   * `params` over them): the changed request, under a new idempotency_key, is
   * checked again. Throws a 400 when the conditions cannot be met as answered,
   * before anything is written. The caller takes the answer in the same write.
   */
  conditionsApproved(current: OperationRow, recorded: RecordedAnswer): { patch: OperationPatch; events: NewEvent[] } {
    const state = parseGovernance(current.governance);
    const conditions = state?.check?.conditions;
    if (!state || state.step !== 'conditions' || !conditions) throw new EngineError('not_waiting', `operation ${current.id} does not wait on governance conditions`, 409);
    const { requests } = this.writer.deps.operations;
    // A person's params are kept sealed in the recorded answer; they are applied opened.
    const rekeyed = rekeyedRequest(requests, current, conditions, requests.openedIn(recorded.params));
    if ('problem' in rekeyed) throw new EngineError('conditions_not_met', rekeyed.problem, 400, { conditions });
    return {
      patch: { ...rekeyed.patch, governance: json(afterConditionsApplied(state, this.writer.now())) },
      events: [
        {
          source: 'user',
          kind: 'conditions_applied',
          from: current.status,
          to: current.status,
          actor: recorded.actor,
          detail: { by: recorded.actor, conditions, ...(recorded.params ? { params: recorded.params } : {}), idempotency_key: rekeyed.key },
        },
      ],
    };
  }

  close(): void {
    this.unsubscribe();
  }
}
