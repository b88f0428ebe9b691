/**
 * The sandbox seller's book of media buys it has actually created: what
 * `get_media_buys`, `get_media_buy_delivery` and the reporting fires read,
 * and what the flight (live-buys.ts) and `update_media_buy` change.
 *
 * Every change of state is a history entry with a new revision, as the
 * spec's `get_media_buys` history describes (created, activated, paused,
 * resumed, completed, canceled, rejected…). Terminal statuses are absorbing.
 */
import { randomUUID } from 'node:crypto';
import type { DeliveryCurve, PackageFigures } from './delivery.js';
import type { Flight } from './flight.js';
import { findSandboxProduct } from './products.js';
import type { ReportingWebhook } from './reporting-webhook.js';
import type { PushNotificationConfig } from './tasks.js';
import { isPlainObject } from './wire.js';

export const MEDIA_BUY_STATUSES = ['pending_creatives', 'pending_start', 'active', 'paused', 'completed', 'rejected', 'canceled'] as const;
export type MediaBuyStatus = (typeof MEDIA_BUY_STATUSES)[number];
const TERMINAL: ReadonlySet<MediaBuyStatus> = new Set(['completed', 'rejected', 'canceled']);
export const isTerminalBuyStatus = (s: MediaBuyStatus): boolean => TERMINAL.has(s);

export interface BookedPackage {
  package_id: string;
  product_id: string;
  /** 0 when the buyer gave none (then `get_media_buys` shows none, as it was sent). */
  budget: number;
  budget_given: boolean;
  pricing_option_id?: string;
  buyer_ref?: unknown;
  paused: boolean;
  curve: DeliveryCurve;
}

export interface DeliveredPackage extends PackageFigures {
  package_id: string;
}

/** One period the buy has delivered (0-based `index` into `flight.periods`). */
export interface DeliveredPeriod {
  index: number;
  start: string;
  end: string;
  packages: DeliveredPackage[];
  /** How many times a test hook restated it (adjusted or window_update). */
  restated: number;
}

export interface HistoryEntry {
  revision: number;
  timestamp: string;
  actor: string;
  action: string;
  summary?: string;
  package_id?: string;
}

export interface BookedMediaBuy {
  media_buy_id: string;
  account?: unknown;
  status: MediaBuyStatus;
  currency: string;
  total_budget: number;
  /** As the buyer sent them (`asap` becomes the booking time), for lookups by natural key. */
  start_time: string;
  end_time?: unknown;
  packages: BookedPackage[];
  created_at: string;
  updated_at: string;
  revision: number;
  history: HistoryEntry[];
  canceled_at?: string;
  canceled_by?: 'buyer' | 'seller';
  cancellation_reason?: string;
  /** The flight the sandbox delivers over (flight.ts). */
  flight: Flight;
  delivered: DeliveredPeriod[];
  /** Where reports go; absent: the buyer polls get_media_buy_delivery. Holds the buyer's credential. */
  reporting_webhook?: ReportingWebhook;
  /** The create request's push_notification_config (some sellers report delivery there too). */
  push_notification_config?: PushNotificationConfig;
  /** The create_media_buy task that made the buy, when it was asynchronous. */
  task_id?: string;
  /** Stays pending_creatives until creatives are assigned (products' `awaitsCreatives`). */
  awaiting_creatives: boolean;
}

export const SELLER_ACTOR = 'sandbox-seller';

export class MediaBuyBook {
  private readonly buys = new Map<string, BookedMediaBuy>();

  /** Books a created buy; `flightFor` decides its flight from the request (live-buys.ts). */
  record(
    request: Record<string, unknown>,
    mediaBuy: Record<string, unknown>,
    flightFor: (request: Record<string, unknown>, bookedAt: number) => Flight,
    channels: { reporting?: ReportingWebhook; push?: PushNotificationConfig; taskId?: string } = {},
  ): BookedMediaBuy {
    const bookedAt = Date.now();
    const now = new Date(bookedAt).toISOString();
    const packages = (Array.isArray(mediaBuy.packages) ? mediaBuy.packages : []).filter(isPlainObject).map((p): BookedPackage => {
      const product = findSandboxProduct(p.product_id);
      return {
        package_id: String(p.package_id ?? `pkg_${randomUUID().slice(0, 8)}`),
        product_id: String(p.product_id),
        budget: typeof p.budget === 'number' && p.budget > 0 ? p.budget : 0,
        budget_given: p.budget !== undefined,
        ...(typeof p.pricing_option_id === 'string' && { pricing_option_id: p.pricing_option_id }),
        ...(p.buyer_ref !== undefined && { buyer_ref: p.buyer_ref }),
        paused: false,
        curve: product?.delivery ?? 'linear',
      };
    });
    const flight = flightFor(request, bookedAt);
    const buy: BookedMediaBuy = {
      media_buy_id: String(mediaBuy.media_buy_id),
      ...(request.account !== undefined && { account: structuredClone(request.account) }),
      status: 'pending_creatives',
      currency: 'USD',
      total_budget: packages.reduce((sum, p) => sum + p.budget, 0),
      start_time: typeof request.start_time === 'string' && request.start_time !== 'asap' ? request.start_time : flight.start,
      ...(request.end_time !== undefined && { end_time: request.end_time }),
      packages,
      created_at: now,
      updated_at: now,
      revision: typeof mediaBuy.revision === 'number' ? mediaBuy.revision : 1,
      history: [],
      flight,
      delivered: [],
      ...(channels.reporting && { reporting_webhook: channels.reporting }),
      ...(channels.push && { push_notification_config: channels.push }),
      ...(channels.taskId && { task_id: channels.taskId }),
      awaiting_creatives: packages.some((p) => findSandboxProduct(p.product_id)?.awaitsCreatives === true),
    };
    buy.history.push({ revision: buy.revision, timestamp: now, actor: SELLER_ACTOR, action: 'created' });
    this.buys.set(buy.media_buy_id, buy);
    return buy;
  }

  find(mediaBuyId: string): BookedMediaBuy | undefined {
    return this.buys.get(mediaBuyId);
  }

  all(): BookedMediaBuy[] {
    return [...this.buys.values()];
  }

  /**
   * Records a change: a new revision and a history entry, and the new status
   * if there is one. False (and nothing changes) once the buy is terminal.
   */
  change(buy: BookedMediaBuy, entry: { action: string; actor: string; summary?: string; package_id?: string }, status?: MediaBuyStatus): boolean {
    if (isTerminalBuyStatus(buy.status)) return false;
    const now = new Date().toISOString();
    if (status) buy.status = status;
    buy.revision += 1;
    buy.updated_at = now;
    buy.history.push({ revision: buy.revision, timestamp: now, ...entry });
    return true;
  }

  /** Canceled stays in the book (a real seller keeps the record), with when, by whom and why. */
  cancel(buy: BookedMediaBuy, by: 'buyer' | 'seller', actor: string, reason?: string): boolean {
    if (!this.change(buy, { action: 'canceled', actor, ...(reason !== undefined && { summary: reason }) }, 'canceled')) return false;
    buy.canceled_at = buy.updated_at;
    buy.canceled_by = by;
    if (reason !== undefined) buy.cancellation_reason = reason;
    return true;
  }

  /** Buys of the account in the request (by account_id, or all when none is given), optionally by id. */
  list(args: Record<string, unknown>): BookedMediaBuy[] {
    const ids = Array.isArray(args.media_buy_ids) ? new Set(args.media_buy_ids.map(String)) : undefined;
    return this.all().filter((b) => sameAccount(args.account, b) && (!ids || ids.has(b.media_buy_id)));
  }
}

/** Whether a buy belongs to the request's account (any buy when the request names none). */
export function sameAccount(account: unknown, buy: BookedMediaBuy): boolean {
  const accountId = isPlainObject(account) ? account.account_id : undefined;
  return accountId === undefined || (isPlainObject(buy.account) && buy.account.account_id === accountId);
}

/** Spend and impressions of each package over the delivered periods. */
export function lifetimeByPackage(buy: BookedMediaBuy): Map<string, { spend: number; impressions: number; clicks: number }> {
  const sums = new Map(buy.packages.map((p) => [p.package_id, { spend: 0, impressions: 0, clicks: 0 }]));
  for (const period of buy.delivered) {
    for (const d of period.packages) {
      const s = sums.get(d.package_id);
      if (!s) continue;
      s.spend = Math.round((s.spend + d.spend) * 100) / 100;
      s.impressions += d.impressions;
      s.clicks += d.clicks;
    }
  }
  return sums;
}
