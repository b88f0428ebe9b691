/**
 * Periodic reconciliation: once shortly after start (staggered, so instances
 * restarted together do not all list at once) and then every interval with
 * jitter. Runs that deferred orphans are followed up by the DeferralWatch as
 * soon as the sends they wait on resolve.
 *
 * Two job leases per agent, so that with several instances on one database:
 * `reconcile:<agent>` is held while a run is going on (one instance reconciles
 * an agent at a time; a crashed holder's lease expires), and
 * `reconcile-period:<agent>` is held for most of a period after a periodic run
 * (one periodic run per period). Follow-ups take only the first: the period
 * slot, possibly held by another (or a dead) instance, must not hold them up.
 */
import type { Logger } from 'pino';
import type { AgentRow, Store } from '../store/index.js';
import type { ChangeBus } from './change-bus.js';
import type { Clock } from './clock.js';
import type { DatabaseOutage } from './database-outage.js';
import { DeferralWatch } from './reconcile-deferrals.js';
import type { Reconciler } from './reconciler.js';

export interface ReconcileLoopOptions {
  instanceId: string;
  /** 0 turns periodic (and start-up) reconciliation off; deferred orphans are still followed up. */
  intervalMs: number;
  /** Longest random wait before the first run (capped at the interval). */
  startStaggerMs?: number;
  /** Longest a run may hold an agent's lease before another instance may take over (a crashed holder). */
  runLeaseMs?: number;
  /** Longest wait before deferrals are looked at again (default 60 s). */
  deferredCheckMs?: number;
  /** Shortest time from a run that deferred to its follow-up (default 5 s). */
  deferredMinGapMs?: number;
  /** The database's absence: a run it cut short is counted and logged once per outage, not as a failure. */
  outage?: DatabaseOutage;
}

export class ReconcileLoop {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  /** Every run of this process goes through here, one at a time (leases are per instance, not per run). */
  private chain: Promise<void> = Promise.resolve();
  private readonly deferrals: DeferralWatch;

  constructor(
    private readonly store: Store,
    private readonly reconciler: Reconciler,
    bus: ChangeBus,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: ReconcileLoopOptions,
  ) {
    this.deferrals = new DeferralWatch(store, bus, clock, log, (fn) => this.exclusive(fn), (agent) => this.runLeased(agent), {
      checkEveryMs: options.deferredCheckMs ?? 60_000,
      minGapMs: options.deferredMinGapMs ?? 5_000,
      ...(options.outage ? { outage: options.outage } : {}),
    });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    // Even with periodic runs off: a deferral is the unfinished part of a run someone asked for.
    this.deferrals.start();
    if (this.options.intervalMs <= 0) return;
    const stagger = Math.min(this.options.startStaggerMs ?? 5_000, this.options.intervalMs);
    this.schedule(Math.round(stagger * this.clock.random()));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.deferrals.stop();
    await this.chain;
  }

  /** Wired to the reconciler: a run (periodic, follow-up or asked for) just recorded a deferral. */
  deferralRecorded(): void {
    this.deferrals.deferralRecorded();
  }

  /** One pass over every seller agent whose period slot we can take (exposed for tests). */
  async runOnce(): Promise<void> {
    for (const agent of await this.store.agents.listAll('seller')) {
      if (this.stopped) return;
      await this.runLeased(agent, true);
    }
  }

  /** Reconciles the agent if we can take its leases; false when another instance holds one. */
  private async runLeased(agent: AgentRow, periodic = false): Promise<boolean> {
    const interval = this.options.intervalMs;
    const runLeaseMs = this.options.runLeaseMs ?? 10 * 60_000;
    const owner = this.options.instanceId;
    const running = `reconcile:${agent.id}`;
    const period = `reconcile-period:${agent.id}`;
    const now = this.clock.now();
    // Keep the period slot for most of the period, so other instances' timers skip this agent
    // until the next one; a little short of it, so jitter cannot make a period be missed.
    const keepPeriod = async () => {
      if (periodic) await this.store.jobLeases.extend(period, owner, this.clock.now() + Math.round(interval * 0.8));
    };
    if (periodic && !(await this.store.jobLeases.claim(period, owner, now, now + Math.max(runLeaseMs, interval)))) return false;
    if (!(await this.store.jobLeases.claim(running, owner, now, now + runLeaseMs))) {
      // Another instance is reconciling this agent right now: its run stands for this period's.
      await keepPeriod();
      return false;
    }
    try {
      await this.reconciler.reconcileAgent(agent);
    } finally {
      await this.store.jobLeases.extend(running, owner, this.clock.now());
      await keepPeriod();
    }
    return true;
  }

  private exclusive(fn: () => Promise<void>): Promise<void> {
    const next = this.chain
      .then(() => (this.stopped ? undefined : fn()))
      .catch((err) => {
        // Our own leases do not stop our next run (a claim takes back what is already ours).
        if (!this.options.outage?.failed('reconcile', err)) this.log.error({ err }, 'reconciliation failed');
      });
    this.chain = next;
    return next;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.exclusive(() => this.runOnce()).finally(() => {
        // Jitter upward, up to a tenth of the interval, so instances drift apart.
        this.schedule(this.options.intervalMs + Math.round(this.options.intervalMs * 0.1 * this.clock.random()));
      });
    }, delayMs);
    this.timer.unref();
  }
}
