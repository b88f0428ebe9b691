/**
 * What reconciliation reads and writes besides operations themselves: stored
 * reports, and the agent's pending operations read in pages (never all at once).
 */
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db } from './db.js';
import type { ReconcileReportsTable } from './schema.js';

export type ReconcileReportRow = Selectable<ReconcileReportsTable>;

/** Seller task statuses that are still pending (`unknown` keeps being reconciled). */
export const PENDING_TASK_STATUSES = ['submitted', 'working', 'input-required', 'auth-required', 'unknown'] as const;

export interface PendingTaskRef {
  id: string;
  task_id: string;
  stalled: number;
  updated_at: number;
}

export class ReconcileRepo {
  constructor(private readonly db: Db) {}

  /** Records the start of a run, so a run that dies half-way still leaves a trace. */
  async start(tenantId: string, agentId: string, startedAt: number): Promise<string> {
    const id = randomUUID();
    await this.db.kysely
      .insertInto('reconcile_reports')
      .values({ id, tenant_id: tenantId, agent_id: agentId, started_at: startedAt, finished_at: null, report: null, error: null })
      .execute();
    return id;
  }

  async finish(id: string, finishedAt: number, outcome: { report?: unknown; error?: unknown }): Promise<void> {
    await this.db.kysely
      .updateTable('reconcile_reports')
      .set({
        finished_at: finishedAt,
        report: outcome.report === undefined ? null : JSON.stringify(outcome.report),
        error: outcome.error === undefined ? null : JSON.stringify(outcome.error),
      })
      .where('id', '=', id)
      .execute();
  }

  async get(id: string): Promise<ReconcileReportRow | undefined> {
    return this.db.kysely.selectFrom('reconcile_reports').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Newest first. */
  async listForAgent(agentId: string, limit = 20): Promise<ReconcileReportRow[]> {
    return this.db.kysely
      .selectFrom('reconcile_reports')
      .selectAll()
      .where('agent_id', '=', agentId)
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  /** Which of these seller task ids already belong to one of our operations. */
  async knownTaskIds(agentId: string, taskIds: string[]): Promise<Set<string>> {
    if (taskIds.length === 0) return new Set();
    const rows = await this.db.kysely
      .selectFrom('operations')
      .select('task_id')
      .where('agent_id', '=', agentId)
      .where('task_id', 'in', taskIds)
      .execute();
    return new Set(rows.map((r) => r.task_id as string));
  }

  /**
   * One page (keyset on id) of the agent's pending operations that have a seller task,
   * created before `createdBefore` (operations newer than the listing cannot be judged by it).
   */
  async pendingWithTaskPage(agentId: string, createdBefore: number, afterId: string | undefined, limit: number): Promise<PendingTaskRef[]> {
    let q = this.db.kysely
      .selectFrom('operations')
      .select(['id', 'task_id', 'stalled', 'updated_at'])
      .where('agent_id', '=', agentId)
      .where('task_id', 'is not', null)
      .where('status', 'in', [...PENDING_TASK_STATUSES])
      .where('created_at', '<', createdBefore);
    if (afterId !== undefined) q = q.where('id', '>', afterId);
    const rows = await q.orderBy('id').limit(limit).execute();
    return rows as PendingTaskRef[];
  }

  /**
   * Whether some operation of the agent of this type, created no later than `createdBy`,
   * is mid-call or awaiting a resend: its reply may carry a task the seller already lists.
   */
  async hasCallInFlight(agentId: string, type: string, createdBy?: number): Promise<boolean> {
    let q = this.db.kysely
      .selectFrom('operations')
      .select('id')
      .where('agent_id', '=', agentId)
      .where('type', '=', type)
      .where('status', '=', 'calling_adcp')
      .where('task_id', 'is', null);
    if (createdBy !== undefined) q = q.where('created_at', '<=', createdBy);
    return (await q.limit(1).executeTakeFirst()) !== undefined;
  }
}
