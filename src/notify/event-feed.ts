/**
 * Fan-out of a tenant's operation events to live readers (SSE streams).
 *
 * Wake-ups carry no data: the in-process ChangeBus, a NOTIFY from another
 * instance and a fallback timer all just say "look again". Each reader then
 * reads `eventsSince(tenant, cursor)` from the database, so events arrive in id
 * order, exactly once per stream, whichever instance wrote them and even when a
 * wake-up was lost (the timer catches up within `fallbackPollMs`). Readers only
 * go up to the event horizon (see event-horizon.ts), so a slow transaction's
 * event is never overtaken and skipped.
 */
import type { Logger } from 'pino';
import type { EventRow, Store } from '../store/index.js';
import type { EventHorizon } from './event-horizon.js';

export interface FeedEvent {
  row: EventRow;
  /** The operation's status when the event was read (its current one, not the one at event time). */
  status: string | null;
}

export interface FeedReader {
  /** Hands over the next events, oldest first; the next batch waits until this resolves (back-pressure). */
  deliver(events: FeedEvent[]): Promise<void>;
  /** The feed is shutting down: end the stream. */
  end(): void;
}

export interface FeedSubscription {
  close(): void;
}

export interface EventFeedOptions {
  /** How often every reader looks again even without a wake-up; 0 for never. */
  fallbackPollMs: number;
  /** Events read per query while catching up. */
  pageSize: number;
}

export class EventFeed {
  private readonly readers = new Set<Reader>();
  private timer: NodeJS.Timeout | undefined;

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
    this.timer = setInterval(() => this.wakeAll(), every);
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

  /** Starts delivering the tenant's events with id > afterId, catching up from the database first. */
  subscribe(tenantId: string, afterId: number, target: FeedReader): FeedSubscription {
    const reader = new Reader(this, tenantId, afterId, target);
    this.readers.add(reader);
    reader.kick();
    return reader;
  }

  /** Something of this tenant changed (here or on another instance). */
  wake(tenantId: string): void {
    for (const r of this.readers) if (r.tenantId === tenantId) r.kick();
  }

  wakeAll(): void {
    for (const r of this.readers) r.kick();
  }

  /** @internal */
  detach(reader: Reader): void {
    this.readers.delete(reader);
  }

  /** @internal One page of the tenant's events after `cursor` that are safe to hand out. */
  async read(tenantId: string, cursor: number): Promise<{ events: FeedEvent[]; more: boolean }> {
    const safe = await this.horizon.current();
    if (safe <= cursor) return { events: [], more: false };
    const rows = await this.store.operations.eventsSince(tenantId, cursor, this.options.pageSize);
    const visible = rows.filter((r) => r.id <= safe);
    if (visible.length === 0) return { events: [], more: false };
    const ids = [...new Set(visible.map((r) => r.operation_id))];
    const ops = await this.store.db.kysely.selectFrom('operations').select(['id', 'status']).where('id', 'in', ids).execute();
    const status = new Map(ops.map((o) => [o.id, o.status]));
    return {
      events: visible.map((row) => ({ row, status: status.get(row.operation_id) ?? null })),
      // A full page may be followed by more; a page cut at the horizon waits for a wake-up.
      more: visible.length === rows.length && rows.length === this.options.pageSize,
    };
  }

  /** @internal */
  readFailed(err: unknown, tenantId: string): void {
    this.log.warn({ err, tenant_id: tenantId }, 'event feed: reading events failed; retrying on the next wake-up');
  }
}

/** One stream's cursor and its single-flight pump. */
class Reader implements FeedSubscription {
  private running = false;
  private again = false;
  private closed = false;

  constructor(
    private readonly feed: EventFeed,
    readonly tenantId: string,
    private cursor: number,
    readonly target: FeedReader,
  ) {}

  /** Look again; a kick during a pump makes the pump go round once more, never run twice at once. */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.pump();
  }

  close(): void {
    this.closed = true;
    this.feed.detach(this);
  }

  private async pump(): Promise<void> {
    try {
      do {
        this.again = false;
        for (;;) {
          const { events, more } = await this.feed.read(this.tenantId, this.cursor);
          if (this.closed || events.length === 0) break;
          await this.target.deliver(events);
          this.cursor = events[events.length - 1]!.row.id;
          if (!more) break;
        }
      } while (this.again && !this.closed);
    } catch (err) {
      if (!this.closed) this.feed.readFailed(err, this.tenantId);
    } finally {
      this.running = false;
    }
  }
}
