/**
 * The loop that runs live buys' due work: it claims due buys (their timers, see
 * buy-tracker.ts) and due delivery outcomes (delivery-outcomes.ts) from the
 * database with leases, in pages, and runs them with bounded concurrency. Like
 * the operations' scheduler, every timer is a row and this loop only decides
 * when to look again: it sleeps until the nearest due time, a wake-up, or the
 * tick, whichever comes first. Several instances share the work through the
 * leases (FOR UPDATE SKIP LOCKED on PostgreSQL).
 */
import type { Logger } from 'pino';
import type { MediaBuyRow, Store } from '../../store/index.js';
import type { OutcomeRow } from '../../store/media-buy-outcomes-repo.js';
import type { Clock } from '../clock.js';
import type { DatabaseOutage } from '../database-outage.js';

export interface BuyWorkerOptions {
  instanceId: string;
  leaseMs: number;
  concurrency: number;
  tickMs: number;
  /** The database going away pauses the loop (counted and logged once there), never an error per attempt. */
  outage?: DatabaseOutage;
}

/**
 * Wake-ups within this long of the first one are answered together. Every buy change
 * wakes the loop (wiring.ts) and each wake-up costs two reads; at a hundred creates a
 * second that was a read pair per create, nearly all finding nothing due (a new buy's
 * first read is an interval away). Nothing a wake-up can make due is that urgent: a
 * status read a second after a report, an operator's refresh, a freed slot.
 */
export const WAKE_COALESCE_MS = 20;

interface DueTimes {
  buy: number | null | undefined;
  outcome: number | null | undefined;
}

/** Due now, or not known (a failed read: claiming then meets the error and the outage handling). */
function isDue(at: number | null | undefined, now: number): boolean {
  return at === undefined || (at !== null && at <= now);
}

export class BuyWorker {
  private running = false;
  private inFlight = 0;
  private loopDone: Promise<void> | undefined;
  private wakeResolve: (() => void) | undefined;
  /** A wake-up that came while the loop was not asleep (reading or claiming): the next sleep is skipped, so no change is missed. */
  private wokenAwake = false;
  private wakeTimer: NodeJS.Timeout | undefined;
  private coalesceTimer: NodeJS.Timeout | undefined;
  private readonly active = new Set<Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly runBuy: (row: MediaBuyRow) => Promise<void>,
    private readonly runOutcome: (row: OutcomeRow) => Promise<void>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: BuyWorkerOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  wake(): void {
    const resolve = this.wakeResolve;
    if (!resolve) this.wokenAwake = true;
    else if (!this.running) resolve(); // stopping: at once
    else this.coalesceTimer ??= setTimeout(resolve, WAKE_COALESCE_MS);
  }

  async stop(timeoutMs = 10_000): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
    const until = performance.now() + timeoutMs;
    while (this.active.size > 0 && performance.now() < until) {
      await Promise.race([Promise.allSettled([...this.active]), new Promise((r) => setTimeout(r, until - performance.now()).unref())]);
    }
  }

  private async loop(): Promise<void> {
    while (this.running) {
      // Look before claiming: a claim is a write transaction (and on SQLite a place in a
      // group commit) even when it finds nothing, and every buy change wakes this loop
      // (wiring.ts), most of them making nothing due now (a new buy's first read is an
      // interval away). Two indexed reads tell whether anything is due.
      const due = await this.dueTimes();
      const wait = this.waitMs(due);
      if (wait > 0) {
        await this.sleep(wait);
        continue;
      }
      let claimed = 0;
      try {
        claimed = await this.claim(due);
        this.options.outage?.succeeded();
      } catch (err) {
        if (this.options.outage?.failed('media_buys', err)) {
          // Work claimed just before is finished by whoever holds its lease once it expires.
          await this.sleep(this.options.outage.pauseMs());
          continue;
        }
        this.log.error({ err }, 'live buys: claiming due work failed');
      }
      if (!this.running) break;
      if (claimed > 0 && this.room() > 0) {
        await new Promise((r) => setImmediate(r));
        continue;
      }
      // Due, yet nothing claimed (another instance took it, or no room): look again shortly, not at once.
      await this.sleep(Math.min(this.options.tickMs, 100));
    }
  }

  private room(): number {
    return this.options.concurrency - this.inFlight;
  }

  /** Claims from each table whose work is due (or whose due time could not be read: the claim then meets the error). */
  private async claim(due: DueTimes): Promise<number> {
    const now = this.clock.now();
    let room = this.room();
    if (room <= 0) return 0;
    let claimed = 0;
    if (isDue(due.buy, now)) {
      const buys = await this.store.mediaBuys.claimDue(this.options.instanceId, now, this.options.leaseMs, room);
      for (const b of buys) this.dispatch(() => this.runBuy(b), { buy_id: b.id });
      room -= buys.length;
      claimed += buys.length;
      if (room <= 0) return claimed;
    }
    if (isDue(due.outcome, now)) {
      const outcomes = await this.store.deliveryOutcomes.claimDue(this.options.instanceId, now, this.options.leaseMs, room);
      for (const o of outcomes) this.dispatch(() => this.runOutcome(o), { outcome_id: o.id });
      claimed += outcomes.length;
    }
    return claimed;
  }

  private dispatch(work: () => Promise<void>, what: Record<string, string>): void {
    this.inFlight++;
    const task = work()
      .catch((err) => {
        if (this.options.outage?.failed('media_buys', err)) return; // its lease expires and it is run again
        this.log.error({ err, ...what }, 'live buys: work failed; the lease will expire and it will be retried');
      })
      .finally(() => {
        this.inFlight--;
        this.active.delete(task);
        this.wake();
      });
    this.active.add(task);
  }

  /** The nearest due time of each table's unleased work (null: none; undefined: could not be read). */
  private async dueTimes(): Promise<DueTimes> {
    const now = this.clock.now();
    const read = (p: Promise<number | null>) => p.catch(() => undefined);
    const [buy, outcome] = await Promise.all([read(this.store.mediaBuys.nextDueAt(now)), read(this.store.deliveryOutcomes.nextDueAt(now))]);
    return { buy, outcome };
  }

  /** How long to sleep before anything is due: 0 when something is due now (or unknown), at most the tick. */
  private waitMs(due: DueTimes): number {
    if (this.room() <= 0) return Math.min(this.options.tickMs, 100);
    const now = this.clock.now();
    if (isDue(due.buy, now) || isDue(due.outcome, now)) return 0;
    const next = [due.buy, due.outcome].filter((v): v is number => typeof v === 'number');
    if (next.length === 0) return this.options.tickMs;
    return Math.max(1, Math.min(this.options.tickMs, Math.min(...next) - now));
  }

  private sleep(ms: number): Promise<void> {
    if (this.wokenAwake) {
      // Woken while reading or claiming: look again soon, together with any wake-up that follows.
      this.wokenAwake = false;
      if (!this.running) return Promise.resolve();
      ms = Math.min(ms, WAKE_COALESCE_MS);
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(this.wakeTimer);
        clearTimeout(this.coalesceTimer);
        this.coalesceTimer = undefined;
        this.wakeResolve = undefined;
        resolve();
      };
      this.wakeResolve = done;
      this.wakeTimer = setTimeout(done, ms);
    });
  }
}
