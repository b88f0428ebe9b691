/**
 * Cross-instance wake-ups over PostgreSQL LISTEN/NOTIFY.
 *
 * After an operation change commits, this instance NOTIFYs a small payload
 * (tenant, highest notification seq, whether work became due now). Every other
 * instance LISTENs on a dedicated connection and wakes its SSE readers for that
 * tenant (which read the notifications table) and, when work is due, its scheduler. A notice carries no state: the database
 * is read afterwards, and a lost notice (connection drop, restart) only delays
 * things until the fallback polls. NOTIFY is delivered at commit and only to
 * sessions listening then, so after reconnecting we wake everything once.
 *
 * Changes that raise no notification (`working`, `calling_adcp`, a governance step)
 * are told too, so other instances' dashboard pages re-read at once, but throttled:
 * at most one such notice per tenant per `operationNoticeMs` (the ids changed
 * meanwhile, or "many"), so a burst of `working` webhooks costs a handful of
 * NOTIFYs a second, not one per change. A live media buy's changes are told the same
 * way, naming the buy's id (and its create's operation id): a report or a status read
 * changes its figures whether or not it raises a notification.
 */
import pg from 'pg';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { BuyChange, OperationChange } from '../engine/change-bus.js';
import type { Db } from '../store/db.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from '../store/pg-pool.js';

const errorText = (err: unknown) => (err instanceof Error ? err.message : err === undefined ? 'connection ended' : String(err));

export const DEFAULT_CHANNEL = 'adcp_orch_events';

export interface RemoteChange {
  tenantId: string;
  /** The highest notification seq the change wrote (0 when it wrote none). */
  maxSeq: number;
  /** Work became due now (a new operation, an answer to send): schedulers should look. */
  due: boolean;
  /** Operations changed without a notification (dashboard pages re-read them). */
  operationIds: string[];
  /** More of those than a notice names. */
  manyOperations: boolean;
}

export interface PgNotifierOptions {
  url: string;
  db: Db;
  instanceId: string;
  log: Logger;
  channel?: string;
  onRemote(change: RemoteChange): void;
  /** Notices may have been missed while disconnected. */
  onReconnect(): void;
  /** The least time between two notices of changes without a notification, per tenant. Default 250 ms. */
  operationNoticeMs?: number;
}

interface Wire {
  /** sender instance, to ignore our own notices (the in-process bus already woke us) */
  i: string;
  t: string;
  /** highest notification seq */
  s: number;
  d?: 1;
  /** operations changed without a notification */
  o?: string[];
  /** more of them than named */
  m?: 1;
}

/** Ids named in one notice at most (a NOTIFY payload must stay under 8000 bytes). */
const MAX_NOTICE_IDS = 50;

const MIN_BACKOFF_MS = 250;
// Short enough that LISTEN is back within a couple of seconds of the database (a failed attempt costs one refused connect).
const MAX_BACKOFF_MS = 2_000;

export class PgNotifier {
  private client: pg.Client | undefined;
  private stopped = false;
  private everConnected = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Changes since the last flush, per tenant: notices are coalesced per event-loop turn. */
  private batch = new Map<string, { s: number; d: boolean }>();
  private flushScheduled = false;
  /** Operations changed without a notification since the last such notice, per tenant. */
  private quiet = new Map<string, { ids: Set<string>; many: boolean }>();
  private quietTimer: NodeJS.Timeout | undefined;
  private quietSentAt = 0;
  private readonly channel: string;

  constructor(private readonly opts: PgNotifierOptions) {
    this.channel = opts.channel ?? DEFAULT_CHANNEL;
    // LISTEN takes an identifier, which cannot be a bind parameter.
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(this.channel)) throw new Error(`invalid NOTIFY channel name: ${this.channel}`);
  }

  /** Connects and LISTENs; a failure is logged and retried in the background (polling covers meanwhile). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.quietTimer);
    this.quietTimer = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** Called for every committed change on this instance (ChangeBus subscriber). */
  publish(change: OperationChange): void {
    if (this.stopped || change.events.length === 0) return;
    const tenant = change.operation.tenant_id;
    const maxSeq = change.notifications.reduce((m, n) => Math.max(m, n.seq), 0);
    const next = change.operation.next_check_at;
    const due = change.events.some((e) => e.kind === 'created') || (next !== null && next <= Date.now());
    if (maxSeq === 0) this.quietChange(tenant, [change.operation.id]);
    this.feedChange(tenant, maxSeq, due);
  }

  /** Called for every committed change of a live buy on this instance (ChangeBus.subscribeBuys). */
  publishBuy(change: BuyChange): void {
    if (this.stopped || change.events.length === 0) return;
    const tenant = change.buy.tenant_id;
    // Named even beside a notification, as the wake-ups here do (OperationWakes.fromBuy): pages showing its create re-read too.
    this.quietChange(tenant, [change.buy.id, change.buy.operation_id]);
    this.feedChange(tenant, change.notifications.reduce((m, n) => Math.max(m, n.seq), 0), false);
  }

  /** Changes found after commit to concern these ids (e.g. the buy an operation's commit changed): told like a change without a notification. */
  publishIds(tenantId: string, ids: string[]): void {
    if (this.stopped || ids.length === 0) return;
    this.quietChange(tenantId, ids);
  }

  /** A notification for other instances' streams, or work for their schedulers: told in the next batch. */
  private feedChange(tenant: string, maxSeq: number, due: boolean): void {
    if (maxSeq === 0 && !due) return;
    const prev = this.batch.get(tenant);
    this.batch.set(tenant, { s: Math.max(prev?.s ?? 0, maxSeq), d: (prev?.d ?? false) || due });
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => void this.flush());
    }
  }

  /** Collects a change without a notification; sent at most once per interval (a trailing send keeps the last). */
  private quietChange(tenant: string, ids: string[]): void {
    let entry = this.quiet.get(tenant);
    if (!entry) this.quiet.set(tenant, (entry = { ids: new Set(), many: false }));
    for (const id of ids) {
      if (entry.ids.size >= MAX_NOTICE_IDS && !entry.ids.has(id)) entry.many = true;
      else entry.ids.add(id);
    }
    if (this.quietTimer) return;
    const wait = Math.max(0, this.quietSentAt + (this.opts.operationNoticeMs ?? 250) - Date.now());
    this.quietTimer = setTimeout(() => void this.flushQuiet(), wait);
    this.quietTimer.unref();
  }

  private async flushQuiet(): Promise<void> {
    this.quietTimer = undefined;
    this.quietSentAt = Date.now();
    const quiet = this.quiet;
    this.quiet = new Map();
    for (const [tenant, { ids, many }] of quiet) {
      const wire: Wire = { i: this.opts.instanceId, t: tenant, s: 0, o: [...ids], ...(many ? { m: 1 as const } : {}) };
      await this.notify(wire);
    }
  }

  private async notify(wire: Wire): Promise<void> {
    if (this.stopped) return;
    try {
      // Through the pool, not the LISTEN connection, so a reconnecting listener does not hold notices up.
      await sql`SELECT pg_notify(${this.channel}, ${JSON.stringify(wire)})`.execute(this.opts.db.kysely);
    } catch (err) {
      if (!this.stopped) this.opts.log.debug({ err }, 'pg-notify: NOTIFY failed; other instances catch up by polling');
    }
  }

  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const batch = this.batch;
    this.batch = new Map();
    for (const [tenant, { s, d }] of batch) {
      await this.notify({ i: this.opts.instanceId, t: tenant, s, ...(d ? { d: 1 as const } : {}) });
    }
  }

  private receive(payload: string | undefined): void {
    let wire: Wire;
    try {
      wire = JSON.parse(payload ?? '');
    } catch {
      return;
    }
    if (!wire || typeof wire.t !== 'string' || wire.i === this.opts.instanceId) return;
    const ids = Array.isArray(wire.o) ? wire.o.filter((x): x is string => typeof x === 'string').slice(0, MAX_NOTICE_IDS) : [];
    this.opts.onRemote({ tenantId: wire.t, maxSeq: Number(wire.s) || 0, due: wire.d === 1, operationIds: ids, manyOperations: wire.m === 1 });
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    // Bounded, like the pool's: a server that does not answer must not hold the reconnect loop.
    const client = new pg.Client({ connectionString: this.opts.url, connectionTimeoutMillis: DEFAULT_CONNECT_TIMEOUT_MS, keepAlive: true });
    let lost = false;
    const onLost = (err?: unknown) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      if (!this.stopped) {
        // Said once per loss; the attempts that fail while the database is away are not news.
        if (this.failures === 0) this.opts.log.warn({ err: errorText(err) }, 'pg-notify: LISTEN connection lost; reconnecting');
        else this.opts.log.debug({ err: errorText(err) }, 'pg-notify: reconnecting LISTEN failed; trying again');
        this.scheduleReconnect();
      }
    };
    client.on('notification', (msg) => {
      if (msg.channel === this.channel) this.receive(msg.payload);
    });
    client.on('error', onLost);
    client.on('end', () => onLost());
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      onLost(err);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    if (this.failures > 0) this.opts.log.info('pg-notify: LISTEN connection back');
    this.failures = 0;
    if (this.everConnected) this.opts.onReconnect();
    this.everConnected = true;
  }

  private scheduleReconnect(): void {
    clearTimeout(this.retryTimer);
    const base = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** this.failures++);
    const delay = base / 2 + Math.random() * (base / 2);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }

  /** For tests: whether the LISTEN connection is up. */
  get listening(): boolean {
    return this.client !== undefined;
  }
}
