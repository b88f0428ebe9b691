/**
 * What reconciliation reads and writes besides operations themselves: stored
 * reports, the agent's pending operations read in pages (never all at once), and
 * deferrals (orphans left for a re-run once the sends they wait on resolve).
 */
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db } from './db.js';
import type { ReconcileDeferralsTable, ReconcileReportsTable } from './schema.js';

export type ReconcileReportRow = Selectable<ReconcileReportsTable>;

/** Seller task statuses that are still pending (`unknown` keeps being reconciled). */
export const PENDING_TASK_STATUSES = ['submitted', 'working', 'input-required', 'auth-required', 'unknown'] as const;

export interface PendingTaskRef {
  id: string;
  task_id: string;
  stalled: number;
  updated_at: number;
}

/** Per task type, the unresolved sends (operation ids) that deferred orphans of that type wait on. */
export type WaitingOn = Record<string, string[]>;

/** Orphans a run left for later; the agent is reconciled again once every send of one type's list has resolved. */
export interface ReconcileDeferral {
  agent_id: string;
  waiting_on: WaitingOn;
  deferred_at: number;
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
   * Operations of the agent of this type, created no later than `createdBy`, that are
   * mid-call or awaiting a resend (oldest first, at most `limit`): the reply of any of
   * them may carry a task the seller already lists.
   */
  async callsInFlight(agentId: string, type: string, createdBy: number | undefined, limit: number): Promise<string[]> {
    let q = this.db.kysely
      .selectFrom('operations')
      .select('id')
      .where('agent_id', '=', agentId)
      .where('type', '=', type)
      .where('status', '=', 'calling_adcp')
      .where('task_id', 'is', null);
    if (createdBy !== undefined) q = q.where('created_at', '<=', createdBy);
    const rows = await q.orderBy('created_at').orderBy('id').limit(limit).execute();
    return rows.map((r) => r.id);
  }

  /** Which of these operations are still mid-call or awaiting a resend with no task id. */
  async stillInFlight(operationIds: string[]): Promise<Set<string>> {
    const out = new Set<string>();
    // In slices, to stay far below either dialect's limit on bound parameters.
    for (let i = 0; i < operationIds.length; i += 500) {
      const rows = await this.db.kysely
        .selectFrom('operations')
        .select('id')
        .where('id', 'in', operationIds.slice(i, i + 500))
        .where('status', '=', 'calling_adcp')
        .where('task_id', 'is', null)
        .execute();
      for (const r of rows) out.add(r.id);
    }
    return out;
  }

  /** Records (or replaces) the agent's deferral, unless a run that started later already recorded one. */
  async recordDeferral(agentId: string, waitingOn: WaitingOn, deferredAt: number): Promise<void> {
    await this.db.kysely
      .insertInto('reconcile_deferrals')
      .values({ agent_id: agentId, waiting_on: JSON.stringify(waitingOn), deferred_at: deferredAt })
      .onConflict((oc) =>
        oc
          .column('agent_id')
          .doUpdateSet((eb) => ({ waiting_on: eb.ref('excluded.waiting_on'), deferred_at: eb.ref('excluded.deferred_at') }))
          .where('reconcile_deferrals.deferred_at', '<=', deferredAt),
      )
      .execute();
  }

  /** A run that started at `ranAt` and deferred nothing settles every deferral recorded before it. */
  async clearDeferral(agentId: string, ranAt: number): Promise<void> {
    await this.db.kysely.deleteFrom('reconcile_deferrals').where('agent_id', '=', agentId).where('deferred_at', '<=', ranAt).execute();
  }

  async deferral(agentId: string): Promise<ReconcileDeferral | undefined> {
    const row = await this.db.kysely.selectFrom('reconcile_deferrals').selectAll().where('agent_id', '=', agentId).executeTakeFirst();
    return row && deferralOf(row);
  }

  /** Every agent's deferral (at most one per agent, so few), oldest first. */
  async deferrals(limit = 1000): Promise<ReconcileDeferral[]> {
    const rows = await this.db.kysely.selectFrom('reconcile_deferrals').selectAll().orderBy('deferred_at').limit(limit).execute();
    return rows.map(deferralOf);
  }
}

function deferralOf(row: Selectable<ReconcileDeferralsTable>): ReconcileDeferral {
  return { agent_id: row.agent_id, waiting_on: JSON.parse(row.waiting_on) as WaitingOn, deferred_at: row.deferred_at };
}
