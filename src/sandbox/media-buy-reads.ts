/**
 * The sandbox seller's read tasks over its book: `get_media_buys` (status,
 * revision, valid actions, packages, history, cancellation, snapshots) and
 * `get_media_buy_delivery` (lifetime or a date range), in AdCP 3.0.6 shapes.
 *
 * One deliberate leniency: `get_media_buys` without `media_buy_ids` applies
 * no implicit `status_filter` (the spec defaults to `["active"]`), so a
 * buyer's lookup of a just-created buy by natural key finds it while it is
 * still pending. `get_media_buy_delivery` follows the spec: `status_filter`
 * defaults to `["active"]`.
 */
import { validActionsForStatus } from '@adcp/sdk/server';
import { figuresFor, packageDeliveryStatus, pacingIndex, type PackageFigures } from './delivery.js';
import { lifetimeByPackage, MEDIA_BUY_STATUSES, sameAccount, type BookedMediaBuy, type MediaBuyBook, type MediaBuyStatus } from './media-buy-book.js';
import { SANDBOX_CPM } from './products.js';
import { deliveryRow } from './report-body.js';
import { CreativeLibrary } from './creative-library.js';
import { assertValidAdcpReply } from './sdk-validator.js';
import { errorResult, isPlainObject, ok, type ToolResult } from './wire.js';

type Args = Record<string, unknown>;

/** `status_filter` as a list, or an error message. */
function statusFilter(raw: unknown): MediaBuyStatus[] | string | undefined {
  if (raw === undefined) return undefined;
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length === 0 || !list.every((s) => (MEDIA_BUY_STATUSES as readonly unknown[]).includes(s))) {
    return `status_filter must be a media buy status or a non-empty list of them (${MEDIA_BUY_STATUSES.join(', ')})`;
  }
  return list as MediaBuyStatus[];
}

function mediaBuyIds(raw: unknown): string[] | string | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw) || raw.length === 0 || !raw.every((id) => typeof id === 'string')) return 'media_buy_ids must be a non-empty array of strings';
  return raw as string[];
}

/** The account object of a 3.0 media buy (account_id, name and status are required there). */
function accountOf(buy: BookedMediaBuy): Record<string, unknown> | undefined {
  if (!isPlainObject(buy.account) || typeof buy.account.account_id !== 'string') return undefined;
  return { account_id: buy.account.account_id, name: `Sandbox account ${buy.account.account_id}`, status: 'active', sandbox: true };
}

/** `library`: the creatives assigned to the buys' packages, shown as `creative_approvals`. */
export function getMediaBuysReply(book: MediaBuyBook, args: Args, library?: CreativeLibrary): ToolResult {
  const echo = args.context !== undefined ? { context: args.context } : {};
  const ids = mediaBuyIds(args.media_buy_ids);
  if (typeof ids === 'string') return errorResult('INVALID_REQUEST', ids, { field: 'media_buy_ids', extra: echo });
  const statuses = statusFilter(args.status_filter);
  if (typeof statuses === 'string') return errorResult('INVALID_REQUEST', statuses, { field: 'status_filter', extra: echo });
  const history = typeof args.include_history === 'number' && args.include_history > 0 ? Math.floor(args.include_history) : 0;
  const snapshot = args.include_snapshot === true;
  const buys = book.list(args).filter((b) => !statuses || statuses.includes(b.status));
  const approvals = library ? (b: BookedMediaBuy, packageId: string) => library.approvalsFor(CreativeLibrary.accountOf(b.account), b.media_buy_id, packageId) : undefined;
  const body = { media_buys: buys.map((b) => mediaBuyView(b, { history, snapshot, ...(approvals && { approvals }) })), pagination: { has_more: false }, sandbox: true, ...echo };
  assertValidAdcpReply('sandbox seller', 'get_media_buys', body);
  return ok(body);
}

export function mediaBuyView(
  buy: BookedMediaBuy,
  opts: { history: number; snapshot: boolean; approvals?: (buy: BookedMediaBuy, packageId: string) => Array<Record<string, unknown>> },
): Record<string, unknown> {
  const account = accountOf(buy);
  const lifetime = lifetimeByPackage(buy);
  const through = Date.parse(buy.delivered.at(-1)?.end ?? buy.flight.start);
  return {
    media_buy_id: buy.media_buy_id,
    ...(account && { account }),
    status: buy.status,
    currency: buy.currency,
    total_budget: buy.total_budget,
    start_time: buy.start_time,
    ...(typeof buy.end_time === 'string' && { end_time: buy.end_time }),
    confirmed_at: buy.created_at,
    created_at: buy.created_at,
    updated_at: buy.updated_at,
    revision: buy.revision,
    valid_actions: validActionsForStatus(buy.status),
    ...(buy.canceled_at && {
      cancellation: { canceled_at: buy.canceled_at, canceled_by: buy.canceled_by ?? 'buyer', ...(buy.cancellation_reason !== undefined && { reason: buy.cancellation_reason.slice(0, 500) }) },
    }),
    ...(opts.history > 0 && { history: buy.history.slice(-opts.history).reverse() }),
    packages: buy.packages.map((p) => {
      const spent = lifetime.get(p.package_id) ?? { spend: 0, impressions: 0, clicks: 0 };
      const pacing = pacingIndex(p.budget, spent.spend, buy.flight.periods, through);
      // Absent when no creative is assigned to the package, as the spec says.
      const approvals = opts.approvals?.(buy, p.package_id) ?? [];
      return {
        package_id: p.package_id,
        product_id: p.product_id,
        ...(p.budget_given && { budget: p.budget }),
        currency: buy.currency,
        ...(p.pricing_option_id !== undefined && { pricing_option_id: p.pricing_option_id }),
        ...(p.buyer_ref !== undefined && { buyer_ref: p.buyer_ref }),
        paused: p.paused || buy.status === 'paused',
        ...(approvals.length > 0 && { creative_approvals: approvals }),
        ...(opts.snapshot && {
          snapshot: {
            as_of: new Date().toISOString(),
            staleness_seconds: 0,
            impressions: spent.impressions,
            spend: spent.spend,
            currency: buy.currency,
            clicks: spent.clicks,
            ...(buy.delivered.length > 0 && pacing !== undefined && { pacing_index: pacing }),
            ...(buy.delivered.length > 0 && { delivery_status: packageDeliveryStatus(p.budget, spent.spend, buy.delivered.length, buy.flight.periods.length) }),
          },
        }),
      };
    }),
  };
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

export function getMediaBuyDeliveryReply(book: MediaBuyBook, args: Args): ToolResult {
  const echo = args.context !== undefined ? { context: args.context } : {};
  const invalid = (message: string, field: string): ToolResult => errorResult('INVALID_REQUEST', message, { field, extra: echo });
  const ids = mediaBuyIds(args.media_buy_ids);
  if (typeof ids === 'string') return invalid(ids, 'media_buy_ids');
  const statuses = statusFilter(args.status_filter) ?? ['active'];
  if (typeof statuses === 'string') return invalid(statuses, 'status_filter');
  const { start_date: from, end_date: to } = args;
  if ((from === undefined) !== (to === undefined)) return invalid('start_date and end_date go together: give both or neither', from === undefined ? 'start_date' : 'end_date');
  let range: { start: number; end: number } | undefined;
  if (from !== undefined) {
    if (typeof from !== 'string' || !DATE.test(from) || Number.isNaN(Date.parse(from))) return invalid('start_date must be a date YYYY-MM-DD', 'start_date');
    if (typeof to !== 'string' || !DATE.test(to) || Number.isNaN(Date.parse(to))) return invalid('end_date must be a date YYYY-MM-DD', 'end_date');
    range = { start: Date.parse(`${from}T00:00:00Z`), end: Date.parse(`${to}T00:00:00Z`) + DAY_MS };
    if (range.end <= range.start) return invalid('end_date must not be before start_date', 'end_date');
  }

  const mine = book.list({ account: args.account });
  const missing = ids ? ids.filter((id) => !mine.some((b) => b.media_buy_id === id)) : [];
  if (ids && missing.length === ids.length) {
    return errorResult('MEDIA_BUY_NOT_FOUND', `no media buy ${missing.join(', ')} for this account`, { recovery: 'correctable', field: 'media_buy_ids', extra: echo });
  }
  const selected = mine.filter((b) => (!ids || ids.includes(b.media_buy_id)) && statuses.includes(b.status));
  const rows = selected.map((b) => {
    const through = range ? Math.min(range.end, lastDelivered(b)) : lastDelivered(b);
    return deliveryRow(b, figuresWithin(b, range), { through });
  });
  const period = range ?? lifetimePeriod(selected);
  const totals = rows.map((r) => r.totals as { impressions: number; spend: number; clicks: number });
  const body = {
    reporting_period: { start: new Date(period.start).toISOString(), end: new Date(period.end).toISOString() },
    currency: 'USD',
    aggregated_totals: {
      impressions: totals.reduce((n, t) => n + t.impressions, 0),
      spend: Math.round(totals.reduce((n, t) => n + t.spend, 0) * 100) / 100,
      clicks: totals.reduce((n, t) => n + t.clicks, 0),
      media_buy_count: rows.length,
    },
    media_buy_deliveries: rows,
    // Some ids known, some not: the known ones are answered, the others named here.
    ...(missing.length > 0 && {
      errors: missing.map((id) => ({ code: 'MEDIA_BUY_NOT_FOUND', message: `no media buy ${id} for this account`, field: `media_buy_ids[${ids!.indexOf(id)}]`, recovery: 'correctable' })),
    }),
    sandbox: true,
    ...echo,
  };
  assertValidAdcpReply('sandbox seller', 'get_media_buy_delivery', body);
  return ok(body);
}

function lastDelivered(buy: BookedMediaBuy): number {
  return Date.parse(buy.delivered.at(-1)?.end ?? buy.flight.start);
}

/** Lifetime: from the earliest flight start to the end of the latest delivered period (now, when none is selected). */
function lifetimePeriod(buys: BookedMediaBuy[]): { start: number; end: number } {
  if (buys.length === 0) return { start: Date.now(), end: Date.now() };
  const start = Math.min(...buys.map((b) => Date.parse(b.flight.start)));
  return { start, end: Math.max(start, ...buys.map(lastDelivered)) };
}

/** Each package's figures over the delivered periods, prorated to the part of each period inside `range`. */
export function figuresWithin(buy: BookedMediaBuy, range: { start: number; end: number } | undefined): Map<string, PackageFigures> {
  const spend = new Map<string, number>(buy.packages.map((p) => [p.package_id, 0]));
  const exact = new Map<string, PackageFigures>(buy.packages.map((p) => [p.package_id, { spend: 0, impressions: 0, clicks: 0 }]));
  let prorated = false;
  for (const d of buy.delivered) {
    const start = Date.parse(d.start);
    const end = Date.parse(d.end);
    const overlap = range ? Math.max(0, Math.min(end, range.end) - Math.max(start, range.start)) : end - start;
    const share = end > start ? overlap / (end - start) : range ? 0 : 1;
    if (share === 0) continue;
    if (share < 1) prorated = true;
    for (const p of d.packages) {
      spend.set(p.package_id, (spend.get(p.package_id) ?? 0) + p.spend * share);
      const e = exact.get(p.package_id);
      if (e) exact.set(p.package_id, { spend: e.spend + p.spend, impressions: e.impressions + p.impressions, clicks: e.clicks + p.clicks });
    }
  }
  // Whole periods keep their exact figures; a prorated range re-derives impressions from spend.
  if (!prorated) return new Map([...exact].map(([id, f]) => [id, { ...f, spend: Math.round(f.spend * 100) / 100 }]));
  return new Map([...spend].map(([id, s]) => [id, figuresFor(s, SANDBOX_CPM)]));
}
