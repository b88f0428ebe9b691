/**
 * Folding an observation of a task (a call's reply, a poll, a webhook, a reconcile) into
 * the stored operation: the plan (src/engine/observation-plan.ts, amended for governed
 * operations), written on its own, in a transaction the caller holds or in a batch, and
 * what follows its commit (the change notice, metrics, a log line). OperationService
 * offers these as its own methods; this is where they are done.
 */
import type { Logger } from 'pino';
import { isTerminal, type OperationStatus } from '../domain/status.js';
import type { Lease, OperationRow, Store } from '../store/index.js';
import type { Alongside, MutateResult, MutationPlan } from '../store/operations-repo.js';
import type { Tx } from '../store/tx.js';
import type { WriteSlot } from '../store/write-batch.js';
import { releasedLease } from './call-outcomes.js';
import type { ChangeBus } from './change-bus.js';
import type { Clock } from './clock.js';
import type { GovernanceHooks } from './governance/hooks.js';
import { withInputExpiry } from './input-timers.js';
import type { Metrics } from './metrics.js';
import { recordObservationMetrics } from './observation-metrics.js';
import { planObservation, type ObservationOutcome, type TaskObservation, type TimingPolicy } from './observation-plan.js';

export interface ObservationWriterDeps {
  store: Store;
  bus: ChangeBus;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
  timing: TimingPolicy;
  /** The governance flow's hooks, once built (they are set on OperationService after it). */
  governance: () => GovernanceHooks | undefined;
}

export class ObservationWriter {
  constructor(private readonly d: ObservationWriterDeps) {}

  /**
   * Applies an observation. With a lease the write happens only if the lease still holds,
   * and the lease is released with it.
   */
  async observe(
    operationId: string,
    lease: Lease | null,
    obs: TaskObservation,
    alongside?: Alongside<ObservationOutcome>,
    /** Write through this slot of a claimed page (src/store/write-batch.ts) instead of on its own. */
    writes?: WriteSlot,
  ): Promise<MutateResult<ObservationOutcome>> {
    const { store } = this.d;
    obs = await withInputExpiry(store, operationId, obs);
    const now = this.d.clock.now();
    const plan = this.plan(lease, obs, now);
    const result = writes
      ? await writes.hold(() => store.operations.mutate(operationId, lease, plan, now, alongside))
      : await store.operations.mutate(operationId, lease, plan, now, alongside);
    await this.observed(operationId, result);
    return result;
  }

  /**
   * The write of `observe` inside a write transaction the caller holds (e.g. a webhook's
   * dedupe insert and its apply in one commit). Only database calls on `trx` are awaited.
   * Call `observed` with the result once that transaction has committed.
   */
  async observeIn(trx: Tx, operationId: string, lease: Lease | null, obs: TaskObservation, alongside?: Alongside<ObservationOutcome>): Promise<MutateResult<ObservationOutcome>> {
    obs = await withInputExpiry(this.d.store, operationId, obs, trx);
    const now = this.d.clock.now();
    return this.d.store.operations.mutateIn(trx, operationId, lease, this.plan(lease, obs, now), now, alongside);
  }

  /**
   * `observeIn` for several observations at once, on the grouped transaction's connection
   * (a batched write, SQLite: src/store/operations-batch.ts), none under a lease. Each
   * must already carry what `withInputExpiry` would add (or ask no person anything).
   */
  observeManyIn(
    trx: Tx,
    entries: Array<{ operationId: string; obs: TaskObservation }>,
    alongside?: (trx: Tx, values: Array<ObservationOutcome | undefined>) => Promise<void>,
  ): Promise<Array<MutateResult<ObservationOutcome>>> {
    const now = this.d.clock.now();
    return this.d.store.operations.mutateManyIn(
      trx,
      entries.map((e) => ({ id: e.operationId, lease: null, plan: this.plan(null, e.obs, now), now })),
      alongside,
    );
  }

  /** After an observation committed: change notice, metrics, log. */
  async observed(operationId: string, result: MutateResult<ObservationOutcome | 'task_type_conflict' | null>): Promise<void> {
    const { store, bus, metrics, log } = this.d;
    if (result.outcome === 'applied' && result.events.length > 0) bus.publish({ operation: result.row, events: result.events, notifications: result.notifications });
    if (result.outcome === 'applied') {
      // Not awaited: the durations of an ending or an answer read the history, and that read
      // is metrics only, so it stays off the caller's path (an API answer, a webhook's ack).
      recordObservationMetrics(store, metrics, result.row, result.events, result.value).catch((err) =>
        log.debug({ err, operation_id: operationId }, 'observation metrics: reading the history failed'),
      );
    }
    if (result.outcome === 'lease_lost') log.info({ operation_id: operationId }, 'lease lost before writing; discarded');
    if (result.outcome === 'applied' && result.value === 'completion_unresolved' && result.events.some((e) => e.kind === 'conflict')) {
      log.warn({ operation_id: operationId, task_id: result.row.task_id }, 'the seller said create_media_buy completed without a media_buy_id: not taken, the task stays observed');
    }
  }

  private plan(lease: Lease | null, obs: TaskObservation, now: number) {
    return (row: OperationRow): MutationPlan<ObservationOutcome> => {
      const plan = planObservation(row, obs, this.d.timing, now, this.d.clock.random);
      if (lease) plan.patch = { ...plan.patch, ...releasedLease(), ...(isTerminal(row.status as OperationStatus) ? { next_check_at: null, check_kind: null } : {}) };
      const governance = this.d.governance();
      return row.governance && governance ? governance.amendObservation(row, plan, now) : plan;
    };
  }
}
