/**
 * The JSON of a live media buy, of its events and of its reports (README, Media
 * buys), as the API answers them and as `media_buy.*` notifications carry them.
 * Pure, so the store builds a notification body in the transaction that writes
 * the change and the API shows exactly the same thing. No secret passes here: the
 * reporting webhook's token and secret and the governance token are never read.
 */
import type { CreativeJson } from './creatives.js';
import type { PackageState } from './media-buy-delivery.js';
import type { PacingState } from './pacing.js';
import { firesReachUs, pollingReason } from './reporting-webhook.js';

/** The columns of a buy that are shown (the store's row satisfies it). */
export interface MediaBuyJsonSource {
  id: string;
  agent_id: string;
  media_buy_id: string;
  operation_id: string;
  campaign_id: string | null;
  governance: string | null;
  status: string;
  revision: number | null;
  valid_actions: string | null;
  flight_start: number | null;
  flight_end: number | null;
  budget_amount: number | null;
  currency: string | null;
  packages: string;
  impressions: number;
  spend: number;
  clicks: number | null;
  delivered_through: number | null;
  delivery_source: string | null;
  delivery_updated_at: number | null;
  pacing_state: string;
  pacing_ratio: number | null;
  pacing_expected: number | null;
  report_frequency: string | null;
  reports_received: number;
  last_sequence: number | null;
  next_expected_at: number | null;
  reports_missing: number;
  final_received: number;
  reporting_auth: string;
  next_check_at: number | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
  /** Since when its seller no longer answers for it, and why (src/domain/media-buy-unreadable.ts); absent or null while it does. */
  unreadable_since?: number | null;
  unreadable_reason?: string | null;
}

export interface MediaBuyEventSource {
  id: number;
  at: number;
  source: string;
  kind: string;
  from_status: string | null;
  to_status: string | null;
  detail: string | null;
  actor: string | null;
}

export interface ReportJsonSource {
  id: string;
  source: string;
  kind: string;
  notification_type: string | null;
  sequence_number: number | null;
  period_start: number;
  period_end: number;
  impressions: number;
  spend: number;
  clicks: number | null;
  currency: string | null;
  by_package: string;
  status: string | null;
  is_adjusted: number;
  superseded_by: string | null;
  received_at: number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const parsed = <T>(text: string | null, fallback: T): T => (text === null ? fallback : (JSON.parse(text) as T));

/** With `creatives` (the single-buy read): each creative sent to its seller and its review (src/domain/creatives.ts). */
export function presentMediaBuy(b: MediaBuyJsonSource, events?: MediaBuyEventSource[], creatives?: CreativeJson[]) {
  const governance = parsed<{ agent_id: string; plan_id: string } | null>(b.governance, null);
  return {
    id: b.id,
    agent_id: b.agent_id,
    media_buy_id: b.media_buy_id,
    operation_id: b.operation_id,
    campaign_id: b.campaign_id,
    governance: governance ? { agent_id: governance.agent_id, plan_id: governance.plan_id } : null,
    status: b.status,
    revision: b.revision,
    valid_actions: parsed<string[] | null>(b.valid_actions, null),
    flight: { start: iso(b.flight_start), end: iso(b.flight_end) },
    budget: { amount: b.budget_amount, currency: b.currency },
    packages: parsed<PackageState[]>(b.packages, []),
    delivery: {
      impressions: b.impressions,
      spend: b.spend,
      ...(b.clicks !== null ? { clicks: b.clicks } : {}),
      currency: b.currency,
      through: iso(b.delivered_through),
      pacing: { expected_spend: b.pacing_expected, ratio: b.pacing_ratio, state: b.pacing_state as PacingState },
      source: b.delivery_source,
      updated_at: iso(b.delivery_updated_at),
    },
    reports: {
      frequency: b.report_frequency,
      // How fires reach us (hmac, bearer, rfc9421), or `none`: then we poll, for the reason given.
      webhook: firesReachUs(b.reporting_auth) ? b.reporting_auth : 'none',
      polled_because: pollingReason(b.reporting_auth),
      received: b.reports_received,
      last_sequence: b.last_sequence,
      next_expected_at: iso(b.next_expected_at),
      missing: b.reports_missing,
      final_received: b.final_received === 1,
    },
    // The seller no longer answers for it (no row for it in get_media_buys, or MEDIA_BUY_NOT_FOUND): since when, why; null while it does.
    unreadable: b.unreadable_since != null ? { since: iso(b.unreadable_since), reason: b.unreadable_reason ?? null } : null,
    // While it is tracked: when we next look at the seller (status, a missing report), else null.
    next_check_at: iso(b.next_check_at),
    created_at: iso(b.created_at),
    updated_at: iso(b.updated_at),
    ended_at: iso(b.ended_at),
    ...(creatives ? { creatives } : {}),
    ...(events ? { events: events.map(presentBuyEvent) } : {}),
  };
}

export function presentBuyEvent(e: MediaBuyEventSource) {
  return {
    id: e.id,
    at: iso(e.at),
    source: e.source,
    kind: e.kind,
    from: e.from_status,
    to: e.to_status,
    detail: e.detail === null ? null : JSON.parse(e.detail),
    actor: e.actor,
  };
}

export function presentReport(r: ReportJsonSource) {
  return {
    id: r.id,
    period: { start: iso(r.period_start), end: iso(r.period_end) },
    // A poll's cumulative snapshot has no notification type of its own: it says `snapshot`.
    notification_type: r.kind === 'snapshot' ? 'snapshot' : r.notification_type,
    sequence_number: r.sequence_number,
    impressions: r.impressions,
    spend: r.spend,
    ...(r.clicks !== null ? { clicks: r.clicks } : {}),
    currency: r.currency,
    by_package: JSON.parse(r.by_package) as unknown[],
    status: r.status,
    is_adjusted: r.is_adjusted === 1,
    received_at: iso(r.received_at),
    source: r.source,
    ...(r.superseded_by ? { superseded_by: r.superseded_by } : {}),
  };
}

export type MediaBuyJson = ReturnType<typeof presentMediaBuy>;
export type MediaBuyEventJson = ReturnType<typeof presentBuyEvent>;
export type ReportJson = ReturnType<typeof presentReport>;

/** The body of a `media_buy.*` notification: like an operation's, with `data.media_buy`. */
export function mediaBuyNotificationBody(input: { id: string; type: string; tenantId: string; createdAt: number; buy: MediaBuyJson; event: MediaBuyEventSource; publicUrl?: string }) {
  return {
    id: input.id,
    type: input.type,
    created_at: new Date(input.createdAt).toISOString(),
    tenant_id: input.tenantId,
    data: {
      media_buy: input.buy,
      event: presentBuyEvent(input.event),
      ...(input.publicUrl ? { link: `${input.publicUrl}/media-buys/${encodeURIComponent(input.buy.id)}` } : {}),
    },
  };
}
