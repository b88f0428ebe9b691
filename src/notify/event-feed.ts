/**
 * Fan-out of a tenant's notifications to live readers (SSE streams), in `seq`
 * order, each exactly once per stream, whichever instance wrote it.
 *
 * Each reader keeps a position: a global seq such that every notification of its
 * tenant up to it has been handed over. Two ways forward:
 *
 * - Local (the hot path): changes committed in this process are published on the
 *   ChangeBus with their notifications, which the feed keeps in a small window of
 *   recent ones. A reader walks that window from its position while the seqs are
 *   contiguous; a notification published here has committed, and a run with no
 *   missing seq leaves nothing in between, so no database read is needed.
 * - From the database: when the walk meets a missing seq (written by another
 *   instance, published late, rolled back, or older than the window), and on
 *   every NOTIFY from another instance and every fallback tick (which covers a lost
 *   wake-up), the reader reads its tenant's rows up to the horizon (see
 *   event-horizon.ts), so a slow transaction's row is never overtaken and skipped.
 *   A reader that finds the horizon held at such a gap looks again by itself, soon and
 *   then less often: the transactions holding it may end without a wake-up (any
 *   transaction of the database can hold a gap open, and most notify nobody), and a
 *   stream must not wait for the next commit or the fallback tick to get rows that
 *   are already there.
 */
import type { Logger } from 'pino';
import type { NotificationRow, Store } from '../store/index.js';
import type { EventHorizon } from './event-horizon.js';
import type { DatabaseOutage } from '../engine/database-outage.js';

export interface FeedReader {
  /** Hands over the next notifications, oldest first; the next batch waits until this resolves (back-pressure). */
  deliver(rows: NotificationRow[]): Promise<void>;
  /** The feed is shutting down: end the stream. */
  end(): void;
}

export interface FeedSubscription {
  close(): void;
}

export interface EventFeedOptions {
  /** How often every reader looks in the database even without a wake-up; 0 for never. */
  fallbackPollMs: number;
  /** Rows read per query while catching up. */
  pageSize: number;
  /** Recent local notifications kept for the local path, at most this many… */
  windowSize?: number;
  /** …and none older than this (ms). A reader that far behind reads from the database anyway. */
  windowMs?: number;
  /** The clock the window's age is measured with (tests). */
  now?: () => number;
  /** The database's absence: a failed read is counted and logged once per outage, not per stream and wake-up. */
  outage?: DatabaseOutage;
}

const DEFAULT_WINDOW = 10_000;
// Live streams read from the window within milliseconds of a commit; only a stream that
// fell behind (a slow client, a resume) wants older rows, and the database serves it.
// Without an age bound an idle-ish service would hold its last 10,000 bodies for good
// (the soak saw ~15 MB of heap collect that way before the count bound was reached).
const DEFAULT_WINDOW_MS = 30_000;
/** A reader held at a gap looks again after this long, doubling up to the max while it stays held. */
const GAP_RETRY_FIRST_MS = 10;
const GAP_RETRY_MAX_MS = 1_000;

export class EventFeed {
  private readonly readers = new Set<Reader>();
  private timer: NodeJS.Timeout | undefined;
  /** Recent notifications committed here, by seq (insertion order is about seq order). */
  private readonly recent = new Map<number, NotificationRow>();
  /** When each entry of `recent` was published (same keys, same order). */
  private readonly publishedAt = new Map<number, number>();
  private recentMax = 0;
  /** Notifications handed over from the window / database reads made by readers (for benches and metrics). */
  readonly counts = { fromWindow: 0, databaseReads: 0 };

  constructor(
    private readonly store: Store,
    private readonly horizon: EventHorizon,
    private readonly log: Logger,
    private readonly options: EventFeedOptions = { fallbackPollMs: 1000, pageSize: 500 },
  ) {}

  start(): void {
    // 0 turns the fallback off (tests that must prove a NOTIFY woke the stream).
    if (this.timer || this.options.fallbackPollMs <= 0) return;
    // Jitter, so instances and streams started together do not query in lockstep.
    const every = this.options.fallbackPollMs * (0.9 + Math.random() * 0.2);
    this.timer = setInterval(() => {
      this.prune((this.options.now ?? Date.now)());
      this.wakeAll();
    }, every);
    this.timer.unref();
  }

  /** Stops the timer and ends every stream. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const r of [...this.readers]) {
      r.close();
      r.target.end();
    }
  }

  get size(): number {
    return this.readers.size;
  }

  /** Where a stream that asks for nothing old starts. */
  startingPoint(): Promise<number> {
    return this.horizon.startingPoint();
  }

  /** Starts delivering the tenant's notifications with seq > afterSeq (of the given types), catching up from the database first. */
  subscribe(tenantId: string, afterSeq: number, target: FeedReader, types?: ReadonlySet<string>): FeedSubscription {
    const reader = new Reader(this, tenantId, afterSeq, target, types);
    this.readers.add(reader);
    reader.kick(true);
    return reader;
  }

  /** Notifications committed in this process (ChangeBus): kept for the local path, and their tenants' readers kicked. */
  publish(rows: readonly NotificationRow[]): void {
    if (rows.length === 0) return;
    const tenants = new Set<string>();
    const now = (this.options.now ?? Date.now)();
    for (const row of rows) {
      this.recent.set(row.seq, row);
      this.publishedAt.set(row.seq, now);
      if (row.seq > this.recentMax) this.recentMax = row.seq;
      tenants.add(row.tenant_id);
    }
    this.prune(now);
    for (const r of this.readers) if (tenants.has(r.tenantId)) r.kick(false);
  }

  /** Entries in publication order, so the oldest go first; an entry dropped only sends a reader to the database. */
  private prune(now: number): void {
    const max = this.options.windowSize ?? DEFAULT_WINDOW;
    const oldest = now - (this.options.windowMs ?? DEFAULT_WINDOW_MS);
    for (const [seq, at] of this.publishedAt) {
      if (this.recent.size <= max && at >= oldest) break;
      this.recent.delete(seq);
      this.publishedAt.delete(seq);
    }
  }

  /** Rows held for the local path (tests, benches). */
  get windowLength(): number {
    return this.recent.size;
  }

  /** Something of this tenant changed on another instance: its readers look in the database. */
  wake(tenantId: string): void {
    for (const r of this.readers) if (r.tenantId === tenantId) r.kick(true);
  }

  wakeAll(): void {
    for (const r of this.readers) r.kick(true);
  }

  /** @internal */
  detach(reader: Reader): void {
    this.readers.delete(reader);
  }

  /**
   * @internal The local path: the tenant's notifications from the window after `pos`,
   * as far as the seqs run without a gap. `gap` says a missing seq stopped the walk
   * below the newest one known here, so the database must be asked.
   */
  fromWindow(tenantId: string, pos: number): { rows: NotificationRow[]; pos: number; gap: boolean } {
    const rows: NotificationRow[] = [];
    let at = pos;
    for (let next = this.recent.get(at + 1); next; next = this.recent.get(at + 1)) {
      at = next.seq;
      if (next.tenant_id === tenantId) rows.push(next);
    }
    this.counts.fromWindow += rows.length;
    return { rows, pos: at, gap: at < this.recentMax };
  }

  /** @internal One page of the tenant's notifications after `pos` that are safe to hand out, and the position reached. */
  async read(tenantId: string, pos: number): Promise<{ rows: NotificationRow[]; pos: number; more: boolean; held: boolean }> {
    const { safe, held } = await this.horizon.look();
    if (safe <= pos) return { rows: [], pos, more: false, held };
    this.counts.databaseReads++;
    const rows = await this.store.notifications.after(tenantId, pos, this.options.pageSize, safe);
    // A full page may be followed by more; otherwise every row of this tenant up to the horizon has been read.
    if (rows.length === this.options.pageSize) return { rows, pos: rows[rows.length - 1]!.seq, more: true, held };
    return { rows, pos: safe, more: false, held };
  }

  /** @internal */
  readFailed(err: unknown, tenantId: string): void {
    // Streams stay open; the fallback tick (or the next wake-up) reads again once the database is back.
    if (this.options.outage?.failed('events', err)) return;
    this.log.warn({ err, tenant_id: tenantId }, 'event feed: reading notifications failed; retrying on the next wake-up');
  }
}

/** One stream's position and its single-flight pump. */
class Reader implements FeedSubscription {
  private running = false;
  private again = false;
  private needsRead = false;
  private closed = false;
  /** Set while the horizon is held at a gap (see the file's comment). */
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = GAP_RETRY_FIRST_MS;

  constructor(
    private readonly feed: EventFeed,
    readonly tenantId: string,
    private pos: number,
    readonly target: FeedReader,
    private readonly types?: ReadonlySet<string>,
  ) {}

  /**
   * Look again (`fromDatabase`: also read the table, as after a remote change). A kick
   * during a pump makes the pump go round once more, never run twice at once.
   */
  kick(fromDatabase: boolean): void {
    if (this.closed) return;
    if (fromDatabase) this.needsRead = true;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.pump();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.feed.detach(this);
  }

  private async pump(): Promise<void> {
    try {
      do {
        this.again = false;
        const local = this.feed.fromWindow(this.tenantId, this.pos);
        if (local.rows.length > 0) await this.hand(local.rows);
        if (this.closed) break;
        this.pos = Math.max(this.pos, local.pos);
        if (local.gap) this.needsRead = true;
        while (this.needsRead && !this.closed) {
          this.needsRead = false;
          const page = await this.feed.read(this.tenantId, this.pos);
          if (this.closed) break;
          if (page.rows.length > 0) await this.hand(page.rows);
          this.pos = Math.max(this.pos, page.pos);
          if (page.more) this.needsRead = true;
          else if (page.held) this.retryLater();
          else this.retryMs = GAP_RETRY_FIRST_MS;
        }
        // Anything published meanwhile kicked us (`again`): its rows are in the window.
      } while (this.again && !this.closed);
    } catch (err) {
      if (!this.closed) this.feed.readFailed(err, this.tenantId);
    } finally {
      this.running = false;
    }
  }

  /** Looks in the database again soon, once; less soon each time the horizon is still held. */
  private retryLater(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.kick(true);
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(GAP_RETRY_MAX_MS, this.retryMs * 2);
  }

  private async hand(rows: NotificationRow[]): Promise<void> {
    const wanted = this.types ? rows.filter((r) => this.types!.has(r.type)) : rows;
    if (wanted.length > 0) await this.target.deliver(wanted);
  }
}
