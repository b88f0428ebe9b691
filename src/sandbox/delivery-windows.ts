/**
 * AdCP 3.1's windowed delivery pull: `get_media_buy_delivery` with
 * `time_granularity` (and `include_window_breakdown: true`) answers each buy's
 * delivery as contiguous slices (`media_buy_deliveries[].windows[]`), so a buyer
 * that missed report fires can read the same figures back.
 *
 * The sandbox honours `daily` pulls only (its products declare
 * `reporting_capabilities.windowed_pull_granularities: ["daily"]`): a day is a UTC
 * day, and each slice holds what the buy delivered in it, its reporting periods
 * prorated by overlap as a date-range pull prorates them. Any other granularity is
 * UNSUPPORTED_GRANULARITY, as the spec requires of a granularity not declared. The
 * slices partition the requested date range, or, without one, the buy's flight from
 * its start to the end of what it has delivered.
 */
import { figuresWithin } from './media-buy-reads.js';
import type { BookedMediaBuy, MediaBuyBook } from './media-buy-book.js';
import { errorResult, isPlainObject, type ToolResult } from './wire.js';

export const WINDOWED_PULL_GRANULARITIES = ['daily'] as const;

const DAY_MS = 86_400_000;
/** The most slices one buy's row may carry (a year and a bit of days). */
const MAX_WINDOWS = 400;

/** The refusal of a windowed pull the sandbox does not serve, or null when it serves it (or none was asked). */
export function windowRefusal(args: Record<string, unknown>): ToolResult | null {
  const granularity = args.time_granularity;
  if (granularity === undefined || (WINDOWED_PULL_GRANULARITIES as readonly unknown[]).includes(granularity)) return null;
  return errorResult('UNSUPPORTED_GRANULARITY', `sandbox: windowed delivery is pulled daily only, not ${JSON.stringify(granularity)}`, {
    recovery: 'correctable',
    field: 'time_granularity',
    details: { supported_granularities: [...WINDOWED_PULL_GRANULARITIES] },
    ...(args.context !== undefined && { extra: { context: args.context } }),
  });
}

/** Whether the pull asks for slices: a granularity and `include_window_breakdown: true`. */
export const wantsWindows = (args: Record<string, unknown>): boolean => args.time_granularity !== undefined && args.include_window_breakdown === true;

/** The delivery reply `body` with each row's daily `windows[]` (rows of buys not in the book are left as they are). */
export function withWindows(book: MediaBuyBook, body: Record<string, unknown>, args: Record<string, unknown>): { body: Record<string, unknown> } | { refusal: ToolResult } {
  const requested = requestedRange(args);
  const rows = Array.isArray(body.media_buy_deliveries) ? body.media_buy_deliveries : [];
  const out: unknown[] = [];
  for (const row of rows) {
    const buy = isPlainObject(row) && typeof row.media_buy_id === 'string' ? book.find(row.media_buy_id) : undefined;
    if (!buy || !isPlainObject(row)) {
      out.push(row);
      continue;
    }
    const range = requested ?? lifetimeDays(buy);
    if ((range.end - range.start) / DAY_MS > MAX_WINDOWS) {
      const refusal = errorResult('INVALID_REQUEST', `sandbox: a windowed pull covers at most ${MAX_WINDOWS} days; give start_date and end_date`, {
        recovery: 'correctable',
        field: 'start_date',
        ...(args.context !== undefined && { extra: { context: args.context } }),
      });
      return { refusal };
    }
    out.push({ ...row, windows: dailyWindows(buy, range) });
  }
  return { body: { ...body, media_buy_deliveries: out } };
}

/** The pull's own days (already checked by the delivery reply), or undefined for lifetime. */
function requestedRange(args: Record<string, unknown>): { start: number; end: number } | undefined {
  if (typeof args.start_date !== 'string' || typeof args.end_date !== 'string') return undefined;
  return { start: Date.parse(`${args.start_date}T00:00:00Z`), end: Date.parse(`${args.end_date}T00:00:00Z`) + DAY_MS };
}

/** From the UTC day the flight starts to the end of the day in which its delivery so far ends. */
function lifetimeDays(buy: BookedMediaBuy): { start: number; end: number } {
  const start = Math.floor(Date.parse(buy.flight.start) / DAY_MS) * DAY_MS;
  const through = Date.parse(buy.delivered.at(-1)?.end ?? buy.flight.start);
  return { start, end: Math.max(start + DAY_MS, Math.ceil(through / DAY_MS) * DAY_MS) };
}

function dailyWindows(buy: BookedMediaBuy, range: { start: number; end: number }): Array<Record<string, unknown>> {
  const windows: Array<Record<string, unknown>> = [];
  for (let day = range.start; day < range.end; day += DAY_MS) {
    const figures = figuresWithin(buy, { start: day, end: day + DAY_MS });
    const byPackage = [...figures].map(([package_id, f]) => ({ package_id, impressions: f.impressions, spend: f.spend, clicks: f.clicks }));
    windows.push({
      window_start: new Date(day).toISOString(),
      window_end: new Date(day + DAY_MS).toISOString(),
      totals: {
        impressions: byPackage.reduce((n, p) => n + p.impressions, 0),
        spend: Math.round(byPackage.reduce((n, p) => n + p.spend, 0) * 100) / 100,
        clicks: byPackage.reduce((n, p) => n + p.clicks, 0),
      },
      by_package: byPackage,
    });
  }
  return windows;
}
