/**
 * One process's view of whether its database is away, shared by everything that
 * uses it: the API (503), the webhook receiver, the dashboard and the background
 * loops (scheduler, subscriptions, reconciliation, campaigns, maintenance,
 * heartbeat, live feed).
 *
 * An outage is a pause, not a failure of each thing that met it: the first failure
 * is logged once (warn), later ones only counted
 * (`adcp_orch_database_unavailable_total{where}`) and logged at debug, and the
 * first success after it logs how long it lasted. Loops wait `pauseMs()` between
 * attempts meanwhile: short at first (a blip is over in a moment), growing to a
 * couple of seconds, so they neither hammer a database that is restarting nor
 * notice its return late. Nothing is kept in memory that the database does not
 * also hold: when it returns, the loops read their work from it as after a restart.
 */
import type { Logger } from 'pino';
import { databaseUnavailable } from '../store/db-errors.js';
import type { Clock } from './clock.js';

/** Where an outage was met, the `where` label of the metric. */
export type OutagePlace =
  | 'api'
  | 'mcp'
  | 'dashboard'
  | 'webhook'
  | 'scheduler'
  | 'operation'
  | 'subscriptions'
  | 'reconcile'
  | 'campaigns'
  | 'media_buys'
  | 'maintenance'
  | 'heartbeat'
  | 'events';

export const MIN_PAUSE_MS = 250;
export const MAX_PAUSE_MS = 2_000;
/** Seconds a client is told to wait (Retry-After) while the database is away. */
export const RETRY_AFTER_S = 5;

export interface OutageCounter {
  databaseUnavailable(where: OutagePlace): void;
}

/**
 * A failure this soon after the database came back is the same outage flapping (a
 * restarting server refuses a few statements while it starts up, a pool drops the
 * connections it opened just before): counted, but not announced as a new outage.
 */
export const FLAP_MS = 5_000;

export class DatabaseOutage {
  private since: number | undefined;
  /** The current outage began as a flap of the previous one: neither its start nor its end is logged above debug. */
  private flapping = false;
  private lastRecovered = Number.NEGATIVE_INFINITY;
  private lastConnectionLossLogged = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly log: Logger,
    private readonly counter: OutageCounter | undefined,
    private readonly clock: Pick<Clock, 'now' | 'random'>,
  ) {}

  /** True while the last database call we heard of failed for want of the database. */
  get down(): boolean {
    return this.since !== undefined;
  }

  /**
   * When `err` means the database is unavailable: counted under `where`, logged once
   * per outage, and true (the caller pauses or answers 503). Otherwise false: the
   * caller handles the error as it always did.
   */
  failed(where: OutagePlace, err: unknown): boolean {
    const unavailable = databaseUnavailable(err);
    if (!unavailable) return false;
    this.counter?.databaseUnavailable(where);
    if (this.since === undefined) {
      this.since = this.clock.now();
      this.flapping = this.since - this.lastRecovered < FLAP_MS;
      if (this.flapping) {
        this.log.debug({ where, reason: unavailable.reason }, 'database unavailable again just after its return');
        return true;
      }
      this.log.warn(
        { where, reason: unavailable.reason },
        'database unavailable: requests answer 503 and background work pauses until it is back (nothing is lost: work resumes from what is stored)',
      );
    } else {
      this.log.debug({ where, reason: unavailable.reason }, 'database still unavailable');
    }
    return true;
  }

  /** A database call just succeeded: ends the outage, if there was one. Cheap enough to call after every success. */
  succeeded(): void {
    if (this.since === undefined) return;
    const now = this.clock.now();
    const downMs = now - this.since;
    this.since = undefined;
    this.lastRecovered = now;
    if (this.flapping) this.log.debug({ down_ms: downMs }, 'database back again after a flap');
    else this.log.info({ down_ms: downMs }, 'database available again; resuming');
  }

  /**
   * A pooled connection was lost (a restart, a failover, an administrator's
   * pg_terminate_backend). The pool replaces it; the operator should still see it,
   * once, not once per connection: a restart drops them all together.
   */
  connectionLost(err: Error): void {
    const now = this.clock.now();
    if (this.since !== undefined || now - this.lastConnectionLossLogged < 5_000) {
      this.log.debug({ err: err.message }, 'PostgreSQL connection lost');
      return;
    }
    this.lastConnectionLossLogged = now;
    this.log.warn({ err: err.message }, 'PostgreSQL connection lost; the pool opens a new one when next needed');
  }

  /** How long a background loop waits before its next attempt while the database is away. */
  pauseMs(): number {
    const elapsed = this.since === undefined ? 0 : this.clock.now() - this.since;
    const base = Math.min(MAX_PAUSE_MS, Math.max(MIN_PAUSE_MS, elapsed / 4));
    return Math.round(base * (0.8 + 0.4 * this.clock.random()));
  }
}
