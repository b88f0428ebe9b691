/**
 * `get_plan_audit_logs`: each plan's budget state, its governed actions (one
 * per approval token), the check/outcome summary and, on request, the ordered
 * trail of entries, in the 3.0 reply shape. Entries carry each check's
 * `plan_hash`, so an auditor can tie every attestation to the plan revision it
 * was evaluated over.
 *
 * Delivery outcomes are entries too (their period and figures in
 * `explanation`, the only free field the 3.0 entry allows); the delivery
 * ledger itself (delivered beside committed, per plan and per report) is
 * under the reply's `ext.sandbox.delivery`, since the 3.0 budget object has
 * no field for it.
 */
import type { CheckDesk, CheckRecord } from './checks.js';
import type { DeliveryLedger } from './delivery-ledger.js';
import type { OutcomeDesk, OutcomeRecord } from './outcomes.js';
import type { PlanBook, StoredPlan } from './plans.js';
import { assertValidReply } from './schema-check.js';
import { errorResult, ok, type ToolResult } from '../wire.js';

export function auditLogReply(args: Record<string, unknown>, plans: PlanBook, checks: CheckDesk, outcomes: OutcomeDesk, deliveries: DeliveryLedger): ToolResult {
  const contexts = Array.isArray(args.governance_contexts) ? new Set(args.governance_contexts.map(String)) : undefined;
  const ids = new Set<string>([
    ...(Array.isArray(args.plan_ids) ? args.plan_ids.map(String) : []),
    ...(Array.isArray(args.portfolio_plan_ids) ? args.portfolio_plan_ids.map(String) : []),
  ]);
  // Asked by governance context only: the plans those contexts belong to.
  if (contexts && ids.size === 0) {
    for (const c of checks.records.values()) if (c.governance_context && contexts.has(c.governance_context)) ids.add(c.plan_id);
  }
  const found = [...ids].map((id) => plans.get(id)).filter((p): p is StoredPlan => p !== undefined);
  if (found.length === 0) return errorResult('PLAN_NOT_FOUND', 'none of the requested plans is known here', { field: 'plan_ids' });

  const inScope = (gc: string | undefined): boolean => !contexts || (gc !== undefined && contexts.has(gc));
  const body = {
    plans: found.map((plan) => {
      const planChecks = [...checks.records.values()].filter((c) => c.plan_id === plan.plan_id && c.status !== 'submitted' && inScope(c.governance_context));
      const planOutcomes = outcomes.records.filter((o) => o.plan_id === plan.plan_id && inScope(o.governance_context));
      return {
        plan_id: plan.plan_id,
        plan_version: plan.version,
        status: 'active',
        budget: {
          authorized: plan.budget.total,
          committed: plan.committedBudget,
          remaining: plan.budget.total - plan.committedBudget,
          utilization_pct: plan.budget.total > 0 ? round2((plan.committedBudget / plan.budget.total) * 100) : 0,
        },
        governed_actions: planChecks
          .filter((c) => c.status === 'approved')
          .map((c) => governedAction(c, planChecks, planOutcomes)),
        summary: summary(planChecks, planOutcomes),
        ...(args.include_entries === true && { entries: entries(planChecks, planOutcomes) }),
      };
    }),
    ext: { sandbox: { delivery: found.map((plan) => deliveryLedgerView(plan, deliveries, inScope)) } },
  };
  assertValidReply('get_plan_audit_logs', body);
  return ok(body);
}

function governedAction(check: CheckRecord, planChecks: CheckRecord[], planOutcomes: OutcomeRecord[]): Record<string, unknown> {
  const settled = planOutcomes.find((o) => o.outcome_id === check.settled_by);
  return {
    governance_context: check.governance_context,
    purchase_type: 'media_buy',
    status: settled ? 'completed' : 'active',
    committed: settled?.committed_budget ?? 0,
    check_count: planChecks.filter((c) => c.lineage_id === check.lineage_id).length,
    ...(settled?.seller_reference && { seller_reference: settled.seller_reference }),
  };
}

function summary(planChecks: CheckRecord[], planOutcomes: OutcomeRecord[]): Record<string, unknown> {
  const count = (s: string): number => planChecks.filter((c) => c.status === s).length;
  const escalated = planChecks.filter((c) => c.escalation);
  return {
    checks_performed: planChecks.length,
    outcomes_reported: planOutcomes.length,
    statuses: { approved: count('approved'), denied: count('denied'), conditions: count('conditions'), human_reviewed: escalated.length },
    findings_count:
      planChecks.reduce((n, c) => n + c.findings.length, 0) + planOutcomes.reduce((n, o) => n + o.findings.length, 0),
    escalations: escalated.map((c) => ({
      check_id: c.check_id,
      reason: c.escalation!.reason,
      ...(c.escalation!.resolution && { resolution: c.escalation!.resolution }),
      ...(c.escalation!.resolved_at && { resolved_at: c.escalation!.resolved_at }),
    })),
  };
}

function entries(planChecks: CheckRecord[], planOutcomes: OutcomeRecord[]): Array<Record<string, unknown>> {
  const slim = (f: { category_id: string; severity: string; explanation: string }) => ({
    category_id: f.category_id,
    severity: f.severity,
    explanation: f.explanation,
  });
  const fromChecks = planChecks.map((c) => ({
    id: c.check_id,
    type: 'check',
    timestamp: c.escalation?.resolved_at ?? c.at,
    plan_id: c.plan_id,
    caller: c.caller,
    tool: c.tool,
    status: c.status,
    check_type: 'intent',
    mode: 'enforce',
    ...(c.explanation && { explanation: c.explanation }),
    findings: c.findings.map(slim),
    ...(c.governance_context && { governance_context: c.governance_context }),
    plan_hash: c.plan_hash,
    purchase_type: 'media_buy',
  }));
  const fromOutcomes = planOutcomes.map((o) => ({
    id: o.outcome_id,
    type: 'outcome',
    timestamp: o.at,
    plan_id: o.plan_id,
    outcome: o.outcome,
    committed_budget: o.committed_budget,
    findings: o.findings.map(slim),
    governance_context: o.governance_context,
    purchase_type: o.purchase_type,
    outcome_status: o.status,
    ...(o.delivery && {
      explanation: `Delivered ${o.delivery.spend} (${o.delivery.impressions} impressions) in ${o.delivery.reporting_period.start} – ${o.delivery.reporting_period.end}.`,
    }),
  }));
  return [...fromChecks, ...fromOutcomes].sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

function deliveryLedgerView(plan: StoredPlan, deliveries: DeliveryLedger, inScope: (gc: string | undefined) => boolean): Record<string, unknown> {
  const reports = deliveries.records.filter((r) => r.plan_id === plan.plan_id && inScope(r.governance_context));
  const standing = reports.filter((r) => r.superseded_by === undefined);
  return {
    plan_id: plan.plan_id,
    committed: plan.committedBudget,
    delivered_spend: round2(standing.reduce((n, r) => n + r.spend, 0)),
    delivered_impressions: standing.reduce((n, r) => n + r.impressions, 0),
    reports: reports.map((r) => ({
      outcome_id: r.outcome_id,
      ...(r.check_id && { check_id: r.check_id }),
      reporting_period: r.reporting_period,
      spend: r.spend,
      impressions: r.impressions,
      status: r.status,
      ...(r.superseded_by && { superseded_by: r.superseded_by }),
    })),
  };
}
