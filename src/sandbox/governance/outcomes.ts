/**
 * `report_plan_outcome`: the plan's ledger. Checks reserve nothing; budget is
 * committed only here, from what the seller confirmed:
 *
 * - `completed` commits `seller_response.committed_budget`, else the sum of
 *   `seller_response.packages[].budget` (AdCP 3.0). A check's spend is
 *   committed once: a second `completed` report for the same check (under a
 *   new key) commits nothing and answers `findings`.
 * - `failed` commits nothing.
 * - `delivery` commits nothing: it goes to the delivery ledger
 *   (delivery-ledger.ts), delivered spend beside committed, findings when
 *   delivery passes what was committed.
 * - The same `idempotency_key` again replays the first reply (`replayed:
 *   true`) and commits nothing (the ledger in core.ts does that).
 *
 * Spend above what the check approved, or past the plan's total, is still
 * committed (the seller did commit it) and reported as `findings`.
 */
import { randomUUID } from 'node:crypto';
import type { CheckDesk, CheckRecord } from './checks.js';
import type { DeliveryLedger } from './delivery-ledger.js';
import type { PlanBook, StoredPlan } from './plans.js';
import type { Finding } from './rules.js';
import { assertValidReply } from './schema-check.js';
import type { GovernanceSigner } from './signing.js';
import { errorResult, isPlainObject, ok, type ToolResult } from '../wire.js';

export interface OutcomeRecord {
  outcome_id: string;
  plan_id: string;
  check_id?: string;
  outcome: 'completed' | 'failed' | 'delivery';
  status: 'accepted' | 'findings';
  committed_budget: number;
  findings: Finding[];
  governance_context: string;
  seller_reference?: string;
  purchase_type: string;
  /** For a delivery outcome: the period and what it delivered. */
  delivery?: { reporting_period: { start: string; end: string }; spend: number; impressions: number };
  at: string;
}

export class OutcomeDesk {
  readonly records: OutcomeRecord[] = [];

  constructor(
    private readonly plans: PlanBook,
    private readonly checks: CheckDesk,
    private readonly signer: GovernanceSigner,
    private readonly now: () => number,
    private readonly deliveries: DeliveryLedger,
  ) {}

  /** Runs once per idempotency key (the caller's ledger guarantees it); args are schema-valid. */
  async report(args: Record<string, unknown>): Promise<ToolResult> {
    const planId = String(args.plan_id);
    const plan = this.plans.get(planId);
    if (!plan) return errorResult('PLAN_NOT_FOUND', `no plan ${planId}`, { field: 'plan_id' });
    const outcome = args.outcome as OutcomeRecord['outcome'];
    const checkId = typeof args.check_id === 'string' ? args.check_id : undefined;
    if (outcome !== 'delivery' && !checkId) {
      return errorResult('INVALID_REQUEST', `check_id is required for a ${outcome} outcome`, { field: 'check_id' });
    }
    if (outcome === 'completed' && !isPlainObject(args.seller_response)) {
      return errorResult('INVALID_REQUEST', 'seller_response is required for a completed outcome', { field: 'seller_response' });
    }
    if (outcome === 'failed' && !isPlainObject(args.error)) {
      return errorResult('INVALID_REQUEST', 'error is required for a failed outcome', { field: 'error' });
    }
    const check = checkId ? this.checks.records.get(checkId) : undefined;
    if (checkId && (!check || check.plan_id !== planId)) {
      return errorResult('REFERENCE_NOT_FOUND', `no check ${checkId} for plan ${planId}`, { field: 'check_id' });
    }
    const claims = await this.signer.readOwn(String(args.governance_context));
    if (!claims || claims.sub !== planId || (checkId !== undefined && claims.check_id !== checkId)) {
      return errorResult('INVALID_REQUEST', 'governance_context is not the token this agent issued for that check', {
        field: 'governance_context',
      });
    }

    const purchaseType = typeof args.purchase_type === 'string' ? args.purchase_type : 'media_buy';
    if (outcome === 'delivery') {
      const boughtBy = typeof claims.check_id === 'string' ? this.checks.records.get(claims.check_id) : undefined;
      return this.reportDelivery(args, plan, boughtBy, purchaseType);
    }
    const findings: Finding[] = [];
    let committed = 0;
    let sellerReference: string | undefined;
    if (outcome === 'completed') {
      const response = args.seller_response as Record<string, unknown>;
      if (typeof response.seller_reference === 'string') sellerReference = response.seller_reference;
      const amount = confirmedSpend(response);
      if (check!.settled_by) {
        findings.push({
          category_id: 'budget_authority',
          severity: 'warning',
          explanation: `Check ${checkId} was already settled by outcome ${check!.settled_by}; nothing more is committed.`,
        });
      } else {
        if (check!.status !== 'approved') {
          findings.push({ category_id: 'budget_authority', severity: 'critical', explanation: `Check ${checkId} was ${check!.status}, not approved, yet spend was committed.` });
        } else if (check!.commitment && amount > check!.commitment.amount) {
          findings.push({
            category_id: 'budget_authority',
            severity: 'warning',
            explanation: `The seller committed ${amount}, more than the ${check!.commitment.amount} the check approved.`,
          });
        }
        committed = amount;
        this.plans.commit(plan, amount, purchaseType);
        if (plan.committedBudget > plan.budget.total) {
          findings.push({
            category_id: 'budget_authority',
            severity: 'critical',
            explanation: `The plan is overspent: ${plan.committedBudget} committed of ${plan.budget.total}.`,
          });
        }
      }
    }
    const record: OutcomeRecord = {
      outcome_id: `out_${randomUUID()}`,
      plan_id: planId,
      ...(checkId && { check_id: checkId }),
      outcome,
      status: findings.length > 0 ? 'findings' : 'accepted',
      committed_budget: committed,
      findings,
      governance_context: String(args.governance_context),
      ...(sellerReference && { seller_reference: sellerReference }),
      purchase_type: purchaseType,
      at: new Date(this.now()).toISOString(),
    };
    if (outcome === 'completed' && check && !check.settled_by) check.settled_by = record.outcome_id;
    this.records.push(record);
    const body: Record<string, unknown> = {
      outcome_id: record.outcome_id,
      status: record.status,
      committed_budget: committed,
      plan_summary: { total_committed: plan.committedBudget, budget_remaining: this.plans.remaining(plan) },
      ...(findings.length > 0 && { findings }),
    };
    assertValidReply('report_plan_outcome', body);
    return ok(body);
  }

  /** A delivery outcome: recorded in the delivery ledger against what the buy (its check) and the plan committed. */
  private reportDelivery(args: Record<string, unknown>, plan: StoredPlan, check: CheckRecord | undefined, purchaseType: string): ToolResult {
    const d = args.delivery;
    if (!isPlainObject(d)) return errorResult('INVALID_REQUEST', 'delivery is required for a delivery outcome', { field: 'delivery' });
    const period = d.reporting_period;
    if (!isPlainObject(period) || typeof period.start !== 'string' || typeof period.end !== 'string' || !(Date.parse(period.end) >= Date.parse(period.start))) {
      return errorResult('INVALID_REQUEST', 'delivery.reporting_period {start, end} is required (this agent keys its ledger on it), end not before start', {
        field: 'delivery.reporting_period',
      });
    }
    if (typeof d.spend !== 'number' || !(d.spend >= 0)) return errorResult('INVALID_REQUEST', 'delivery.spend is required and must not be negative', { field: 'delivery.spend' });
    const settled = check?.settled_by ? this.records.find((r) => r.outcome_id === check.settled_by) : undefined;
    const at = new Date(this.now()).toISOString();
    const impressions = typeof d.impressions === 'number' ? d.impressions : 0;
    const reportingPeriod = { start: period.start, end: period.end };
    const entry = this.deliveries.record(
      {
        outcome_id: `out_${randomUUID()}`,
        plan_id: plan.plan_id,
        ...(check && { check_id: check.check_id }),
        governance_context: String(args.governance_context),
        idempotency_key: String(args.idempotency_key),
        reporting_period: reportingPeriod,
        impressions,
        spend: d.spend,
        ...(typeof d.cpm === 'number' && { cpm: d.cpm }),
        at,
      },
      { plan: plan.committedBudget, buy: settled?.committed_budget },
    );
    this.records.push({
      outcome_id: entry.outcome_id,
      plan_id: plan.plan_id,
      outcome: 'delivery',
      status: entry.status,
      committed_budget: 0,
      findings: entry.findings,
      governance_context: entry.governance_context,
      purchase_type: purchaseType,
      delivery: { reporting_period: reportingPeriod, spend: d.spend, impressions },
      at,
    });
    const body: Record<string, unknown> = {
      outcome_id: entry.outcome_id,
      status: entry.status,
      plan_summary: { total_committed: plan.committedBudget, budget_remaining: this.plans.remaining(plan) },
      ...(entry.findings.length > 0 && { findings: entry.findings }),
    };
    assertValidReply('report_plan_outcome', body);
    return ok(body);
  }
}

function confirmedSpend(response: Record<string, unknown>): number {
  if (typeof response.committed_budget === 'number') return response.committed_budget;
  const packages = Array.isArray(response.packages) ? response.packages : [];
  return packages.reduce((sum: number, p) => sum + (isPlainObject(p) && typeof p.budget === 'number' ? p.budget : 0), 0);
}
