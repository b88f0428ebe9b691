/**
 * Media buys after their purchase: the sandbox's accelerated flight clock.
 *
 * A booked buy waits `statusStepMs` in `pending_creatives` (longer, until
 * creatives are assigned, for products that await them), `statusStepMs` in
 * `pending_start`, then turns `active`. From then on every
 * `reportIntervalMs` of wall-clock time is one tick: the buy delivers its
 * next reporting period (flight.ts, delivery.ts) and, if it has a
 * `reporting_webhook`, reports it (`scheduled`). The tick that delivers the
 * last period completes the buy, and that period's report is the `final`
 * one; then silence. A paused buy keeps ticking (its periods deliver
 * nothing). A cancel (or a seller's reject) ends the buy at once and sends
 * a `final` report of the period in progress, cut at the cancel point.
 *
 * The clock can be stopped and started (`reportClock: false` starts it
 * stopped); with it stopped nothing moves by itself and tests drive buys
 * with the hooks in live-buy-hooks.ts, deterministically.
 *
 * Creatives synced to the seller are reviewed on their own clock
 * (creative-library.ts, `creativeReviewMs`): a buy that awaits creatives
 * leaves `pending_creatives` for `pending_start` as soon as every one of
 * its packages has an approved creative, whether or not the flight clock runs.
 */
import { checkPushConfig } from './behaviours.js';
import { CreativeLibrary, type LibraryCreative } from './creative-library.js';
import { figuresFor, periodSpend } from './delivery.js';
import { flightOf, isoPeriod } from './flight.js';
import {
  isTerminalBuyStatus,
  lifetimeByPackage,
  MediaBuyBook,
  SELLER_ACTOR,
  type BookedMediaBuy,
  type DeliveredPeriod,
  type MediaBuyStatus,
} from './media-buy-book.js';
import { SANDBOX_CPM } from './products.js';
import { deliveryRow, periodFigures, type ReportBodyStyle } from './report-body.js';
import type { FireRecord, Reporter } from './reporting.js';
import { checkReportingWebhook, type ReportingWebhook } from './reporting-webhook.js';

export interface LiveBuyOptions {
  /** Wall-clock ms between two ticks of a buy's flight (one reporting period each, whatever the frequency). Default 10 000. */
  reportIntervalMs?: number;
  /** The most reporting periods a flight is cut into (flight.ts). Default 6: a flight ends about a minute after it starts. */
  flightPeriods?: number;
  /** Wall-clock ms a buy spends in pending_creatives, and again in pending_start. Default 1000. */
  statusStepMs?: number;
  /** Whether the flight clock runs from the start. Default true. */
  reportClock?: boolean;
  /** Body style of reporting fires: 'bare' (AdCP 3.0, default) or 'envelope' (3.1). */
  reportBodyStyle?: ReportBodyStyle;
  /** Wall-clock ms from a creative's sync to its review (creative-library.ts). Default 2000. */
  creativeReviewMs?: number;
  /**
   * The per-item `status` every sync_creatives reply gives, whatever the review will say: a
   * seller optimistic in that advisory field (the spec forbids buyers to gate spend on it).
   * Default: each creative's own (`pending_review` after a sync).
   */
  creativeAdvisoryStatus?: 'approved' | 'pending_review' | 'processing';
}

export type ResolvedLiveBuyOptions = Required<Omit<LiveBuyOptions, 'creativeAdvisoryStatus'>> & Pick<LiveBuyOptions, 'creativeAdvisoryStatus'>;

export function resolveLiveBuyOptions(o: LiveBuyOptions): ResolvedLiveBuyOptions {
  const positive = (name: string, v: number | undefined, fallback: number, min: number): number => {
    if (v === undefined) return fallback;
    if (!Number.isInteger(v) || v < min) throw new Error(`${name} must be an integer of at least ${min}, got ${v}`);
    return v;
  };
  return {
    reportIntervalMs: positive('reportIntervalMs', o.reportIntervalMs, 10_000, 1),
    flightPeriods: positive('flightPeriods', o.flightPeriods, 6, 1),
    statusStepMs: positive('statusStepMs', o.statusStepMs, 1000, 0),
    reportClock: o.reportClock ?? true,
    reportBodyStyle: o.reportBodyStyle ?? 'bare',
    creativeReviewMs: positive('creativeReviewMs', o.creativeReviewMs, 2000, 0),
    ...(o.creativeAdvisoryStatus !== undefined && { creativeAdvisoryStatus: o.creativeAdvisoryStatus }),
  };
}

/** Where a cancel lands in the period in progress when the clock is stopped (no wall time to go by). */
const CANCEL_POINT_WITHOUT_CLOCK = 0.5;

export class LiveBuys {
  readonly book = new MediaBuyBook();
  /** Creatives synced to this seller and their reviews. */
  readonly creatives: CreativeLibrary;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Wall-clock ms of each buy's last step, to place a cancel within its period. */
  private readonly lastStepAt = new Map<string, number>();
  private running: boolean;

  constructor(
    readonly opts: ResolvedLiveBuyOptions,
    readonly reporter: Reporter,
  ) {
    this.running = opts.reportClock;
    this.creatives = new CreativeLibrary(opts.creativeReviewMs, (c) => this.creativeReviewed(c));
  }

  /** A review ended: each buy the creative is assigned to starts once all its packages have an approved creative. */
  private creativeReviewed(c: LibraryCreative): void {
    for (const id of new Set(c.assignments.map((a) => a.media_buy_id))) {
      const buy = this.book.find(id);
      if (buy && this.creatives.approvedForAllPackages(c.account_id, buy)) this.creativesApproved(buy);
    }
  }

  /** The buy's creatives are approved: one that awaits them moves to pending_start now (the clock, if running, goes on from there). */
  creativesApproved(buy: BookedMediaBuy): void {
    if (!buy.awaiting_creatives) return;
    buy.awaiting_creatives = false;
    if (buy.status === 'pending_creatives') this.book.change(buy, { action: 'creatives_approved', actor: SELLER_ACTOR }, 'pending_start');
    this.schedule(buy);
  }

  /** Books a buy the seller just created (its request already checked; `taskId` if it was asynchronous), and starts its life. */
  record(request: Record<string, unknown>, mediaBuy: Record<string, unknown>, taskId?: string): BookedMediaBuy {
    const checked = checkReportingWebhook(request.reporting_webhook);
    const reporting = checked && !('code' in checked) ? checked : undefined;
    const pushChecked = checkPushConfig(request.push_notification_config);
    const push = pushChecked && !('code' in pushChecked) ? pushChecked : undefined;
    const frequency = reporting?.reporting_frequency ?? 'daily';
    const buy = this.book.record(request, mediaBuy, (req, at) => flightOf(req, at, frequency, this.opts.flightPeriods), {
      ...(reporting && { reporting }),
      ...(push && { push }),
      ...(taskId && { taskId }),
    });
    this.schedule(buy);
    return buy;
  }

  get clockRunning(): boolean {
    return this.running;
  }

  stopClock(): void {
    this.running = false;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  /** Every live buy's next step comes a full step from now. */
  startClock(): void {
    if (this.running) return;
    this.running = true;
    for (const buy of this.book.all()) this.schedule(buy);
  }

  close(): void {
    this.stopClock();
    this.creatives.close();
  }

  private schedule(buy: BookedMediaBuy): void {
    const id = buy.media_buy_id;
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
    this.lastStepAt.set(id, Date.now());
    if (!this.running || isTerminalBuyStatus(buy.status)) return;
    if (buy.status === 'pending_creatives' && buy.awaiting_creatives) return;
    const pending = buy.status === 'pending_creatives' || buy.status === 'pending_start';
    const t = setTimeout(() => {
      this.timers.delete(id);
      this.step(buy);
    }, pending ? this.opts.statusStepMs : this.opts.reportIntervalMs);
    t.unref?.();
    this.timers.set(id, t);
  }

  /** One step of the clock: a pending buy moves on; a live one ticks. */
  private step(buy: BookedMediaBuy): void {
    if (buy.status === 'pending_creatives' || buy.status === 'pending_start') {
      this.advanceStatus(buy);
      this.schedule(buy);
      return;
    }
    // A timer has no caller to tell: a failed tick (a bug) is logged, not thrown into the void.
    this.tick(buy).catch((err: unknown) => console.error(`sandbox seller: media buy ${buy.media_buy_id} failed to tick:`, err));
  }

  /** pending_creatives → pending_start → active, one move. False if the buy cannot move (terminal, live, or awaiting creatives). */
  advanceStatus(buy: BookedMediaBuy): boolean {
    if (buy.status === 'pending_creatives') {
      if (buy.awaiting_creatives) return false;
      return this.book.change(buy, { action: 'creatives_approved', actor: SELLER_ACTOR }, 'pending_start');
    }
    if (buy.status === 'pending_start') return this.book.change(buy, { action: 'activated', actor: SELLER_ACTOR }, 'active');
    return false;
  }

  /** The seam for creative review: creatives are assigned, so the buy may leave pending_creatives. */
  assignCreatives(buy: BookedMediaBuy): void {
    if (!buy.awaiting_creatives) return;
    buy.awaiting_creatives = false;
    if (buy.status === 'pending_creatives') this.schedule(buy);
  }

  /**
   * Delivers the buy's next period and reports it: `final` (after the buy
   * turns completed) for the flight's last period. A pending buy is first
   * moved to active. Undefined (nothing happens) once the buy is terminal.
   */
  async tick(buy: BookedMediaBuy, how: { lose?: boolean; style?: ReportBodyStyle } = {}): Promise<FireRecord | undefined> {
    const delivered = this.deliverNow(buy);
    return delivered && this.report(buy, delivered, how);
  }

  /** The delivering half of a tick: a pending buy turns active, then the next period is delivered and the clock restarts from now. */
  deliverNow(buy: BookedMediaBuy): DeliveredPeriod | undefined {
    while (this.advanceStatus(buy));
    if (buy.status !== 'active' && buy.status !== 'paused') return undefined;
    const delivered = this.deliverNext(buy);
    this.schedule(buy);
    return delivered;
  }

  /**
   * Appends the buy's next period, as its curve and pause state decide (only
   * a `live` buy delivers; `fraction` < 1 cuts the period short); the last
   * whole one completes the buy.
   */
  deliverNext(buy: BookedMediaBuy, fraction = 1, live = buy.status === 'active'): DeliveredPeriod {
    const index = buy.delivered.length;
    const planned = buy.flight.periods[index];
    if (!planned) throw new Error(`media buy ${buy.media_buy_id} has delivered its whole flight`);
    const spent = lifetimeByPackage(buy);
    const period = fraction < 1 ? { start: planned.start, end: planned.start + Math.round((planned.end - planned.start) * fraction) } : planned;
    const packages = buy.packages.map((p) => {
      const full = periodSpend({
        budget: p.budget,
        curve: p.curve,
        seed: `${buy.media_buy_id}:${p.package_id}`,
        periods: buy.flight.periods,
        index,
        spentBefore: spent.get(p.package_id)?.spend ?? 0,
        paused: !live || p.paused,
      });
      return { package_id: p.package_id, ...figuresFor(full * fraction, SANDBOX_CPM) };
    });
    const delivered: DeliveredPeriod = { index, ...isoPeriod(period), packages, restated: 0 };
    buy.delivered.push(delivered);
    if (index === buy.flight.periods.length - 1 && fraction === 1) this.book.change(buy, { action: 'completed', actor: SELLER_ACTOR }, 'completed');
    return delivered;
  }

  /** Reports a delivered period to the buy's webhook, if it has one. */
  report(buy: BookedMediaBuy, delivered: DeliveredPeriod, how: { lose?: boolean; style?: ReportBodyStyle; badSignature?: boolean } = {}): Promise<FireRecord> | undefined {
    if (!buy.reporting_webhook) return undefined;
    const final = isTerminalBuyStatus(buy.status);
    return this.reporter.fire({
      webhook: buy.reporting_webhook,
      mediaBuyIds: [buy.media_buy_id],
      fields: {
        notification_type: final ? 'final' : 'scheduled',
        ...(!final && { next_expected_at: this.nextExpectedAt() }),
        reporting_period: { start: delivered.start, end: delivered.end },
        rows: [deliveryRow(buy, periodFigures(buy, delivered.index), { through: Date.parse(delivered.end) })],
      },
      ...how,
    });
  }

  /** When the buyer should expect the next fire, by the wall clock. */
  nextExpectedAt(): string {
    return new Date(Date.now() + this.opts.reportIntervalMs).toISOString();
  }

  setPaused(buy: BookedMediaBuy, paused: boolean, actor: string): boolean {
    if (paused === (buy.status === 'paused')) return false;
    return this.book.change(buy, { action: paused ? 'paused' : 'resumed', actor }, paused ? 'paused' : 'active');
  }

  setPackagePaused(buy: BookedMediaBuy, packageId: string, paused: boolean, actor: string): boolean {
    const pkg = buy.packages.find((p) => p.package_id === packageId);
    if (!pkg || pkg.paused === paused) return false;
    pkg.paused = paused;
    return this.book.change(buy, { action: paused ? 'package_paused' : 'package_resumed', actor, package_id: packageId });
  }

  /** Replaces where (and how) the buy's reports go; its sequence continues. */
  setReportingWebhook(buy: BookedMediaBuy, webhook: ReportingWebhook, actor: string): void {
    buy.reporting_webhook = webhook;
    this.book.change(buy, { action: 'updated_reporting', actor });
  }

  /**
   * Ends a buy before its flight does: canceled (by the buyer or the seller)
   * or, from a pending state, rejected by the seller. The period in progress
   * is delivered up to the cancel point and reported as the `final` one.
   */
  end(buy: BookedMediaBuy, how: { status: Extract<MediaBuyStatus, 'canceled' | 'rejected'>; by: 'buyer' | 'seller'; actor: string; reason?: string }): Promise<FireRecord> | undefined {
    const fraction = this.cancelPoint(buy);
    const wasLive = buy.status === 'active' || buy.status === 'paused';
    const delivering = buy.status === 'active';
    const ended =
      how.status === 'canceled'
        ? this.book.cancel(buy, how.by, how.actor, how.reason)
        : this.book.change(buy, { action: 'rejected', actor: how.actor, ...(how.reason !== undefined && { summary: how.reason }) }, 'rejected');
    if (!ended) return undefined;
    this.schedule(buy);
    if (buy.delivered.length >= buy.flight.periods.length) return undefined;
    if (wasLive) return this.report(buy, this.deliverNext(buy, fraction, delivering));
    // Nothing ran: the final report shows the first period, cut where it ended, empty.
    const first = buy.flight.periods[0]!;
    const empty: DeliveredPeriod = { index: 0, ...isoPeriod({ start: first.start, end: first.start + Math.round((first.end - first.start) * fraction) }), packages: [], restated: 0 };
    return this.report(buy, empty);
  }

  private cancelPoint(buy: BookedMediaBuy): number {
    if (!this.running) return CANCEL_POINT_WITHOUT_CLOCK;
    const since = Date.now() - (this.lastStepAt.get(buy.media_buy_id) ?? Date.now());
    return Math.min(1, Math.max(0.01, since / this.opts.reportIntervalMs));
  }
}
