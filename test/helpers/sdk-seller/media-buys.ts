/**
 * The seller's book of media buys, in memory: what was bought, its status, and
 * what it has delivered so far. Status changes go through the SDK's own
 * lifecycle graph (assertMediaBuyTransition), so a pause of a canceled buy is
 * refused with the code the spec gives (INVALID_STATE, NOT_CANCELLABLE), not
 * one we made up.
 *
 * Delivery is simple and deterministic: each reporting period delivers a tenth
 * of every running package's budget (never past it) at the product's CPM, with
 * 0.2 % clicks. Periods tile wall-clock time, from the booking to each report,
 * so every period a report names has already happened.
 */
import { randomUUID } from 'node:crypto';
import { assertMediaBuyTransition, validActionsForStatus } from '@adcp/sdk/server';
import type { MediaBuyStatus } from '@adcp/sdk';
import { CPM, CURRENCY } from './catalog.js';

type Json = Record<string, unknown>;

export interface BookedPackage {
  package_id: string;
  product_id: string;
  pricing_option_id: string;
  budget: number;
  paused: boolean;
  delivered: { impressions: number; spend: number; clicks: number };
}

/** Where and how the buyer wants its delivery reports (the request's `reporting_webhook`). */
export interface ReportingTarget {
  url: string;
  frequency: string;
  scheme: 'HMAC-SHA256' | 'Bearer';
  credentials: string;
  token?: string;
}

export interface BookedBuy {
  media_buy_id: string;
  /** Whose buy it is (the resolved account), so one account never reads another's. */
  owner: string;
  account: unknown;
  status: MediaBuyStatus;
  revision: number;
  start_time: string;
  end_time: string;
  created_at: number;
  updated_at: number;
  packages: BookedPackage[];
  reporting?: ReportingTarget;
  /** The last report's period end (the next period starts there); the booking time before any. */
  reportedThrough: number;
  /** Reports sent so far: the next report's sequence_number is this plus one. */
  reportsSent: number;
  /** The governance_context the create carried, kept as the spec asks a seller to. */
  governanceContext?: string;
  canceled?: { at: number; reason?: string };
  history: Array<{ at: number; revision: number; action: string }>;
}

export interface PeriodFigures {
  start: number;
  end: number;
  packages: Array<{ package_id: string; impressions: number; spend: number; clicks: number; paused: boolean }>;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

export class MediaBuyBook {
  private readonly buys = new Map<string, BookedBuy>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Books a buy from a create_media_buy request the framework has already validated. */
  book(owner: string, request: Json): BookedBuy {
    const at = this.now();
    const packages = (request.packages as Json[]).map((p, i) => ({
      package_id: `pkg_${i + 1}_${randomUUID().slice(0, 8)}`,
      product_id: String(p.product_id),
      pricing_option_id: String(p.pricing_option_id),
      budget: Number(p.budget),
      paused: p.paused === true,
      delivered: { impressions: 0, spend: 0, clicks: 0 },
    }));
    const buy: BookedBuy = {
      media_buy_id: `mb_${randomUUID()}`,
      owner,
      account: request.account,
      status: 'active',
      revision: 1,
      start_time: request.start_time === 'asap' ? new Date(at).toISOString() : String(request.start_time),
      end_time: String(request.end_time),
      created_at: at,
      updated_at: at,
      packages,
      reportedThrough: at,
      reportsSent: 0,
      history: [{ at, revision: 1, action: 'created' }],
    };
    const rw = request.reporting_webhook as Json | undefined;
    const auth = rw?.authentication as { schemes: string[]; credentials: string } | undefined;
    if (rw && auth) {
      buy.reporting = {
        url: String(rw.url),
        frequency: String(rw.reporting_frequency),
        scheme: auth.schemes[0] === 'Bearer' ? 'Bearer' : 'HMAC-SHA256',
        credentials: auth.credentials,
        ...(typeof rw.token === 'string' ? { token: rw.token } : {}),
      };
    }
    if (typeof request.governance_context === 'string') buy.governanceContext = request.governance_context;
    this.buys.set(buy.media_buy_id, buy);
    return buy;
  }

  get(id: string, owner?: string): BookedBuy | undefined {
    const buy = this.buys.get(id);
    return buy && (owner === undefined || buy.owner === owner) ? buy : undefined;
  }

  ofOwner(owner: string): BookedBuy[] {
    return [...this.buys.values()].filter((b) => b.owner === owner);
  }

  all(): BookedBuy[] {
    return [...this.buys.values()];
  }

  /** Moves a buy to `to`, or throws the SDK's AdcpError for a move its lifecycle forbids. */
  transition(buy: BookedBuy, to: MediaBuyStatus, action: string, reason?: string): void {
    if (buy.status === to) return;
    assertMediaBuyTransition(buy.status, to);
    const at = this.now();
    buy.status = to;
    buy.revision += 1;
    buy.updated_at = at;
    if (to === 'canceled') buy.canceled = { at, ...(reason ? { reason } : {}) };
    buy.history.push({ at, revision: buy.revision, action });
  }

  /** Delivers the next period (booking or last report → now) and books it. */
  deliverPeriod(buy: BookedBuy): PeriodFigures {
    const start = buy.reportedThrough;
    const end = Math.max(this.now(), start + 1);
    const running = buy.status === 'active';
    const packages = buy.packages.map((p) => {
      const spend = running && !p.paused ? round2(Math.min(p.budget / 10, p.budget - p.delivered.spend)) : 0;
      const impressions = Math.round((spend / CPM) * 1000);
      const clicks = Math.round(impressions * 0.002);
      p.delivered.spend = round2(p.delivered.spend + spend);
      p.delivered.impressions += impressions;
      p.delivered.clicks += clicks;
      return { package_id: p.package_id, impressions, spend, clicks, paused: p.paused };
    });
    buy.reportedThrough = end;
    return { start, end, packages };
  }

  validActions(buy: BookedBuy): string[] {
    return validActionsForStatus(buy.status);
  }
}

export const totalBudget = (buy: BookedBuy): number => round2(buy.packages.reduce((s, p) => s + p.budget, 0));

/** A package row as get_media_buy_delivery and the reports show it. */
export function packageDelivery(p: { package_id: string; impressions: number; spend: number; clicks: number; paused: boolean }): Json {
  return {
    package_id: p.package_id,
    impressions: p.impressions,
    spend: p.spend,
    clicks: p.clicks,
    pricing_model: 'cpm',
    rate: CPM,
    currency: CURRENCY,
    paused: p.paused,
    delivery_status: p.paused ? 'not_delivering' : 'delivering',
  };
}
