/**
 * What the sandbox governance agent received and did, for tests and demos to
 * assert on (the governance counterpart of the seller's stats.ts): every
 * sync, every check with its first answer, every outcome report (replays
 * included) and what it committed, every human review and how it ended,
 * every poll.
 */
import type { DeliveryRecord } from './delivery-ledger.js';

export interface CheckStat {
  check_id: string;
  plan_id: string;
  caller: string;
  tool: string;
  /** The seller the token is for. */
  audience: string;
  /** The first answer: approved | denied | conditions | submitted (human review). */
  status: string;
  /** Later checks that passed an earlier check's governance_context share its lineage. */
  lineage_id: string;
  recheck: boolean;
  /** The seller arguments under review, as received. */
  payload: Record<string, unknown>;
  at: string;
}

export interface OutcomeStat {
  idempotency_key: string;
  plan_id: string;
  check_id?: string;
  outcome: string;
  /** What this report added to the plan's ledger (0 for a replay, failed, delivery or an already-settled check). */
  committed: number;
  status?: string;
  replayed: boolean;
  /** A delivery outcome's `delivery` as sent (reporting_period, impressions, spend, cpm). */
  delivery?: Record<string, unknown>;
  at: string;
}

export interface ReviewStat {
  task_id: string;
  check_id: string;
  /** How it ended: the configured delay ran out, or sandbox_review. */
  resolved_by: 'delay' | 'tool';
  decision: string;
  at: string;
}

export interface GovernanceStats {
  /** sync_plans calls, replays included. */
  syncCalls: number;
  /** Current version of each plan. */
  planVersions: Record<string, number>;
  checks: CheckStat[];
  outcomes: OutcomeStat[];
  /** report_plan_outcome calls per idempotency_key, replays included. */
  outcomeCallsByKey: Record<string, number>;
  /** Total budget committed per plan. */
  committedByPlan: Record<string, number>;
  /** Delivered spend per plan: each buy's periods counted once (a restated period replaces the earlier report). */
  deliveredByPlan: Record<string, number>;
  /** Every delivery report recorded (replays excluded), replaced ones marked `superseded_by`. */
  deliveries: DeliveryRecord[];
  reviews: ReviewStat[];
  pollsByTask: Record<string, number>;
  jwks: { keys: unknown[] };
}

const bump = (m: Record<string, number>, k: string): void => {
  m[k] = (m[k] ?? 0) + 1;
};

export class GovernanceStatsRecorder {
  private syncCalls = 0;
  private readonly checks: CheckStat[] = [];
  private readonly outcomes: OutcomeStat[] = [];
  private readonly outcomeCallsByKey: Record<string, number> = {};
  private readonly reviews: ReviewStat[] = [];
  private readonly pollsByTask: Record<string, number> = {};

  syncCall(): void {
    this.syncCalls++;
  }

  check(record: CheckStat): void {
    this.checks.push(structuredClone(record));
  }

  outcomeCall(key: string): void {
    bump(this.outcomeCallsByKey, key);
  }

  outcome(record: OutcomeStat): void {
    this.outcomes.push(record);
  }

  review(record: ReviewStat): void {
    this.reviews.push(record);
  }

  poll(taskId: string): void {
    bump(this.pollsByTask, taskId);
  }

  snapshot(extra: Pick<GovernanceStats, 'planVersions' | 'committedByPlan' | 'deliveredByPlan' | 'deliveries' | 'jwks'>): GovernanceStats {
    return structuredClone({
      syncCalls: this.syncCalls,
      checks: this.checks,
      outcomes: this.outcomes,
      outcomeCallsByKey: this.outcomeCallsByKey,
      reviews: this.reviews,
      pollsByTask: this.pollsByTask,
      ...extra,
    });
  }
}
