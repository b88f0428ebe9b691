/**
 * Outbound notifications to subscriptions (docs/ARCHITECTURE.md, Telling users): at least once,
 * signed per Standard Webhooks, in order per operation, retried over the
 * configured schedule; durable and shared between instances.
 *
 * One loop per process: fan out new outbox rows into delivery rows (exactly
 * once per subscription and notification, whoever does it), claim due
 * deliveries with a lease, send them with bounded concurrency, record each
 * attempt under the lease. Everything it knows is in the database, so a restart
 * or a second instance simply carries on. Wake-ups (a committed change on this
 * instance, a NOTIFY from another, a finished delivery) only make it look
 * sooner; the tick covers a lost one.
 */
import type { Logger } from 'pino';
import { judgeAttempt, type AttemptResult } from '../domain/subscription-retry.js';
import type { Clock } from '../engine/clock.js';
import type { DatabaseOutage } from '../engine/database-outage.js';
import type { Store } from '../store/index.js';
import type { SecretBox } from '../store/secret-box.js';
import type { DeliveryRow } from '../store/subscription-deliveries-repo.js';
import type { SubscriptionRow } from '../store/subscriptions-repo.js';
import type { EventHorizon } from './event-horizon.js';
import { slackMessage } from './slack-format.js';
import { signWebhook } from './webhook-signer.js';
import { WebhookPoster } from './webhook-post.js';

export interface DispatcherOptions {
  instanceId: string;
  /** Deliveries sent at once by this process. */
  concurrency: number;
  /** Longest sleep without a wake-up. */
  tickMs: number;
  /** One attempt's deadline. */
  timeoutMs: number;
  /** Delays between attempts; used up → failed. */
  retryScheduleMs: readonly number[];
  allowPrivateNetwork: boolean;
  /** Base of the operation links in Slack messages. */
  publicUrl?: string;
  /** The database's absence: a pause (counted, logged once), not an error per pass. */
  outage?: DatabaseOutage;
}

/** Shortest time between two passes when wake-ups keep coming. */
const MIN_PASS_GAP_MS = 25;

interface Batch {
  subs: Map<string, SubscriptionRow>;
  secrets: Map<string, string[]>;
  bodies: Map<string, string>;
}

export class SubscriptionDispatcher {
  private running = false;
  private dirty = false;
  private inFlight = 0;
  private wakeResolve: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private readonly active = new Set<Promise<void>>();
  /**
   * One controller per attempt in flight, aborted by stop(). Not one shared signal: every
   * attempt would hang a listener on it, and more than ten at once made Node print
   * MaxListenersExceededWarning.
   */
  private readonly attempts = new Set<AbortController>();
  private readonly poster: WebhookPoster;
  /** Longer than any attempt can take, so a live attempt never loses its lease. */
  private readonly leaseMs: number;

  constructor(
    private readonly store: Store,
    private readonly secretBox: SecretBox,
    private readonly horizon: EventHorizon,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: DispatcherOptions,
  ) {
    this.poster = new WebhookPoster(options.allowPrivateNetwork);
    this.leaseMs = options.timeoutMs + 30_000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Look again now (new notifications, a delivery finished, a redelivery asked for). */
  wake(): void {
    this.dirty = true;
    this.wakeResolve?.();
  }

  /** Stops claiming, cuts attempts in flight short (they are due again at once, for whoever runs next) and waits for their records. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
    for (const inFlight of this.attempts) inFlight.abort();
    await Promise.allSettled([...this.active]);
    this.poster.close();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.dirty = false;
      const passStartedAt = Date.now();
      let claimed = 0;
      let room = 0;
      let active = 0;
      let pauseMs: number | undefined;
      try {
        ({ active } = await this.store.subscriptions.fanOut(() => this.horizon.current(), this.clock.now()));
        // No active subscription means nothing can be due (disabling or deleting fails what was
        // pending): skip the claim, a write transaction on SQLite's hot path.
        room = this.options.concurrency - this.inFlight;
        claimed = room > 0 && active > 0 ? await this.claimAndDispatch(room) : 0;
        this.options.outage?.succeeded();
      } catch (err) {
        if (this.options.outage?.failed('subscriptions', err)) pauseMs = this.options.outage.pauseMs();
        else if (this.running) this.log.error({ err }, 'subscriptions: fan-out or claim failed; trying again');
      }
      if (!this.running) break;
      if (pauseMs !== undefined) {
        await this.sleep(pauseMs);
        continue;
      }
      if (claimed > 0 && claimed === room) {
        await new Promise((r) => setImmediate(r));
        continue;
      }
      if (this.dirty) {
        // Woken during the pass. Under load every committed change wakes us: passes at most
        // every MIN_PASS_GAP_MS, so a busy instance spends a bounded share of its database on this.
        const wait = passStartedAt + MIN_PASS_GAP_MS - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        continue;
      }
      await this.sleep(active > 0 ? await this.sleepMs() : this.options.tickMs);
    }
  }

  private async sleepMs(): Promise<number> {
    const now = this.clock.now();
    const next = await this.store.subscriptionDeliveries.nextDueAt(now).catch(() => null);
    if (next === null) return this.options.tickMs;
    return Math.max(0, Math.min(this.options.tickMs, next - now));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeResolve = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeResolve = done;
    });
  }

  private async claimAndDispatch(room: number): Promise<number> {
    const rows = await this.store.subscriptionDeliveries.claimDue(this.options.instanceId, this.clock.now(), this.leaseMs, room);
    if (rows.length === 0) return 0;
    const batch = await this.loadBatch(rows);
    for (const row of rows) this.dispatch(row, batch);
    return rows.length;
  }

  /** What the claimed rows need, in three queries for the whole batch. */
  private async loadBatch(rows: DeliveryRow[]): Promise<Batch> {
    const subIds = [...new Set(rows.map((r) => r.subscription_id))];
    const [subs, secretRows, bodies] = await Promise.all([
      this.store.subscriptions.byIds(subIds),
      this.store.subscriptions.activeSecrets(subIds, this.clock.now()),
      this.store.subscriptions.notificationBodies([...new Set(rows.map((r) => r.notification_id))]),
    ]);
    const secrets = new Map<string, string[]>();
    for (const s of secretRows) secrets.set(s.subscription_id, [...(secrets.get(s.subscription_id) ?? []), this.secretBox.open(s.secret_enc)]);
    return { subs: new Map(subs.map((s) => [s.id, s])), secrets, bodies };
  }

  private dispatch(row: DeliveryRow, batch: Batch): void {
    this.inFlight++;
    const task = this.deliver(row, batch)
      .catch((err) => {
        // An attempt whose record the database's absence lost is sent again when its lease expires (at least once).
        if (this.options.outage?.failed('subscriptions', err)) return;
        this.log.error({ err, delivery_id: row.id }, 'subscriptions: delivery failed unexpectedly; its lease will expire and it will be retried');
      })
      .finally(() => {
        this.inFlight--;
        this.active.delete(task);
        this.wake();
      });
    this.active.add(task);
  }

  private async deliver(row: DeliveryRow, batch: Batch): Promise<void> {
    const lease = { id: row.id, owner: this.options.instanceId, epoch: row.lease_epoch };
    const sub = batch.subs.get(row.subscription_id);
    const body = batch.bodies.get(row.notification_id);
    const startedAt = this.clock.now();
    const started = performance.now();
    let result: AttemptResult;
    const inFlight = new AbortController();
    this.attempts.add(inFlight);
    try {
      if (!sub || !body) throw new Error(!sub ? 'subscription not found' : 'notification not found');
      const payload = sub.format === 'slack' ? JSON.stringify(slackMessage(JSON.parse(body), this.options.publicUrl)) : body;
      const headers = signWebhook(row.notification_id, new Date(startedAt), payload, batch.secrets.get(sub.id) ?? []);
      result = await this.poster.post(new URL(this.secretBox.open(sub.url_enc)), { ...headers }, payload, {
        timeoutMs: this.options.timeoutMs,
        signal: inFlight.signal,
      });
    } catch (err) {
      // Not the receiver's doing, but retried like a failure all the same: it stays visible and ends failed.
      result = { kind: 'error', error: `could not send: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      this.attempts.delete(inFlight);
    }
    const now = this.clock.now();
    const attempt = {
      attempt: row.attempt_count,
      startedAt,
      durationMs: performance.now() - started,
      httpStatus: result.kind === 'response' ? result.status : null,
      error: result.kind === 'error' ? result.error : null,
    };
    if (result.kind === 'error' && result.error === 'interrupted') {
      await this.store.subscriptionDeliveries.interrupt(lease, attempt, now);
      return;
    }
    const verdict = judgeAttempt(result, row.schedule_step, this.options.retryScheduleMs, now, () => this.clock.random());
    const recorded = await this.store.subscriptionDeliveries.finish(lease, attempt, verdict, now, (trx, reason) =>
      this.store.subscriptions.disableIn(trx, row.subscription_id, reason, now),
    );
    const logFields = { delivery_id: row.id, subscription_id: row.subscription_id, notification_id: row.notification_id, attempt: row.attempt_count, http_status: attempt.httpStatus, error: attempt.error, outcome: verdict.outcome };
    if (!recorded) this.log.warn(logFields, 'subscriptions: lease lost before the attempt was recorded; another worker owns the delivery');
    else if (verdict.outcome === 'disabled') this.log.warn(logFields, 'subscriptions: receiver answered 410 Gone; subscription disabled');
    else if (verdict.outcome === 'failed') this.log.warn(logFields, 'subscriptions: delivery failed after the last retry');
    else this.log.debug(logFields, 'subscriptions: attempt recorded');
  }
}
