/**
 * The governance agent's record of delivery: what buyers reported with
 * `report_plan_outcome` `outcome: "delivery"`, beside what each plan (and
 * each governed buy, by its check) committed.
 *
 * A report names its buy by its `governance_context` (the approval token of
 * the check that bought it) and its period by `delivery.reporting_period`.
 * A later report for the same buy and period replaces the earlier one (an
 * adjusted or re-measured period, sent under a new key), so delivered spend
 * counts each period once; the same key again is a replay and never reaches
 * this ledger (core.ts). Delivery above what was committed is still recorded
 * and answered with findings.
 */
import type { Finding } from './rules.js';

export interface DeliveryRecord {
  outcome_id: string;
  plan_id: string;
  /** The check the reporting buy was approved by (from its governance_context). */
  check_id?: string;
  governance_context: string;
  idempotency_key: string;
  reporting_period: { start: string; end: string };
  impressions: number;
  spend: number;
  cpm?: number;
  status: 'accepted' | 'findings';
  findings: Finding[];
  /** The earlier report of the same buy and period this one replaces. */
  replaces?: string;
  /** The later report that replaced this one. */
  superseded_by?: string;
  at: string;
}

export interface DeliveryInput {
  outcome_id: string;
  plan_id: string;
  check_id?: string;
  governance_context: string;
  idempotency_key: string;
  reporting_period: { start: string; end: string };
  impressions: number;
  spend: number;
  cpm?: number;
  at: string;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

export class DeliveryLedger {
  readonly records: DeliveryRecord[] = [];

  /** Reports still standing (not replaced by a later one for their period). */
  current(filter: (r: DeliveryRecord) => boolean = () => true): DeliveryRecord[] {
    return this.records.filter((r) => r.superseded_by === undefined && filter(r));
  }

  deliveredSpend(planId: string): number {
    return round2(this.current((r) => r.plan_id === planId).reduce((n, r) => n + r.spend, 0));
  }

  deliveredImpressions(planId: string): number {
    return this.current((r) => r.plan_id === planId).reduce((n, r) => n + r.impressions, 0);
  }

  /**
   * Records a delivery report, replacing an earlier one for the same buy and
   * period. `committed` is what the plan and the buy have committed; spend
   * delivered past either is a finding.
   */
  record(input: DeliveryInput, committed: { plan: number; buy: number | undefined }): DeliveryRecord {
    const sameBuy = (r: DeliveryRecord): boolean => (input.check_id !== undefined ? r.check_id === input.check_id : r.governance_context === input.governance_context);
    const earlier = this.current(
      (r) => sameBuy(r) && r.reporting_period.start === input.reporting_period.start && r.reporting_period.end === input.reporting_period.end,
    )[0];
    const record: DeliveryRecord = { ...input, status: 'accepted', findings: [], ...(earlier && { replaces: earlier.outcome_id }) };
    if (earlier) earlier.superseded_by = record.outcome_id;
    this.records.push(record);

    const forBuy = round2(this.current(sameBuy).reduce((n, r) => n + r.spend, 0));
    if (committed.buy === undefined || committed.buy === 0) {
      record.findings.push({
        category_id: 'budget_authority',
        severity: 'warning',
        explanation: 'Delivery was reported for a buy with no committed spend (no completed outcome for its check).',
      });
    } else if (forBuy > committed.buy) {
      record.findings.push({
        category_id: 'budget_authority',
        severity: 'warning',
        explanation: `Delivered spend ${forBuy} exceeds the ${committed.buy} committed for this buy.`,
        details: { delivered: forBuy, committed: committed.buy },
      });
    }
    const forPlan = this.deliveredSpend(input.plan_id);
    if (forPlan > committed.plan) {
      record.findings.push({
        category_id: 'budget_authority',
        severity: 'critical',
        explanation: `The plan has delivered ${forPlan}, more than the ${committed.plan} committed.`,
        details: { delivered: forPlan, committed: committed.plan },
      });
    }
    record.status = record.findings.length > 0 ? 'findings' : 'accepted';
    return record;
  }
}
