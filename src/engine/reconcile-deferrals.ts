/**
 * Follow-up runs for deferred orphans. A reconcile run that left listed tasks
 * alone because sends of ours to that agent were unresolved (their replies may
 * bind those tasks) recorded a deferral naming those sends. This watch runs the
 * agent again as soon as, for some task type, every send it waits on has
 * resolved: at once when it sees one resolve on this instance's change bus, and
 * otherwise (resolved on another instance, or while we were down) at its next
 * look at the table, never more than `checkEveryMs` away. A look is one or two
 * small queries; the seller is called only once something waited on resolved.
 */
import type { Logger } from 'pino';
import type { AgentRow, Store } from '../store/index.js';
import type { ChangeBus, OperationChange } from './change-bus.js';
import type { Clock } from './clock.js';
import type { DatabaseOutage } from './database-outage.js';

export interface DeferralWatchOptions {
  /** Longest time between looks at the deferrals table (the fallback for resolutions we do not see). */
  checkEveryMs: number;
  /**
   * Shortest time from the start of a run that deferred to its follow-up, so sends that keep
   * resolving while new ones start cannot have us list the seller back to back.
   */
  minGapMs: number;
  /** The database's absence: looked at again after a short pause, counted and logged once per outage. */
  outage?: DatabaseOutage;
}

/** Reconciles one agent under its job lease; false when another instance holds it. */
export type LeasedRun = (agent: AgentRow) => Promise<boolean>;

export class DeferralWatch {
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private stopped = true;
  private unsubscribe: (() => void) | undefined;
  /** Sends some deferral waits on → its agent, as last read from the database. */
  private waitedOn = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly bus: ChangeBus,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** Runs `fn` when no other reconcile work of this process is running. */
    private readonly exclusive: (fn: () => Promise<void>) => Promise<void>,
    private readonly runLeased: LeasedRun,
    private readonly options: DeferralWatchOptions,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.bus.subscribe((change) => this.onChange(change));
    // At once: deferrals left by a previous process (or another instance) are picked up on start.
    this.lookIn(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** A run recorded a deferral: look at once, to learn its sends (which may even have resolved meanwhile). */
  deferralRecorded(): void {
    this.lookIn(0);
  }

  private onChange({ operation: op }: OperationChange): void {
    if (!this.waitedOn.has(op.id)) return;
    if (op.status === 'calling_adcp' && op.task_id === null) return;
    this.waitedOn.delete(op.id);
    this.lookIn(0);
  }

  /** One timer: asking for an earlier look moves it forward, a later one leaves it. */
  private lookIn(ms: number): void {
    if (this.stopped) return;
    const at = this.clock.now() + ms;
    if (this.timer && at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      void this.exclusive(() => this.look());
    }, ms);
    this.timer.unref();
  }

  private async look(): Promise<void> {
    let nextInMs = this.options.checkEveryMs;
    try {
      nextInMs = await this.runDue();
    } catch (err) {
      const outage = this.options.outage;
      if (outage?.failed('reconcile', err)) nextInMs = outage.pauseMs();
      else this.log.error({ err }, 'following up deferred reconciliation failed; trying again later');
    } finally {
      this.lookIn(nextInMs);
    }
  }

  /** Runs every agent whose deferral is settled; returns when to look next. */
  private async runDue(): Promise<number> {
    const deferrals = await this.store.reconcile.deferrals();
    this.waitedOn = new Map(deferrals.flatMap((d) => Object.values(d.waiting_on).flatMap((ids) => ids.map((id) => [id, d.agent_id] as const))));
    let nextInMs = this.options.checkEveryMs;
    if (deferrals.length === 0) return nextInMs;
    const inFlight = await this.store.reconcile.stillInFlight([...this.waitedOn.keys()]);
    for (const d of deferrals) {
      if (this.stopped) break;
      // A type whose sends have all resolved: at least its earliest deferred orphan can be settled now.
      const lists = Object.values(d.waiting_on);
      const settled = lists.length === 0 || lists.some((ids) => ids.every((id) => !inFlight.has(id)));
      if (!settled) continue;
      const now = this.clock.now();
      const notBefore = d.deferred_at + this.options.minGapMs;
      if (notBefore > now) {
        nextInMs = Math.min(nextInMs, notBefore - now);
        continue;
      }
      const agent = await this.store.agents.get(d.agent_id);
      if (!agent) {
        await this.store.reconcile.clearDeferral(d.agent_id, now);
        continue;
      }
      // Refused: another instance is reconciling this agent right now; its run settles or renews
      // the deferral, and if it died, the next look tries again.
      if (!(await this.runLeased(agent))) this.log.debug({ agent_id: agent.id }, 'deferred reconciliation: another instance holds the agent');
    }
    return nextInMs;
  }
}
