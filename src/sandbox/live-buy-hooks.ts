/**
 * Test hooks on a sandbox seller's live media buys (`seller.reporting`):
 * drive a buy's flight by hand and make its reporting misbehave the ways a
 * buyer must survive. With the clock stopped (`reportClock: false`, or
 * `stopClock()`), these are the only things that move a buy, so tests are
 * deterministic. Every hook that sends resolves once the receiver has
 * answered (or the retries ran out), with the fire's record. An unknown
 * media_buy_id throws.
 */
import type { PackageFigures } from './delivery.js';
import type { LiveBuys } from './live-buys.js';
import { isTerminalBuyStatus, SELLER_ACTOR, type BookedMediaBuy } from './media-buy-book.js';
import { deliveryRow, periodFigures, restatedFigures, type ReportBodyStyle } from './report-body.js';
import type { FireRecord } from './reporting.js';

export interface ReportingHooks {
  /** Stops the flight clock: no buy moves by itself (status steps, ticks) until startClock(). */
  stopClock(): void;
  /** Starts it again: every live buy's next step comes a full step from now. */
  startClock(): void;
  clockRunning(): boolean;
  /**
   * Ticks the buy now: delivers its next period and reports it (`final` for
   * the last one, which completes the buy). A pending buy is moved to active
   * first. Undefined when the buy has no reporting_webhook (it still delivers)
   * or has ended. Throws for a buy still awaiting creatives.
   */
  fireNow(mediaBuyId: string, opts?: { style?: ReportBodyStyle }): Promise<FireRecord | undefined>;
  /** Ticks the buy but loses the report: its sequence number is used up and nothing is sent, so the next fire shows a gap. */
  skipSequenceNumber(mediaBuyId: string): Promise<FireRecord>;
  /** No more fires for the buy (true), or fires again (false). It keeps delivering; get_media_buy_delivery still answers. */
  goSilent(mediaBuyId: string, silent?: boolean): void;
  /** Sends the buy's last fire again: the same body and idempotency_key (a duplicate delivery). */
  resendLastFire(mediaBuyId: string): Promise<FireRecord>;
  /**
   * Restates a delivered period (default: the latest) with new figures (each
   * package's spend × `factor`, default 0.9): the book changes, so
   * get_media_buy_delivery agrees, and an `adjusted` fire (rows
   * `is_adjusted: true`) with the next sequence number carries them.
   */
  sendAdjusted(mediaBuyId: string, opts?: { periodIndex?: number; factor?: number }): Promise<FireRecord>;
  /** The same as a `window_update` (rows `measurement_window: "c3"`, `supersedes_window: "live"`); `factor` defaults to 1.05. */
  sendWindowUpdate(mediaBuyId: string, opts?: { periodIndex?: number; factor?: number }): Promise<FireRecord>;
  /** The buy's next fire (whatever sends it) goes out in the 3.1 envelope style. */
  envelopeNextFire(mediaBuyId: string): void;
  /**
   * Sends what the buy's next fire would be, badly signed: HMAC with a wrong
   * secret, a wrong Bearer token, or an RFC 9421 signature by a key that is
   * not in the seller's JWKS. A forgery, not a report: the buy does not move
   * and no sequence number is used, so the next real fire carries the same ones.
   */
  sendBadlySignedFire(mediaBuyId: string): Promise<FireRecord>;
  /**
   * One fire to the FIRST buy's webhook (its auth, its sequence) naming all
   * these buys, each of which delivers its next period (as a tick does, but
   * only this fire reports it). The fire's reporting_period is the first
   * buy's: name buys with the same flight. Buys of other accounts may be named.
   */
  fireCombined(mediaBuyIds: string[]): Promise<FireRecord>;
  /**
   * Ticks the buy and reports the period to the create request's
   * push_notification_config instead of its reporting_webhook, as some sellers
   * do: a 3.1 envelope with the operation's `operation_id`, the create task's
   * `task_id` (if it had one) and `task_type` `media_buy_delivery`, or
   * `update_media_buy` with `aggregated_totals` in `result` (the Prebid sales
   * agent's way). Authenticated as that webhook's operation webhooks are; the
   * buy's report sequence goes on.
   */
  fireViaPushNotificationConfig(mediaBuyId: string, opts?: { taskType?: 'media_buy_delivery' | 'update_media_buy' }): Promise<FireRecord>;
  /** Ticks the buy until its flight is over; the fires in order (the last one `final`). */
  runToEnd(mediaBuyId: string): Promise<FireRecord[]>;
  /** Assigns creatives: a buy of sandbox_awaiting_creatives may leave pending_creatives. */
  assignCreatives(mediaBuyId: string): void;
  /** The seller cancels the buy (canceled_by: seller); its final fire follows. */
  cancelAsSeller(mediaBuyId: string, reason?: string): Promise<FireRecord | undefined>;
  /** The seller rejects a pending buy; its final fire follows. Throws once it is live. */
  rejectAsSeller(mediaBuyId: string, reason?: string): Promise<FireRecord | undefined>;
  /** Every fire so far (lost, silenced, forged and duplicate ones too), optionally for one buy. */
  fires(mediaBuyId?: string): FireRecord[];
  /** The buy as the seller holds it now (a copy): status, revision, history, flight, delivered periods. */
  buy(mediaBuyId: string): BookedMediaBuy | undefined;
  /** Resolves when no fire (or retry) is in flight. */
  settled(): Promise<void>;
}

export function reportingHooks(live: LiveBuys): ReportingHooks {
  const find = (id: string): BookedMediaBuy => {
    const buy = live.book.find(id);
    if (!buy) throw new Error(`the sandbox seller has no media buy ${id}`);
    return buy;
  };
  const withWebhook = (id: string): BookedMediaBuy & Required<Pick<BookedMediaBuy, 'reporting_webhook'>> => {
    const buy = find(id);
    if (!buy.reporting_webhook) throw new Error(`media buy ${id} has no reporting_webhook`);
    return buy as BookedMediaBuy & Required<Pick<BookedMediaBuy, 'reporting_webhook'>>;
  };
  const mustSend = (p: Promise<FireRecord> | undefined, id: string): Promise<FireRecord> => {
    if (!p) throw new Error(`media buy ${id} has nothing left to report`);
    return p;
  };

  const restate = (id: string, kind: 'adjusted' | 'window_update', opts: { periodIndex?: number; factor?: number }, fallback: number): Promise<FireRecord> => {
    const buy = withWebhook(id);
    const index = opts.periodIndex ?? buy.delivered.length - 1;
    const period = buy.delivered.find((d) => d.index === index);
    if (!period) throw new Error(`media buy ${id} has not delivered period ${index}`);
    const figures: Map<string, PackageFigures> = restatedFigures(periodFigures(buy, index), opts.factor ?? fallback);
    period.packages = period.packages.map((p) => ({ package_id: p.package_id, ...(figures.get(p.package_id) ?? p) }));
    period.restated += 1;
    return live.reporter.fire({
      webhook: buy.reporting_webhook,
      mediaBuyIds: [id],
      fields: {
        notification_type: kind,
        ...(!isTerminalBuyStatus(buy.status) && { next_expected_at: live.nextExpectedAt() }),
        reporting_period: { start: period.start, end: period.end },
        rows: [deliveryRow(buy, figures, { through: Date.parse(period.end), restatement: kind })],
      },
    });
  };

  return {
    stopClock: () => live.stopClock(),
    startClock: () => live.startClock(),
    clockRunning: () => live.clockRunning,
    fireNow: async (id, opts = {}) => {
      const buy = find(id);
      if (buy.status === 'pending_creatives' && buy.awaiting_creatives) throw new Error(`media buy ${id} awaits creatives: assignCreatives first`);
      return live.tick(buy, opts);
    },
    skipSequenceNumber: async (id) => {
      const lost = await live.tick(withWebhook(id), { lose: true });
      if (!lost) throw new Error(`media buy ${id} has nothing left to report`);
      return lost;
    },
    goSilent: (id, silent = true) => {
      find(id);
      live.reporter.setSilent(id, silent);
    },
    resendLastFire: async (id) => {
      find(id);
      const record = await live.reporter.resendLast(id);
      if (!record) throw new Error(`media buy ${id} has sent no fire yet`);
      return record;
    },
    sendAdjusted: (id, opts = {}) => restate(id, 'adjusted', opts, 0.9),
    sendWindowUpdate: (id, opts = {}) => restate(id, 'window_update', opts, 1.05),
    envelopeNextFire: (id) => {
      find(id);
      live.reporter.envelopeNext(id);
    },
    sendBadlySignedFire: (id) => {
      // The next period delivered on a detached copy: what the next fire would say, with the real buy untouched.
      const ghost = structuredClone(withWebhook(id));
      while (live.advanceStatus(ghost));
      if (ghost.status !== 'active' && ghost.status !== 'paused') throw new Error(`media buy ${id} has ended`);
      return mustSend(live.report(ghost, live.deliverNext(ghost), { badSignature: true }), id);
    },
    fireCombined: (ids) => {
      const first = withWebhook(ids[0] ?? '');
      const buys = ids.map(find);
      const delivered = buys.map((b) => {
        const d = live.deliverNow(b);
        if (!d) throw new Error(`media buy ${b.media_buy_id} has ended`);
        return d;
      });
      const period = delivered[0]!;
      return live.reporter.fire({
        webhook: first.reporting_webhook,
        mediaBuyIds: ids,
        fields: {
          notification_type: isTerminalBuyStatus(first.status) ? 'final' : 'scheduled',
          ...(!isTerminalBuyStatus(first.status) && { next_expected_at: live.nextExpectedAt() }),
          reporting_period: { start: period.start, end: period.end },
          rows: buys.map((b, i) => deliveryRow(b, periodFigures(b, delivered[i]!.index), { through: Date.parse(delivered[i]!.end) })),
        },
      });
    },
    fireViaPushNotificationConfig: async (id, opts = {}) => {
      const buy = find(id);
      const push = buy.push_notification_config;
      if (!push) throw new Error(`media buy ${id} was bought without a push_notification_config`);
      const delivered = live.deliverNow(buy);
      if (!delivered) throw new Error(`media buy ${id} has ended`);
      const taskType = opts.taskType ?? 'media_buy_delivery';
      const row = deliveryRow(buy, periodFigures(buy, delivered.index), { through: Date.parse(delivered.end) });
      const totals = row.totals as { impressions: number; spend: number };
      const final = isTerminalBuyStatus(buy.status);
      return live.reporter.fire({
        webhook: {
          url: push.url,
          reporting_frequency: buy.flight.frequency,
          ...(push.token !== undefined && { token: push.token }),
          ...(push.authentication?.credentials !== undefined && {
            authentication: { schemes: [push.authentication.schemes[0] as 'HMAC-SHA256' | 'Bearer'], credentials: push.authentication.credentials },
          }),
        },
        mediaBuyIds: [id],
        style: 'envelope',
        envelope: { ...(push.operation_id !== undefined && { operation_id: push.operation_id }), ...(buy.task_id && { task_id: buy.task_id }), task_type: taskType },
        fields: {
          notification_type: final ? 'final' : 'scheduled',
          ...(!final && { next_expected_at: live.nextExpectedAt() }),
          reporting_period: { start: delivered.start, end: delivered.end },
          rows: [row],
          ...(taskType === 'update_media_buy' && { aggregated_totals: { impressions: totals.impressions, spend: totals.spend, media_buy_count: 1 } }),
        },
      });
    },
    runToEnd: async (id) => {
      const buy = find(id);
      const fires: FireRecord[] = [];
      while (!isTerminalBuyStatus(buy.status)) {
        if (buy.status === 'pending_creatives' && buy.awaiting_creatives) throw new Error(`media buy ${id} awaits creatives`);
        const fire = await live.tick(buy);
        if (fire) fires.push(fire);
      }
      return fires;
    },
    assignCreatives: (id) => live.assignCreatives(find(id)),
    cancelAsSeller: async (id, reason) => {
      const buy = find(id);
      if (isTerminalBuyStatus(buy.status)) throw new Error(`media buy ${id} is already ${buy.status}`);
      return live.end(buy, { status: 'canceled', by: 'seller', actor: SELLER_ACTOR, ...(reason !== undefined && { reason }) });
    },
    rejectAsSeller: async (id, reason) => {
      const buy = find(id);
      if (buy.status !== 'pending_creatives' && buy.status !== 'pending_start') throw new Error(`media buy ${id} is ${buy.status}; only a pending buy can be rejected`);
      return live.end(buy, { status: 'rejected', by: 'seller', actor: SELLER_ACTOR, ...(reason !== undefined && { reason }) });
    },
    fires: (id) => live.reporter.list(id),
    buy: (id) => {
      const buy = live.book.find(id);
      return buy && structuredClone(buy);
    },
    settled: () => live.reporter.drain(),
  };
}
