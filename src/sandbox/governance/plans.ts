/**
 * The governance agent's plans, in memory like everything in the sandbox.
 *
 * A stored plan is the plan object exactly as `sync_plans` supplied it plus
 * the agent's bookkeeping on the same object (`version`, `status`,
 * `syncedAt`, `revisionHistory`, `committedBudget`, `committedByType`), the
 * fields the spec's plan-hash exclusion list names; `planHash()` strips them.
 * Each revision's `plan_hash` is retained in `revisionHistory`, as the spec
 * requires of governance agents.
 */
import { planHash } from './hashes.js';
import { pointerToField, type SchemaIssue } from './schema-check.js';
import { isPlainObject } from '../wire.js';

export interface PlanRevision {
  version: number;
  syncedAt: string;
  plan_hash: string;
}

export interface StoredPlan extends Record<string, unknown> {
  plan_id: string;
  budget: { total: number; currency: string; [k: string]: unknown };
  flight: { start: string; end: string };
  countries?: string[];
  approved_sellers?: string[] | null;
  human_review_required?: boolean;
  version: number;
  status: 'active';
  syncedAt: string;
  revisionHistory: PlanRevision[];
  committedBudget: number;
  committedByType: Record<string, number>;
}

/** An AdCP error about one plan (reported in the reply's root `errors[]`). */
export interface PlanError {
  code: 'INVALID_PLAN' | 'BUDGET_BELOW_COMMITTED';
  message: string;
  field: string;
  recovery: 'correctable';
  details: { plan_id: string };
}

export interface PlanSyncResult {
  plan_id: string;
  status: 'active' | 'error';
  /** The plan's version after this sync; unchanged on error (0 for a plan never synced). */
  version: number;
  errors: PlanError[];
}

export class PlanBook {
  private readonly plans = new Map<string, StoredPlan>();

  ids(): string[] {
    return [...this.plans.keys()];
  }

  get(planId: string): StoredPlan | undefined {
    return this.plans.get(planId);
  }

  remaining(plan: StoredPlan): number {
    return plan.budget.total - plan.committedBudget;
  }

  /**
   * Sync the request's plans in order. `issues` are the request's schema
   * problems, all under `/plans/<i>/` (the caller refuses the whole request
   * otherwise). A plan with any problem keeps its previous revision.
   */
  sync(plans: unknown[], issues: SchemaIssue[], now = new Date()): PlanSyncResult[] {
    const seen = new Set<string>();
    return plans.map((raw, index) => {
      const plan = raw as Record<string, unknown> & { plan_id: string };
      const planId = plan.plan_id;
      const prefix = `/plans/${index}`;
      const errors = schemaErrors(planId, issues.filter((i) => i.pointer === prefix || i.pointer.startsWith(`${prefix}/`)));
      if (seen.has(planId)) {
        errors.push(planError('INVALID_PLAN', planId, `${prefix}/plan_id`, `plan_id ${planId} appears more than once in this request`));
      }
      seen.add(planId);
      const previous = this.plans.get(planId);
      if (errors.length === 0) errors.push(...semanticProblems(plan, prefix, previous));
      if (errors.length > 0) return { plan_id: planId, status: 'error', version: previous?.version ?? 0, errors };

      const syncedAt = now.toISOString();
      const version = (previous?.version ?? 0) + 1;
      const stored = {
        ...structuredClone(plan),
        version,
        status: 'active',
        syncedAt,
        revisionHistory: previous ? [...previous.revisionHistory] : [],
        committedBudget: previous?.committedBudget ?? 0,
        committedByType: { ...previous?.committedByType },
      } as StoredPlan;
      stored.revisionHistory.push({ version, syncedAt, plan_hash: planHash(stored) });
      this.plans.set(planId, stored);
      return { plan_id: planId, status: 'active', version, errors: [] };
    });
  }

  /** Add seller-confirmed spend to the plan's ledger. */
  commit(plan: StoredPlan, amount: number, purchaseType: string): void {
    plan.committedBudget += amount;
    plan.committedByType[purchaseType] = (plan.committedByType[purchaseType] ?? 0) + amount;
  }
}

/** Rules the schema cannot express. */
function semanticProblems(plan: Record<string, unknown>, prefix: string, previous: StoredPlan | undefined): PlanError[] {
  const planId = String(plan.plan_id);
  const problems: PlanError[] = [];
  const budget = plan.budget as { total: number; currency: string };
  const flight = plan.flight as { start: string; end: string };
  if (!(Date.parse(flight.end) > Date.parse(flight.start))) {
    problems.push(planError('INVALID_PLAN', planId, `${prefix}/flight/end`, 'flight.end must be after flight.start'));
  }
  if (!(budget.total >= 0)) {
    problems.push(planError('INVALID_PLAN', planId, `${prefix}/budget/total`, 'budget.total must not be negative'));
  }
  if (!/^[A-Z]{3}$/.test(budget.currency)) {
    problems.push(planError('INVALID_PLAN', planId, `${prefix}/budget/currency`, 'budget.currency must be an ISO 4217 code such as USD'));
  }
  if (Array.isArray(plan.approved_sellers)) {
    for (const [i, url] of plan.approved_sellers.entries()) {
      if (!/^https?:\/\//.test(String(url))) {
        problems.push(planError('INVALID_PLAN', planId, `${prefix}/approved_sellers/${i}`, 'approved_sellers must be seller agent URLs'));
      }
    }
  }
  if (previous && previous.committedBudget > 0) {
    if (budget.total < previous.committedBudget) {
      problems.push(
        planError(
          'BUDGET_BELOW_COMMITTED',
          planId,
          `${prefix}/budget/total`,
          `budget.total ${budget.total} is below the ${previous.committedBudget} already committed`,
        ),
      );
    }
    if (budget.currency !== previous.budget.currency) {
      problems.push(planError('INVALID_PLAN', planId, `${prefix}/budget/currency`, 'budget.currency cannot change once budget is committed'));
    }
  }
  return problems;
}

/** One INVALID_PLAN per field, with every schema message about it. */
function schemaErrors(planId: string, issues: SchemaIssue[]): PlanError[] {
  const byPointer = new Map<string, Set<string>>();
  for (const i of issues) {
    byPointer.set(i.pointer, (byPointer.get(i.pointer) ?? new Set()).add(i.message));
  }
  return [...byPointer].map(([pointer, messages]) =>
    planError('INVALID_PLAN', planId, pointer, `${pointerToField(pointer)} ${[...messages].join('; ')}`),
  );
}

function planError(code: PlanError['code'], planId: string, pointer: string, message: string): PlanError {
  return { code, message, field: pointerToField(pointer), recovery: 'correctable', details: { plan_id: planId } };
}

/** Whether a schema issue can be reported against one plan (its pointer is under a plan that has a string plan_id). */
export function isPlanIssue(issue: SchemaIssue, plans: unknown): boolean {
  const m = /^\/plans\/(\d+)(\/|$)/.exec(issue.pointer);
  if (!m || !Array.isArray(plans)) return false;
  const plan = plans[Number(m[1])];
  return isPlainObject(plan) && typeof plan.plan_id === 'string' && !(m[2] === '' && issue.keyword === 'type');
}
