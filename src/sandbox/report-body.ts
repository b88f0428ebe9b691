/**
 * The shapes of the sandbox's delivery data on the wire (AdCP 3.0.6): a
 * `media_buy_deliveries[]` row for a buy, the body of a reporting fire in
 * both styles (the 3.0 bare `get_media_buy_delivery` response plus webhook
 * fields, or the 3.1 envelope with the report under `result`). Pure.
 */
import { figuresFor, packageDeliveryStatus, pacingIndex, roundCents, type PackageFigures } from './delivery.js';
import { lifetimeByPackage, type BookedMediaBuy } from './media-buy-book.js';
import { SANDBOX_CPM } from './products.js';

export type NotificationType = 'scheduled' | 'final' | 'delayed' | 'adjusted' | 'window_update';
export type ReportBodyStyle = 'bare' | 'envelope';

const ZERO: PackageFigures = { spend: 0, impressions: 0, clicks: 0 };

export interface RowOptions {
  /** Epoch ms the pacing index is measured at (the end of the reported period, or of the last delivered one). */
  through: number;
  /** Rows restating an earlier period: `is_adjusted`, or a wider measurement window. */
  restatement?: 'adjusted' | 'window_update';
}

/**
 * One buy's row: `figures` are what it delivered in the reported period (or
 * range) per package; pacing and delivery status come from its lifetime.
 */
export function deliveryRow(buy: BookedMediaBuy, figures: ReadonlyMap<string, PackageFigures>, opts: RowOptions): Record<string, unknown> {
  const lifetime = lifetimeByPackage(buy);
  const started = buy.delivered.length > 0 || buy.status === 'active' || buy.status === 'paused' || buy.status === 'completed';
  const byPackage = buy.packages.map((p) => {
    const f = figures.get(p.package_id) ?? ZERO;
    const spent = lifetime.get(p.package_id)?.spend ?? 0;
    const pacing = pacingIndex(p.budget, spent, buy.flight.periods, opts.through);
    return {
      package_id: p.package_id,
      spend: f.spend,
      impressions: f.impressions,
      clicks: f.clicks,
      pricing_model: 'cpm',
      rate: SANDBOX_CPM,
      currency: buy.currency,
      ...(started && pacing !== undefined && { pacing_index: pacing }),
      ...(started && buy.status !== 'canceled' && {
        delivery_status: packageDeliveryStatus(p.budget, spent, buy.delivered.length, buy.flight.periods.length),
      }),
      paused: p.paused || buy.status === 'paused',
      ...(opts.restatement === 'window_update' && { measurement_window: 'c3', supersedes_window: 'live', is_final: true }),
    };
  });
  const spend = roundCents(byPackage.reduce((n, p) => n + p.spend, 0));
  const impressions = byPackage.reduce((n, p) => n + p.impressions, 0);
  const clicks = byPackage.reduce((n, p) => n + p.clicks, 0);
  return {
    media_buy_id: buy.media_buy_id,
    status: buy.status,
    ...(opts.restatement === 'adjusted' && { is_adjusted: true }),
    pricing_model: 'cpm',
    totals: { impressions, spend, clicks, ...(impressions > 0 && { effective_rate: roundCents((spend / impressions) * 1000) }) },
    by_package: byPackage,
  };
}

/** Per-package figures of one delivered period (none if it was never delivered). */
export function periodFigures(buy: BookedMediaBuy, index: number): Map<string, PackageFigures> {
  const period = buy.delivered.find((d) => d.index === index);
  return new Map((period?.packages ?? []).map((p) => [p.package_id, { spend: p.spend, impressions: p.impressions, clicks: p.clicks }]));
}

/** New figures for a restated period: each package's spend times `factor`, impressions re-derived. */
export function restatedFigures(figures: ReadonlyMap<string, PackageFigures>, factor: number): Map<string, PackageFigures> {
  return new Map([...figures].map(([id, f]) => [id, figuresFor(roundCents(f.spend * factor), SANDBOX_CPM)]));
}

export interface ReportFields {
  notification_type: NotificationType;
  sequence_number: number;
  /** Wall-clock time of the next fire; absent on `final`. */
  next_expected_at?: string;
  reporting_period: { start: string; end: string };
  rows: Record<string, unknown>[];
  token?: string;
  /** Never in a spec fire; some sellers (the Prebid sales agent) send it anyway. */
  aggregated_totals?: Record<string, unknown>;
}

/** The 3.0 bare body: a `get_media_buy_delivery` response plus the webhook fields (never `aggregated_totals`). */
export function bareReport(r: ReportFields): Record<string, unknown> {
  return {
    notification_type: r.notification_type,
    sequence_number: r.sequence_number,
    ...(r.next_expected_at !== undefined && { next_expected_at: r.next_expected_at }),
    reporting_period: r.reporting_period,
    currency: 'USD',
    media_buy_deliveries: r.rows,
    ...(r.aggregated_totals !== undefined && { aggregated_totals: r.aggregated_totals }),
    ...(r.token !== undefined && { token: r.token }),
    sandbox: true,
  };
}

/** The 3.1 envelope around a report; the sender adds `idempotency_key` at its root. */
export function envelopeReport(r: ReportFields, ids: { operation_id: string; task_id: string; task_type?: string }, timestamp: string): Record<string, unknown> {
  const { token, ...report } = r;
  return {
    operation_id: ids.operation_id,
    task_id: ids.task_id,
    task_type: ids.task_type ?? 'media_buy_delivery',
    status: 'completed',
    timestamp,
    ...(token !== undefined && { token }),
    result: bareReport(report),
  };
}
