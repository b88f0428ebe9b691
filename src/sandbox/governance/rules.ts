/**
 * The sandbox governance agent's rules for an intent check: pure functions of
 * the plan, what it has committed, and the seller arguments under review.
 * Nothing else decides (no hidden switches): to get a denial, ask for one.
 *
 *   budget_authority   requested spend > plan total − committed          → denied
 *                      a total_budget currency other than the plan's     → denied
 *   geo_compliance     a targeted country outside plan.countries         → denied
 *   seller_compliance  the target seller not in plan.approved_sellers    → denied
 *   flight_compliance  the plan's flight is over / the buy starts after it → denied
 *                      end_time after flight.end, start_time before
 *                      flight.start (or "asap" before it)                → conditions
 *
 * Denials win over conditions; every finding found is reported.
 */
import type { StoredPlan } from './plans.js';
import { isPlainObject } from '../wire.js';

export type Severity = 'info' | 'warning' | 'critical';

export interface Finding {
  category_id: string;
  severity: Severity;
  explanation: string;
  details?: Record<string, unknown>;
}

export interface Condition {
  /** Payload-relative dot path (3.0). */
  field: string;
  required_value?: unknown;
  reason: string;
}

export const CATEGORIES_EVALUATED = ['budget_authority', 'geo_compliance', 'seller_compliance', 'flight_compliance'];

export type Evaluation =
  | { decision: 'approved'; commitment: { amount: number; currency: string } }
  | { decision: 'denied'; findings: Finding[] }
  | { decision: 'conditions'; conditions: Condition[]; findings: Finding[] };

export interface IntentUnderReview {
  payload: Record<string, unknown>;
  /** The seller the token would be for (its agent URL). */
  audience: string;
  /** Epoch ms. */
  now: number;
}

const packagesOf = (payload: Record<string, unknown>): Array<Record<string, unknown>> =>
  [payload.packages, payload.new_packages].flatMap((list) => (Array.isArray(list) ? list.filter(isPlainObject) : []));

const amountOf = (budget: unknown): number => {
  if (typeof budget === 'number' && Number.isFinite(budget)) return budget;
  if (isPlainObject(budget) && typeof budget.amount === 'number' && Number.isFinite(budget.amount)) return budget.amount;
  return 0;
};

/** What the payload would commit: the packages' budgets, else `total_budget.amount` (a proposal buy). */
export function requestedSpend(payload: Record<string, unknown>): number {
  const packages = packagesOf(payload);
  if (packages.length > 0) return packages.reduce((sum, p) => sum + amountOf(p.budget), 0);
  return amountOf(payload.total_budget);
}

function targetedCountries(payload: Record<string, unknown>): string[] {
  const found = new Set<string>();
  for (const p of packagesOf(payload)) {
    const overlay = p.targeting_overlay;
    if (isPlainObject(overlay) && Array.isArray(overlay.geo_countries)) {
      for (const c of overlay.geo_countries) found.add(String(c));
    }
  }
  return [...found];
}

export function evaluateIntent(plan: StoredPlan, intent: IntentUnderReview): Evaluation {
  const { payload } = intent;
  const findings: Finding[] = [];
  const conditions: Condition[] = [];
  const deny = (category_id: string, explanation: string, details?: Record<string, unknown>): void => {
    findings.push({ category_id, severity: 'critical', explanation, ...(details && { details }) });
  };

  const spend = requestedSpend(payload);
  const remaining = plan.budget.total - plan.committedBudget;
  const currency = plan.budget.currency;
  if (spend > remaining) {
    deny('budget_authority', `Requested ${spend} ${currency} exceeds the ${remaining} ${currency} left of the plan's ${plan.budget.total} ${currency} (${plan.committedBudget} committed).`, {
      requested: spend,
      remaining,
      committed: plan.committedBudget,
      total: plan.budget.total,
    });
  }
  const totalBudget = payload.total_budget;
  if (isPlainObject(totalBudget) && typeof totalBudget.currency === 'string' && totalBudget.currency !== currency) {
    deny('budget_authority', `total_budget is in ${totalBudget.currency}; the plan's budget is in ${currency}.`);
  }

  if (Array.isArray(plan.countries)) {
    const outside = targetedCountries(payload).filter((c) => !plan.countries!.includes(c));
    if (outside.length > 0) {
      deny('geo_compliance', `Targets ${outside.join(', ')}, outside the plan's countries (${plan.countries.join(', ')}).`, { countries: outside });
    }
  }

  if (Array.isArray(plan.approved_sellers) && !plan.approved_sellers.includes(intent.audience)) {
    deny('seller_compliance', `Seller ${intent.audience} is not in the plan's approved sellers.`, { seller: intent.audience });
  }

  flightRules(plan, intent, deny, conditions);

  if (findings.length > 0) return { decision: 'denied', findings };
  if (conditions.length > 0) {
    const warnings: Finding[] = conditions.map((c) => ({ category_id: 'flight_compliance', severity: 'warning', explanation: c.reason }));
    return { decision: 'conditions', conditions, findings: warnings };
  }
  return { decision: 'approved', commitment: { amount: spend, currency } };
}

function flightRules(
  plan: StoredPlan,
  intent: IntentUnderReview,
  deny: (category: string, explanation: string) => void,
  conditions: Condition[],
): void {
  const { payload, now } = intent;
  const flightStart = Date.parse(plan.flight.start);
  const flightEnd = Date.parse(plan.flight.end);
  if (now >= flightEnd) {
    deny('flight_compliance', `The plan's flight ended at ${plan.flight.end}.`);
    return;
  }
  const start = payload.start_time === 'asap' ? now : typeof payload.start_time === 'string' ? Date.parse(payload.start_time) : NaN;
  if (!Number.isNaN(start)) {
    if (start >= flightEnd) deny('flight_compliance', `start_time is after the plan's flight end (${plan.flight.end}).`);
    else if (start < flightStart) {
      conditions.push({
        field: 'start_time',
        required_value: plan.flight.start,
        reason: `The plan's flight starts at ${plan.flight.start}; the buy may not start earlier.`,
      });
    }
  }
  const ends: Array<[string, unknown]> = [['end_time', payload.end_time]];
  if (Array.isArray(payload.packages)) {
    payload.packages.forEach((p, i) => {
      if (isPlainObject(p) && p.end_time !== undefined) ends.push([`packages[${i}].end_time`, p.end_time]);
    });
  }
  for (const [field, value] of ends) {
    const end = typeof value === 'string' ? Date.parse(value) : NaN;
    if (!Number.isNaN(end) && end > flightEnd) {
      conditions.push({ field, required_value: plan.flight.end, reason: `The plan's flight ends at ${plan.flight.end}; the buy may not run past it.` });
    }
  }
}
