/**
 * Periodic reconciliation: once shortly after start (staggered, so instances
 * restarted together do not all list at once) and then every interval with
 * jitter. Each agent is guarded by a job lease, so with several instances on
 * one database one of them reconciles a given agent per period.
 */
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { Clock } from './clock.js';
import type { Reconciler } from './reconciler.js';

export interface ReconcileLoopOptions {
  instanceId: string;
  /** 0 turns periodic (and start-up) reconciliation off. */
  intervalMs: number;
  /** Longest random wait before the first run (capped at the interval). */
  startStaggerMs?: number;
  /** Longest a run may hold an agent's lease before another instance may take over (a crashed holder). */
  runLeaseMs?: number;
}

export class ReconcileLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(
    private readonly store: Store,
    private readonly reconciler: Reconciler,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: ReconcileLoopOptions,
  ) {}

  start(): void {
    if (!this.stopped || this.options.intervalMs <= 0) return;
    this.stopped = false;
    const stagger = Math.min(this.options.startStaggerMs ?? 5_000, this.options.intervalMs);
    this.schedule(Math.round(stagger * this.clock.random()));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass over every seller agent whose lease we can take (exposed for tests). */
  async runOnce(): Promise<void> {
    const interval = this.options.intervalMs;
    const runLeaseMs = this.options.runLeaseMs ?? 10 * 60_000;
    for (const agent of await this.store.agents.listAll('seller')) {
      if (this.stopped) return;
      const name = `reconcile:${agent.id}`;
      const now = this.clock.now();
      if (!(await this.store.jobLeases.claim(name, this.options.instanceId, now, now + Math.max(runLeaseMs, interval)))) continue;
      try {
        await this.reconciler.reconcileAgent(agent);
      } finally {
        // Keep the slot for most of the period, so other instances' timers skip this agent
        // until the next one; a little short of it, so jitter cannot make a period be missed.
        await this.store.jobLeases.extend(name, this.options.instanceId, this.clock.now() + Math.round(interval * 0.8));
      }
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .catch((err) => this.log.error({ err }, 'periodic reconciliation failed'))
        .finally(() => {
          this.running = undefined;
          // Jitter upward, up to a tenth of the interval, so instances drift apart.
          this.schedule(this.options.intervalMs + Math.round(this.options.intervalMs * 0.1 * this.clock.random()));
        });
    }, delayMs);
    this.timer.unref();
  }
}
