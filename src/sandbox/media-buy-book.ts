/**
 * The sandbox seller's book of media buys it has actually created, so that
 * `get_media_buys` can answer as a real seller would (the buyer's lookup by
 * natural key after an ambiguous send past the idempotency replay window).
 */
import { isPlainObject } from './wire.js';

export interface BookedMediaBuy {
  media_buy_id: string;
  account?: unknown;
  status: string;
  currency: string;
  total_budget: number;
  start_time?: unknown;
  end_time?: unknown;
  packages: unknown[];
  created_at: string;
  canceled_at?: string;
  cancellation_reason?: string;
}

export class MediaBuyBook {
  private readonly buys: BookedMediaBuy[] = [];

  record(request: Record<string, unknown>, mediaBuy: Record<string, unknown>): void {
    const packages = Array.isArray(mediaBuy.packages) ? mediaBuy.packages : [];
    const total = packages.reduce((sum: number, p) => sum + (isPlainObject(p) && typeof p.budget === 'number' ? p.budget : 0), 0);
    this.buys.push({
      media_buy_id: String(mediaBuy.media_buy_id),
      account: request.account,
      status: String(mediaBuy.status ?? 'pending_creatives'),
      currency: 'USD',
      total_budget: total,
      start_time: request.start_time,
      end_time: request.end_time,
      packages,
      created_at: new Date().toISOString(),
    });
  }

  find(mediaBuyId: string): BookedMediaBuy | undefined {
    return this.buys.find((b) => b.media_buy_id === mediaBuyId);
  }

  /** Canceled stays in the book (a real seller keeps the record), with when and why. */
  cancel(mediaBuyId: string, reason?: string): void {
    const buy = this.find(mediaBuyId);
    if (!buy) return;
    buy.status = 'canceled';
    buy.canceled_at = new Date().toISOString();
    if (reason !== undefined) buy.cancellation_reason = reason;
  }

  /** Buys of the account in the request (by account_id, or all when none is given), optionally by id. */
  list(args: Record<string, unknown>): BookedMediaBuy[] {
    const accountId = isPlainObject(args.account) ? args.account.account_id : undefined;
    const ids = Array.isArray(args.media_buy_ids) ? new Set(args.media_buy_ids.map(String)) : undefined;
    return this.buys.filter(
      (b) => (accountId === undefined || (isPlainObject(b.account) && b.account.account_id === accountId)) && (!ids || ids.has(b.media_buy_id)),
    );
  }
}
