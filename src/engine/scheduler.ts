/**
 * The scheduler: claims due operations from the database in pages and runs them
 * with bounded concurrency. Every timer is a row (`next_check_at`); this loop only
 * decides when to look again, sleeping until the nearest due time or a wake-up
 * (a new operation, a NOTIFY from another instance), whichever comes first.
 */
import type { Logger } from 'pino';
import type { Store, OperationRow } from '../store/index.js';
import { WriteBatch, type WriteSlot } from '../store/write-batch.js';
import type { Clock } from './clock.js';
import type { DatabaseOutage } from './database-outage.js';
import type { StrandedLeases } from './stranded-leases.js';

/**
 * Runs one claimed row. `writes`, when given, is the row's slot in its page's shared
 * commit (src/store/write-batch.ts): the runner may make its final write through it.
 */
export type ClaimedRunner = (row: OperationRow, writes?: WriteSlot) => Promise<void>;

export interface SchedulerOptions {
  instanceId: string;
  leaseMs: number;
  /** How many operations run at once in this process. */
  concurrency: number;
  /** Longest sleep when nothing is due (also the fallback when a wake-up is missed). */
  tickMs: number;
  /**
   * After a start (often a restart with a backlog of overdue timers) concurrency ramps
   * up over this long and each dispatch gets a little jitter, so the backlog reaches the
   * sellers as a rising stream, not a burst. 0 turns it off.
   */
  warmupMs?: number;
  /**
   * SQLite: the writes of a claimed page wait for each other this long at most (from
   * the first one) to share one commit; the next page is claimed in that commit. 0
   * turns it off (each write is grouped only with what arrives in its own turn).
   */
  pageWriteWaitMs?: number;
  /** The database's absence: a pause (counted, logged once), not an error per tick. */
  outage?: DatabaseOutage;
  /** Leases of work the database's absence cut short, handed back once it returns. */
  stranded?: StrandedLeases;
}

/** Long enough for the replies of a page of local polls to come back together, short against any poll interval. */
export const DEFAULT_PAGE_WRITE_WAIT_MS = 25;

export class Scheduler {
  private running = false;
  private inFlight = 0;
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeResolve: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private readonly active = new Set<Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly run: ClaimedRunner,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: SchedulerOptions,
  ) {}

  private startedAt = 0;

  start(): void {
    if (this.running) return;
    this.running = true;
    this.startedAt = this.clock.now();
    this.loopDone = this.loop();
  }

  /** Look for due work now instead of at the next tick. */
  wake(): void {
    this.wakeResolve?.();
  }

  /** Stops claiming; waits for work in flight to finish (or the timeout). */
  async stop(timeoutMs = 10_000): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
    // Again while there is work: a page claimed ahead adds its rows once its claim commits.
    const until = performance.now() + timeoutMs;
    while (this.active.size > 0 && performance.now() < until) {
      await Promise.race([Promise.allSettled([...this.active]), new Promise((r) => setTimeout(r, until - performance.now()).unref())]);
    }
  }

  private async loop(): Promise<void> {
    const { outage, stranded } = this.options;
    while (this.running) {
      let claimed = 0;
      let pauseMs: number | undefined;
      try {
        // Work the database's absence cut short is due again first (no-op when there is none).
        if (stranded && stranded.size > 0) await stranded.release();
        claimed = await this.claimAndDispatch();
      } catch (err) {
        if (outage?.failed('scheduler', err)) pauseMs = outage.pauseMs();
        else this.log.error({ err }, 'scheduler: claiming due work failed');
      }
      if (!this.running) break;
      // A full page means more may be due: go again at once (after yielding).
      if (claimed > 0 && this.roomToClaim() > 0) {
        await new Promise((r) => setImmediate(r));
        continue;
      }
      await this.sleep(pauseMs ?? (await this.sleepMs()));
    }
  }

  /** Concurrency allowed now: a tenth at start, all of it once the warm-up is over. */
  private allowedConcurrency(): number {
    const warmup = this.options.warmupMs ?? 0;
    const elapsed = this.clock.now() - this.startedAt;
    if (warmup <= 0 || elapsed >= warmup) return this.options.concurrency;
    const share = 0.1 + 0.9 * (elapsed / warmup);
    return Math.max(1, Math.ceil(this.options.concurrency * share));
  }

  /**
   * Claims a page, not a row per finished task: while work is running it waits until
   * at least a quarter of the allowed slots are free (idle, it claims whatever is due),
   * so one claim statement leases many rows.
   */
  private roomToClaim(): number {
    const allowed = this.allowedConcurrency();
    const room = allowed - this.inFlight - this.claimingAhead;
    if (room <= 0) return 0;
    if (this.inFlight > 0 && room < Math.max(1, Math.floor(allowed / 4))) return 0;
    return room;
  }

  private async claimAndDispatch(): Promise<number> {
    const room = this.roomToClaim();
    if (room <= 0) return 0;
    const rows = await this.claim(room);
    // The database answered: an outage, if there was one, is over.
    this.options.outage?.succeeded();
    this.dispatchPage(rows);
    return rows.length;
  }

  /** One claim; one that failed for want of the database may have happened all the same (stranded-leases.ts). */
  private async claim(room: number): Promise<OperationRow[]> {
    const now = this.clock.now();
    try {
      return await this.store.operations.claimDue(this.options.instanceId, now, this.options.leaseMs, room);
    } catch (err) {
      this.options.stranded?.noteClaim(now + this.options.leaseMs, err);
      throw err;
    }
  }

  /** Rows claimed together run together; on SQLite their final writes share one commit. */
  private dispatchPage(rows: OperationRow[]): void {
    const waitMs = this.options.pageWriteWaitMs ?? DEFAULT_PAGE_WRITE_WAIT_MS;
    const db = this.store.db;
    if (rows.length < 2 || waitMs <= 0 || db?.dialect !== 'sqlite') {
      for (const row of rows) this.dispatch(row);
      return;
    }
    const batch = new WriteBatch(db, rows.length, waitMs, (held) => this.claimAhead(held));
    for (const row of rows) this.dispatch(row, batch.slot());
  }

  /**
   * A page's writes were just queued: claim the next page now, so the claim shares
   * their commit instead of taking one of its own after it. Its size is the room there
   * will be once the `held` writers finish, which they do right after that commit (the
   * write is their last step); it is dispatched when the commit is done.
   */
  private claimAhead(held: number): void {
    if (!this.running) return;
    const room = this.allowedConcurrency() - (this.inFlight - held) - this.claimingAhead;
    if (room < Math.max(1, Math.floor(this.allowedConcurrency() / 4))) return;
    this.claimingAhead += room;
    const claim = this
      .claim(room)
      .then((rows) => this.dispatchPage(rows))
      .catch((err) => {
        if (!this.options.outage?.failed('scheduler', err)) this.log.error({ err }, 'scheduler: claiming due work failed');
      })
      .finally(() => {
        this.claimingAhead -= room;
        this.active.delete(claim);
      });
    // stop() waits for it: rows it claims are run, never left leased.
    this.active.add(claim);
  }

  private claimingAhead = 0;

  private dispatch(row: OperationRow, writes?: WriteSlot): void {
    this.inFlight++;
    const warmingUp = this.clock.now() - this.startedAt < (this.options.warmupMs ?? 0);
    const jitter = warmingUp ? Math.round(250 * this.clock.random()) : 0;
    const task = (jitter > 0 ? new Promise((r) => setTimeout(r, jitter)) : Promise.resolve())
      .then(() => this.run(row, writes))
      .catch((err) => {
        // The database went away under it: its lease is handed back when the database returns.
        if (this.options.stranded?.note(row, err, 'operation')) return;
        this.log.error({ err, operation_id: row.id }, 'scheduler: work failed; the lease will expire and it will be retried');
      })
      .finally(() => {
        writes?.done();
        this.inFlight--;
        this.active.delete(task);
        this.wake();
      });
    this.active.add(task);
  }

  private async sleepMs(): Promise<number> {
    // Busy (too few free slots to claim a page): a finishing task wakes us; no need to look at timers.
    if (this.inFlight > 0 && this.roomToClaim() === 0) return Math.min(this.options.tickMs, 100);
    const next = await this.store.operations.nextDueAt(this.clock.now()).catch(() => null);
    if (next === null) return this.options.tickMs;
    return Math.max(0, Math.min(this.options.tickMs, next - this.clock.now()));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(this.wakeTimer);
        this.wakeResolve = undefined;
        resolve();
      };
      this.wakeResolve = done;
      this.wakeTimer = setTimeout(done, ms);
    });
  }
}
