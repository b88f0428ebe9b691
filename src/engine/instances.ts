/**
 * This process among the others on the same database.
 *
 * SQLite: one serving process per file. At start, under the write lock, a row
 * with a fresh heartbeat whose process is still alive on this host means the file
 * is taken and we refuse to start; otherwise we take it over, and since only the
 * file's holder can be working it, every lease of another owner is released at
 * once: an ambiguous send of a killed process is resent seconds after the restart,
 * not when its lease (call timeout + 15 s) runs out.
 *
 * PostgreSQL: every instance keeps a heartbeat row and, on a connection of its
 * own, an advisory lock that the server drops the moment its process dies. Any live
 * instance that finds another's lock gone (a kill: seconds) or its heartbeat older
 * than the limit (a pause, a lost host) declares it dead, which removes its row and
 * releases its operation and job leases in one statement, and wakes the scheduler.
 * An instance that was only paused and finds its row gone says so and registers
 * again; whatever it was doing is fenced by lease epochs.
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { InstanceView, NewInstance } from '../store/instances-repo.js';
import { InstanceLock } from '../store/instance-lock.js';
import type { Clock } from './clock.js';
import type { DatabaseOutage } from './database-outage.js';

export interface InstancePresenceOptions {
  instanceId: string;
  /** A heartbeat older than this means the instance is dead. */
  deadAfterMs: number;
  /** For the PostgreSQL instance lock's own connection. */
  databaseUrl: string;
  /** The database's absence: a missed heartbeat is counted and logged once per outage, not each time. */
  outage?: DatabaseOutage;
}

/** A second `serve` on a SQLite file that a live process already serves. */
export class DatabaseInUseError extends Error {
  constructor(
    readonly database: string,
    readonly holder: InstanceView,
  ) {
    // The holder records its address only once it listens: a serve refused while the holder is
    // still starting says so rather than leave the address out without a word.
    const where = holder.url ? `, at ${holder.url}` : ', still starting (no address yet)';
    super(
      `${database} is already served by process ${holder.pid} on ${holder.hostname} (instance ${holder.id}) ` +
        `since ${new Date(holder.started_at).toISOString()}${where}; its last heartbeat was ${Math.max(0, holder.age_ms)} ms ago. ` +
        'One serve process per SQLite file: stop that one first, or use PostgreSQL (ADCP_ORCH_DATABASE_URL=postgres://…) to run several.',
    );
    this.name = 'DatabaseInUseError';
  }
}

export class InstancePresence {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = true;
  private readonly supersededHandlers: Array<() => void> = [];
  private readonly me: NewInstance;
  private lock: InstanceLock | undefined;
  /** When our own heartbeat last failed (0: never). */
  private heartbeatFailedAt = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: InstancePresenceOptions,
    /** Wakes the scheduler when released leases made work due. */
    private readonly wake: () => void,
  ) {
    this.me = { id: options.instanceId, pid: process.pid, hostname: hostname() };
  }

  /** Registers this instance (SQLite: takes the file or throws DatabaseInUseError) and starts the heartbeat. */
  async start(): Promise<void> {
    if (this.store.db.dialect === 'sqlite') await this.claimFile();
    else {
      // The lock first: a row whose lock is not held reads as a dead instance.
      await this.takeLock();
      await this.store.instances.register(this.me);
      await this.sweep();
    }
    this.stopped = false;
    this.schedule();
  }

  /** Records the address we listen on, for the message a refused second `serve` prints. */
  async setUrl(url: string): Promise<void> {
    this.me.url = url;
    await this.store.instances.setUrl(this.me.id, url);
  }

  /** SQLite: called when another process took the file over (we were presumed dead); we must stop serving. */
  onSuperseded(handler: () => void): void {
    this.supersededHandlers.push(handler);
  }

  /** Instances whose heartbeat is within the limit, with their ages. */
  async live(): Promise<InstanceView[]> {
    return (await this.store.instances.list()).filter((r) => r.age_ms <= this.options.deadAfterMs);
  }

  /** Stops the heartbeat, removes our row and releases our leases (clean shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
    const released = await this.store.instances.remove(this.me.id, this.clock.now());
    await this.lock?.release();
    if (released.operations + released.jobs > 0) this.log.info({ released }, 'released our leases at shutdown');
  }

  private async takeLock(): Promise<void> {
    const lock = await InstanceLock.acquire(this.options.databaseUrl);
    lock.onLost((err) => {
      if (!this.stopped) this.log.warn({ err: err?.message }, 'instance lock connection lost (others may declare us dead meanwhile); taking a new one at the next heartbeat');
    });
    this.lock = lock;
    this.me.lock_key = lock.key;
  }

  private async claimFile(): Promise<void> {
    const claim = await this.store.instances.claimFile(this.me, (row) => row.age_ms <= this.options.deadAfterMs && mayBeAlive(row), this.clock.now());
    if (claim.outcome === 'held') throw new DatabaseInUseError(this.store.db.describe, claim.holder);
    const { replaced, released } = claim;
    if (replaced.length > 0 || released.operations + released.jobs > 0) {
      this.log.info(
        { replaced: replaced.map((r) => ({ id: r.id, pid: r.pid, heartbeat_age_ms: r.age_ms })), released },
        'took the database file over from a process that is gone; its leases are released and its work is due now',
      );
    }
    if (released.operations > 0) this.wake();
  }

  /** Every quarter of the limit, jittered, so instances started together drift apart. */
  private schedule(): void {
    if (this.stopped) return;
    const base = this.options.deadAfterMs / 4;
    this.timer = setTimeout(() => {
      this.ticking = this.tick()
        .then(() => this.options.outage?.succeeded())
        .catch((err) => {
          this.heartbeatFailedAt = this.clock.now();
          // Away, the database also dropped our lock's connection: the next heartbeat takes a new lock.
          if (!this.options.outage?.failed('heartbeat', err)) this.log.warn({ err }, 'instance heartbeat failed; trying again at the next one');
        })
        .finally(() => {
          this.ticking = undefined;
          this.schedule();
        });
    }, Math.round(base * (0.75 + 0.25 * this.clock.random())));
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.lock?.isLost) {
      await this.takeLock();
      await this.store.instances.register(this.me);
    }
    if (await this.store.instances.heartbeat(this.me.id)) {
      if (this.store.db.dialect === 'postgres') await this.sweep();
      return;
    }
    if (this.stopped) return;
    if (this.store.db.dialect === 'sqlite') {
      this.log.error({ instance: this.me.id }, 'another serve process took this database file over (we were presumed dead); stopping');
      this.stopped = true;
      for (const handler of this.supersededHandlers) handler();
      return;
    }
    // Paused or cut off long enough to be declared dead: our leases were handed on, and lease
    // epochs keep anything we were doing from overwriting the new owners' work.
    this.log.warn({ instance: this.me.id }, 'our instance row was gone (declared dead by another instance after a pause?); registering again');
    await this.store.instances.register(this.me);
    await this.sweep();
  }

  /** PostgreSQL: declares dead instances dead and wakes the scheduler for their work. */
  private async sweep(): Promise<void> {
    // Cut off from the database ourselves a moment ago, so were the others most likely: give
    // their heartbeats a full limit to come back before calling anyone dead.
    if (this.heartbeatFailedAt > 0 && this.clock.now() - this.heartbeatFailedAt < this.options.deadAfterMs) return;
    // A dropped lock alone is not enough while the heartbeat is younger than a heartbeat interval and a bit.
    const limits = { deadAfterMs: this.options.deadAfterMs, lockGraceMs: Math.round(this.options.deadAfterMs * 0.3) };
    const { ids, released } = await this.store.instances.declareDead(this.me.id, limits, this.clock.now());
    if (ids.length === 0) return;
    this.log.warn({ instances: ids, released }, 'declared instances dead (no heartbeat within the limit); their leases are released');
    if (released.operations > 0) this.wake();
  }
}

/** Whether the process behind a row may still be running: certain only on this host. */
function mayBeAlive(row: Pick<InstanceView, 'pid' | 'hostname'>): boolean {
  if (row.hostname !== hostname()) return true;
  try {
    process.kill(row.pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
