/**
 * Reconciliation with a seller (AdCP spec, polling, timeouts, retries, reconciliation, steps 4–5): list every page of
 * the seller's pending tasks; adopt those we do not know; poll at once our
 * pending operations the seller no longer lists (they have most likely ended).
 * Every run leaves a stored report, logged at info. Orphans it must leave alone
 * for now (see mayBeInFlightReply) are recorded as a deferral, with the sends
 * they wait on, so the reconcile loop runs again once those resolve.
 */
import type { Logger } from 'pino';
import { AdcpTransportError, type AdcpClient, type ListedTask } from '../adcp/types.js';
import { isTerminal, NEEDS_INPUT_STATUSES, type AdcpTaskStatus } from '../domain/status.js';
import { ANSWER_CHECK } from './input-requests.js';
import type { AgentRow, Store } from '../store/index.js';
import { isUniqueViolation } from '../store/db.js';
import { PENDING_TASK_STATUSES, type WaitingOn } from '../store/reconcile-repo.js';
import type { SecretBox } from '../store/secret-box.js';
import { adoptedOperation } from './adopt.js';
import { endpointFor } from './agent-endpoints.js';
import type { ChangeBus } from './change-bus.js';
import type { Clock } from './clock.js';
import { EngineError } from './errors.js';
import type { Metrics } from './metrics.js';
import type { TimingPolicy } from './observation-plan.js';

export interface ReconcileReport {
  agent_id: string;
  /** Seller task ids we had no operation for, now adopted. */
  orphaned_on_server: string[];
  /** Seller task ids of our pending operations that the seller no longer lists as pending. */
  missing_from_server: string[];
  /** Our operation ids of those tasks, index for index with `missing_from_server`. */
  missing_from_server_operations: string[];
  total_pending_server: number;
  total_pending_local: number;
  started_at: string;
  finished_at: string;
  /** Orphans left for a later run because a call of that type is unresolved (its reply may bind them). */
  deferred_orphans: string[];
}

export interface ReconcileFailure {
  agent_id: string;
  error: { code: string; message: string };
  started_at: string;
  finished_at: string;
}

export type ReconcileOutcome = ReconcileReport | ReconcileFailure;

export interface ReconcilerOptions {
  timing: TimingPolicy;
  /** max_results asked of the seller per page (1–100). */
  pageSize: number;
  /** Our own operations read per page when looking for the missing ones. */
  localPageSize: number;
  callTimeoutMs: number;
  /** Allowed difference between the seller's clock and ours when matching tasks to calls in flight. */
  clockSlackMs: number;
  /** A stalled operation the engine touched more recently than this is left to the engine's slower cadence. */
  stalledQuietMs: number;
  /** Safety stop for a seller whose cursor never ends. */
  maxPages: number;
  /** Most unresolved sends recorded per task type for a deferral (the oldest; a re-run finds any others). */
  maxWaitedOnPerType: number;
}

export class Reconciler {
  /** Sellers already reported as offering no task list (said once per process). */
  private readonly toldUnsupported = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly adcp: AdcpClient,
    private readonly secrets: SecretBox,
    private readonly bus: ChangeBus,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
    private readonly log: Logger,
    readonly options: ReconcilerOptions,
    /** Called when timers were set due now (wakes the scheduler instead of waiting for its tick). */
    private readonly onDue: () => void = () => undefined,
    /** Called after a run recorded a deferral (the reconcile loop starts watching its sends). */
    private readonly onDeferred: (agentId: string) => void = () => undefined,
  ) {}

  /** Every seller agent (of one tenant, or of all); one agent failing does not stop the others. */
  async reconcileAll(tenantId?: string): Promise<ReconcileOutcome[]> {
    const agents = tenantId ? await this.store.agents.list(tenantId) : await this.store.agents.listAll('seller');
    const out: ReconcileOutcome[] = [];
    for (const agent of agents) {
      if (agent.role !== 'seller') continue;
      out.push(await this.reconcileAgent(agent));
    }
    return out;
  }

  async reconcileAgent(agent: AgentRow): Promise<ReconcileOutcome> {
    const startedAt = this.clock.now();
    const reportId = await this.store.reconcile.start(agent.tenant_id, agent.id, startedAt);
    try {
      const { report, waitingOn } = await this.run(agent, startedAt);
      // A failed run (below) leaves any earlier deferral as it was: nothing it waits on was settled.
      if (report.deferred_orphans.length > 0) await this.store.reconcile.recordDeferral(agent.id, waitingOn, startedAt);
      else await this.store.reconcile.clearDeferral(agent.id, startedAt);
      await this.store.reconcile.finish(reportId, this.clock.now(), { report });
      if (report.deferred_orphans.length > 0) this.onDeferred(agent.id);
      this.log.info({ reconcile: report }, 'reconciled with seller');
      return report;
    } catch (err) {
      const finishedAt = this.clock.now();
      const error = errorOf(err);
      await this.store.reconcile.finish(reportId, finishedAt, { error });
      // A seller that offers no tool to list its tasks is never asked; that is said once, not every interval.
      const unsupported = err instanceof AdcpTransportError && err.kind === 'unsupported';
      if (!unsupported) this.log.warn({ agent_id: agent.id, error }, 'reconciliation with seller failed');
      else if (!this.toldUnsupported.has(agent.id)) {
        this.toldUnsupported.add(agent.id);
        this.log.warn({ agent_id: agent.id, error }, 'the seller offers no tool to list its tasks: not reconciled (its operations are still polled or wait for webhooks)');
      }
      return { agent_id: agent.id, error, started_at: iso(startedAt), finished_at: iso(finishedAt) };
    }
  }

  private async run(agent: AgentRow, startedAt: number): Promise<{ report: ReconcileReport; waitingOn: WaitingOn }> {
    const serverPending = new Set<string>();
    const orphaned: string[] = [];
    const deferred: string[] = [];
    const waitingOn: WaitingOn = {};
    await this.listAll(agent, async (tasks) => {
      const pending = tasks.filter((t) => !isTerminal(t.status) && !serverPending.has(t.taskId));
      for (const t of pending) serverPending.add(t.taskId);
      const known = await this.store.reconcile.knownTaskIds(
        agent.id,
        pending.map((t) => t.taskId),
      );
      for (const task of pending) {
        if (known.has(task.taskId)) continue;
        const inFlight = await this.mayBeInFlightReply(agent, task);
        if (inFlight.length === 0) {
          if (await this.adopt(agent, task)) orphaned.push(task.taskId);
          continue;
        }
        deferred.push(task.taskId);
        // Keep the shortest list per type: the calls that may have created the earliest deferred
        // task of that type. Once they have all resolved, that task at least can be settled.
        const kept = waitingOn[task.taskType];
        if (!kept || inFlight.length < kept.length) waitingOn[task.taskType] = inFlight;
      }
    });
    // Only a complete listing can tell what is missing: listAll throws before we get here otherwise.
    const { missing, totalLocal } = await this.pollMissing(agent, serverPending, startedAt);
    if (orphaned.length > 0 || missing.length > 0) this.onDue();
    const report: ReconcileReport = {
      agent_id: agent.id,
      orphaned_on_server: orphaned,
      missing_from_server: missing.map((m) => m.taskId),
      missing_from_server_operations: missing.map((m) => m.operationId),
      total_pending_server: serverPending.size,
      total_pending_local: totalLocal,
      started_at: iso(startedAt),
      finished_at: iso(this.clock.now()),
      deferred_orphans: deferred,
    };
    return { report, waitingOn };
  }

  /** Every page of the seller's pending tasks, handed to `onPage` as it arrives. */
  private async listAll(agent: AgentRow, onPage: (tasks: ListedTask[]) => Promise<void>): Promise<void> {
    const endpoint = endpointFor(agent, this.secrets);
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= this.options.maxPages) {
        throw new EngineError('listing_too_long', `the seller's task list did not end after ${page} pages`, 502);
      }
      const res = await this.adcp.listTasks(
        endpoint,
        { statuses: [...PENDING_TASK_STATUSES] as AdcpTaskStatus[], cursor, maxResults: this.options.pageSize },
        { timeoutMs: this.options.callTimeoutMs },
      );
      await onPage(res.tasks);
      if (!res.hasMore || !res.cursor) return;
      // A cursor seen before would loop forever.
      if (seenCursors.has(res.cursor)) throw new EngineError('listing_cursor_loop', 'the seller repeated a pagination cursor', 502);
      seenCursors.add(res.cursor);
      cursor = res.cursor;
    }
  }

  /**
   * A listed task may be the one an operation of ours created whose reply we have not
   * read yet (mid-call, or a lost reply awaiting its resend with the same key). Adopting
   * it would take the task id that reply is about to bind, so it waits while any such
   * call of that type, old enough to have created it, is unresolved. Seller and local
   * clocks differ, hence the slack; without a seller timestamp any such call counts.
   * Returns those calls' operation ids (empty: the task is nobody's and may be adopted).
   */
  private async mayBeInFlightReply(agent: AgentRow, task: ListedTask): Promise<string[]> {
    const created = task.createdAt ? Date.parse(task.createdAt) : NaN;
    const createdBy = Number.isNaN(created) ? undefined : created + this.options.clockSlackMs;
    return this.store.reconcile.callsInFlight(agent.id, task.taskType, createdBy, this.options.maxWaitedOnPerType);
  }

  /** True when adopted; false when someone bound or adopted the task meanwhile. */
  private async adopt(agent: AgentRow, task: ListedTask): Promise<boolean> {
    const inputExpiry = NEEDS_INPUT_STATUSES.has(task.status) ? (await this.store.settings.get(agent.tenant_id)).settings.input_expiry : undefined;
    const { row, event } = adoptedOperation(agent, task, this.options.timing, this.clock.now(), this.clock.random, inputExpiry);
    try {
      const written = await this.store.operations.insert(row, event);
      this.bus.publish({ operation: row, ...written });
      this.metrics.transition(row.type, 'none', row.status, 'reconcile');
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }

  /**
   * Pages through our pending operations of this agent (never all at once) and sets
   * the timer of each one the seller no longer lists due now, so it is polled at once.
   */
  private async pollMissing(
    agent: AgentRow,
    serverPending: Set<string>,
    startedAt: number,
  ): Promise<{ missing: Array<{ taskId: string; operationId: string }>; totalLocal: number }> {
    const missing: Array<{ taskId: string; operationId: string }> = [];
    let totalLocal = 0;
    let afterId: string | undefined;
    for (;;) {
      const page = await this.store.reconcile.pendingWithTaskPage(agent.id, startedAt, afterId, this.options.localPageSize);
      if (page.length === 0) break;
      afterId = page[page.length - 1]!.id;
      totalLocal += page.length;
      for (const op of page) {
        if (serverPending.has(op.task_id)) continue;
        missing.push({ taskId: op.task_id, operationId: op.id });
        await this.pollNow(op.id, op.task_id);
      }
      if (page.length < this.options.localPageSize) break;
    }
    return { missing, totalLocal };
  }

  private async pollNow(operationId: string, taskId: string): Promise<void> {
    const now = this.clock.now();
    const result = await this.store.operations.mutate(
      operationId,
      null,
      (row) => {
        const stillPending = row.task_id === taskId && (PENDING_TASK_STATUSES as readonly string[]).includes(row.status);
        // Leased: a worker is on it right now, and its write will set the next timer.
        const leased = row.lease_until !== null && row.lease_until > now;
        // Stalled operations are checked at the engine's slower cadence; do not speed them back up
        // unless the engine has left them alone for a long while.
        const engineIsOnIt = row.stalled === 1 && now - row.updated_at < this.options.stalledQuietMs;
        const alreadyDue = row.next_check_at !== null && row.next_check_at <= now;
        // A person's answer is on its way: its sender looks at the task before any resend.
        const answering = row.check_kind === ANSWER_CHECK;
        if (!stillPending || leased || engineIsOnIt || alreadyDue || answering) return { value: null };
        return {
          patch: { next_check_at: now, check_kind: 'poll' },
          events: [{ source: 'reconcile', kind: 'missing_from_server', detail: { task_id: taskId } }],
          value: null,
        };
      },
      now,
    );
    if (result.outcome === 'applied') this.bus.publish({ operation: result.row, events: result.events, notifications: result.notifications });
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function errorOf(err: unknown): { code: string; message: string } {
  if (err instanceof EngineError) return { code: err.code, message: err.message };
  const e = err as { name?: string; message?: string; adcpError?: { code?: string; message?: string } };
  if (err instanceof AdcpTransportError && err.kind === 'unsupported') return { code: 'NOT_SUPPORTED', message: err.message };
  if (e?.adcpError?.code) return { code: e.adcpError.code, message: e.adcpError.message ?? e.message ?? '' };
  return { code: e?.name === 'AdcpTransportError' ? 'SELLER_UNREACHABLE' : 'RECONCILE_FAILED', message: e?.message ?? String(err) };
}
