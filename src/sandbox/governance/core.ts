/**
 * The sandbox governance agent's brain, independent of any transport: the
 * four governance tasks, the review tasks' polls, sandbox_review, and the
 * state they share. MCP and A2A reach it through the AdcpServer built in
 * server.ts.
 *
 * `sync_plans` and `report_plan_outcome` mutate, so they run at most once per
 * idempotency_key (the same ledger the sandbox seller uses: SDK store, JCS
 * payload hash); a replay answers the first reply with `replayed: true`.
 */
import { auditLogReply } from './audit.js';
import { CheckDesk, type CheckTimings } from './checks.js';
import { DeliveryLedger } from './delivery-ledger.js';
import { OutcomeDesk } from './outcomes.js';
import { isPlanIssue, PlanBook } from './plans.js';
import { assertValidReply, requestIssues, schemaError } from './schema-check.js';
import { GovernanceSigner } from './signing.js';
import { GovernanceStatsRecorder, type GovernanceStats } from './stats.js';
import { IdempotencyLedger } from '../idempotency.js';
import { getTaskReply, listTasksReply } from '../task-views.js';
import { errorResult, isPlainObject, ok, type ToolResult } from '../wire.js';

/** One caller, one idempotency scope: the sandbox is single-tenant. */
const PRINCIPAL = 'sandbox-governance';

export class GovernanceCore {
  readonly plans = new PlanBook();
  readonly signer = GovernanceSigner.mint();
  readonly stats = new GovernanceStatsRecorder();
  readonly checks: CheckDesk;
  readonly outcomes: OutcomeDesk;
  /** Delivery reported per plan and buy (report_plan_outcome outcome: delivery). */
  readonly deliveries = new DeliveryLedger();
  private readonly ledger = new IdempotencyLedger();

  constructor(
    /** This agent's URL: the `iss` of its tokens. */
    readonly agentUrl: string,
    private readonly timings: CheckTimings,
  ) {
    this.checks = new CheckDesk(this.plans, this.signer, agentUrl, timings, this.stats);
    this.outcomes = new OutcomeDesk(this.plans, this.checks, this.signer, timings.now, this.deliveries);
  }

  async syncPlans(args: Record<string, unknown>): Promise<ToolResult> {
    this.stats.syncCall();
    const issues = requestIssues('sync_plans', args);
    // Problems inside one plan are that plan's `status: error`; anything
    // else (no plans array, a stray field, no key) refuses the request.
    const general = issues.filter((i) => !isPlanIssue(i, args.plans));
    if (general.length > 0) return schemaError('sync_plans', general);
    const { result } = await this.ledger.run(PRINCIPAL, String(args.idempotency_key), args, async () => {
      const results = this.plans.sync(args.plans as unknown[], issues, new Date(this.timings.now()));
      const errors = results.flatMap((r) => r.errors);
      const body: Record<string, unknown> = {
        plans: results.map(({ plan_id, status, version }) => ({ plan_id, status, version })),
        // The 3.0 plan item allows no other fields, so each plan's problems
        // are AdCP errors at the root, naming the plan (field, details.plan_id).
        ...(errors.length > 0 && { errors }),
      };
      assertValidReply('sync_plans', body);
      return ok(body);
    });
    return result;
  }

  async checkGovernance(args: Record<string, unknown>): Promise<ToolResult> {
    return this.checks.check(args);
  }

  async reportPlanOutcome(args: Record<string, unknown>): Promise<ToolResult> {
    const key = typeof args.idempotency_key === 'string' ? args.idempotency_key : undefined;
    if (key) this.stats.outcomeCall(key);
    const issues = requestIssues('report_plan_outcome', args);
    if (issues.length > 0 || !key) return schemaError('report_plan_outcome', issues);
    let committed = 0;
    const { outcome, result } = await this.ledger.run(PRINCIPAL, key, args, async () => {
      const reply = await this.outcomes.report(args);
      committed = reply.isError ? 0 : Number(reply.structuredContent.committed_budget ?? 0);
      return reply;
    });
    this.stats.outcome({
      idempotency_key: key,
      plan_id: String(args.plan_id),
      ...(typeof args.check_id === 'string' && { check_id: args.check_id }),
      outcome: String(args.outcome),
      committed,
      ...(typeof result.structuredContent.status === 'string' && { status: result.structuredContent.status }),
      ...(args.outcome === 'delivery' && isPlainObject(args.delivery) && { delivery: structuredClone(args.delivery) }),
      replayed: outcome === 'replay',
      at: new Date(this.timings.now()).toISOString(),
    });
    return result;
  }

  getPlanAuditLogs(args: Record<string, unknown>): ToolResult {
    const issues = requestIssues('get_plan_audit_logs', args);
    if (issues.length > 0) return schemaError('get_plan_audit_logs', issues);
    return auditLogReply(args, this.plans, this.checks, this.outcomes, this.deliveries);
  }

  getTask(args: Record<string, unknown>): ToolResult {
    return getTaskReply(this.checks.reviews, args, (taskId) => this.stats.poll(taskId));
  }

  listTasks(args: Record<string, unknown>): ToolResult {
    return listTasksReply(this.checks.reviews, args);
  }

  /** `sandbox_review {task_id, decision: approved|denied, reason?}`: the human's answer, out of band. */
  async review(args: Record<string, unknown>): Promise<ToolResult> {
    if (typeof args.task_id !== 'string') return errorResult('INVALID_REQUEST', 'task_id is required', { field: 'task_id' });
    if (args.decision !== 'approved' && args.decision !== 'denied') {
      return errorResult('INVALID_REQUEST', 'decision must be approved or denied', { field: 'decision' });
    }
    const reason = typeof args.reason === 'string' ? args.reason : undefined;
    return this.checks.resolveReview(args.task_id, 'tool', args.decision, reason);
  }

  snapshot(): GovernanceStats {
    const planVersions: Record<string, number> = {};
    const committedByPlan: Record<string, number> = {};
    const deliveredByPlan: Record<string, number> = {};
    for (const id of this.plans.ids()) {
      const plan = this.plans.get(id)!;
      planVersions[id] = plan.version;
      committedByPlan[id] = plan.committedBudget;
      deliveredByPlan[id] = this.deliveries.deliveredSpend(id);
    }
    return this.stats.snapshot({ planVersions, committedByPlan, deliveredByPlan, deliveries: structuredClone(this.deliveries.records), jwks: this.signer.jwks });
  }

  close(): void {
    this.checks.close();
  }
}
