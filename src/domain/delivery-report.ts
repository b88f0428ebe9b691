/**
 * Reading a delivery report (the AdCP spec, delivery reporting): the body of a
 * reporting fire, in either style, or a `get_media_buy_delivery` reply. Pure.
 *
 * - 3.0 "bare": the `get_media_buy_delivery` response itself plus the webhook
 *   fields (`notification_type`, `sequence_number`, `next_expected_at`, …).
 * - 3.1 "envelope": `{idempotency_key, task_type: "media_buy_delivery", status,
 *   timestamp, result: <report>}`. Some sellers (the Prebid sales agent) send
 *   `task_type: "update_media_buy"` with `media_buy_deliveries` in `result`:
 *   recognised by its body, not its label.
 *
 * Lenient where the meaning does not change (an `aggregated_totals` a fire should
 * not carry is ignored; a missing `notification_type` is a `scheduled` report),
 * strict where it would (an unknown notification type, a negative or absurd
 * figure, a period that has not begun): those are refused, and nothing is applied.
 */

export const NOTIFICATION_KINDS = ['scheduled', 'final', 'delayed', 'adjusted', 'window_update'] as const;
export type ReportNotificationType = (typeof NOTIFICATION_KINDS)[number];

export interface ReportPeriod {
  /** Epoch ms, UTC. */
  start: number;
  end: number;
}

export interface PackageFigures {
  package_id: string;
  impressions?: number;
  spend?: number;
  clicks?: number;
  pacing_index?: number;
  delivery_status?: string;
  paused?: boolean;
}

/** One buy's row of a report. */
export interface BuyDelivery {
  mediaBuyId: string;
  /** The buy's status as the report states it (may also be `pending`, `failed`, `reporting_delayed`). */
  status?: string;
  impressions: number;
  spend: number;
  clicks?: number;
  byPackage: PackageFigures[];
  isAdjusted: boolean;
}

export interface DeliveryReading {
  style: 'bare' | 'envelope' | 'reply';
  /** The sender's dedupe key (an envelope's; a bare body may carry one too). */
  idempotencyKey?: string;
  notificationType: ReportNotificationType;
  sequenceNumber?: number;
  /** Epoch ms: when the seller says the next report comes (absent on `final`). */
  nextExpectedAt?: number;
  period: ReportPeriod;
  currency?: string;
  partialData: boolean;
  rows: BuyDelivery[];
}

export type ReadResult = { ok: true; reading: DeliveryReading } | { ok: false; code: ReportErrorCode; message: string };
export type ReportErrorCode = 'report_body_unrecognized' | 'report_notification_type_unknown' | 'report_invalid';

/** Bounds beyond which a figure is taken for a fault, not a report. */
export const REPORT_LIMITS = {
  rows: 1_000,
  packagesPerRow: 1_000,
  /** Impressions or clicks in one report. */
  count: 1e13,
  /** Spend in one report, in its currency. */
  amount: 1e12,
  sequence: 1e9,
} as const;

/** How far a period's start may be ahead of our clock by default (the seller's clock may run a little fast). */
export const DEFAULT_CLOCK_SKEW_MS = 5 * 60_000;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

class Invalid extends Error {
  constructor(
    readonly code: ReportErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Where the report is in a fire's body, and which style it came in; null when it is no delivery report. */
export function reportOfFire(body: unknown): { report: Json; style: 'bare' | 'envelope'; envelope?: Json } | null {
  if (!isObject(body)) return null;
  if (isObject(body.result) && typeof body.task_type === 'string') {
    const result = body.result;
    const isDelivery = body.task_type === 'media_buy_delivery' || Array.isArray(result.media_buy_deliveries);
    return isDelivery ? { report: result, style: 'envelope', envelope: body } : null;
  }
  return Array.isArray(body.media_buy_deliveries) ? { report: body, style: 'bare' } : null;
}

/**
 * A reporting fire's body (either style), read against our clock: a period that begins
 * more than `clockSkewMs` ahead of `now` has not happened and is refused.
 */
export function readFire(body: unknown, now: number, clockSkewMs = DEFAULT_CLOCK_SKEW_MS): ReadResult {
  const found = reportOfFire(body);
  if (!found) {
    return { ok: false, code: 'report_body_unrecognized', message: 'the body is neither a delivery report nor an envelope carrying one (media_buy_deliveries)' };
  }
  const key = str(found.envelope?.idempotency_key) ?? str(found.report.idempotency_key);
  return read(found.report, found.style, now + clockSkewMs, key);
}

/** A `get_media_buy_delivery` reply (a poll): the same rows, no webhook fields. */
export function readDeliveryReply(data: unknown, now: number, clockSkewMs = DEFAULT_CLOCK_SKEW_MS): ReadResult {
  if (!isObject(data) || !Array.isArray(data.media_buy_deliveries)) {
    return { ok: false, code: 'report_body_unrecognized', message: 'the reply has no media_buy_deliveries' };
  }
  return read(data, 'reply', now + clockSkewMs, undefined);
}

/** `latestStart`: the last moment a period may begin (our clock plus the skew allowed). */
function read(report: Json, style: DeliveryReading['style'], latestStart: number, idempotencyKey: string | undefined): ReadResult {
  try {
    const notificationType = notificationTypeOf(report.notification_type);
    const period = periodOf(report.reporting_period, 'reporting_period');
    if (period.start > latestStart) throw new Invalid('report_invalid', `reporting_period starts in the future (${new Date(period.start).toISOString()})`);
    const deliveries = report.media_buy_deliveries as unknown[];
    if (deliveries.length > REPORT_LIMITS.rows) throw new Invalid('report_invalid', `${deliveries.length} media_buy_deliveries is more than ${REPORT_LIMITS.rows}`);
    const rows = deliveries.map((d, i) => rowOf(d, `media_buy_deliveries[${i}]`));
    const reading: DeliveryReading = {
      style,
      notificationType,
      period,
      partialData: report.partial_data === true,
      rows,
    };
    if (idempotencyKey) reading.idempotencyKey = idempotencyKey;
    const currency = str(report.currency);
    if (currency) reading.currency = currency;
    if (report.sequence_number !== undefined) {
      const n = report.sequence_number;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > REPORT_LIMITS.sequence) throw new Invalid('report_invalid', 'sequence_number must be a whole number from 1');
      reading.sequenceNumber = n;
    }
    const next = time(report.next_expected_at);
    if (next !== undefined) reading.nextExpectedAt = next;
    return { ok: true, reading };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, code: err.code, message: err.message };
    throw err;
  }
}

function notificationTypeOf(v: unknown): ReportNotificationType {
  // A fire that says nothing is an ordinary one; a poll reply never says.
  if (v === undefined || v === null) return 'scheduled';
  if (typeof v === 'string' && (NOTIFICATION_KINDS as readonly string[]).includes(v)) return v as ReportNotificationType;
  throw new Invalid('report_notification_type_unknown', `notification_type ${JSON.stringify(v)} is not one of ${NOTIFICATION_KINDS.join(', ')}`);
}

function periodOf(v: unknown, where: string): ReportPeriod {
  if (!isObject(v)) throw new Invalid('report_invalid', `${where} must be an object {start, end}`);
  const start = time(v.start);
  const end = time(v.end);
  if (start === undefined || end === undefined) throw new Invalid('report_invalid', `${where}.start and .end must be ISO 8601 date-times`);
  if (end < start) throw new Invalid('report_invalid', `${where} ends before it starts`);
  return { start, end };
}

function rowOf(v: unknown, where: string): BuyDelivery {
  if (!isObject(v)) throw new Invalid('report_invalid', `${where} must be an object`);
  const mediaBuyId = str(v.media_buy_id);
  if (!mediaBuyId || mediaBuyId.length > 255) throw new Invalid('report_invalid', `${where}.media_buy_id is missing`);
  const totals = isObject(v.totals) ? v.totals : undefined;
  if (!totals) throw new Invalid('report_invalid', `${where}.totals is missing`);
  const spend = amount(totals.spend, `${where}.totals.spend`, REPORT_LIMITS.amount);
  if (spend === undefined) throw new Invalid('report_invalid', `${where}.totals.spend is missing`);
  const packages = Array.isArray(v.by_package) ? v.by_package : [];
  if (packages.length > REPORT_LIMITS.packagesPerRow) throw new Invalid('report_invalid', `${where}.by_package has more than ${REPORT_LIMITS.packagesPerRow} entries`);
  const row: BuyDelivery = {
    mediaBuyId,
    impressions: amount(totals.impressions, `${where}.totals.impressions`, REPORT_LIMITS.count) ?? 0,
    spend,
    byPackage: packages.map((p, i) => packageOf(p, `${where}.by_package[${i}]`)),
    isAdjusted: v.is_adjusted === true,
  };
  const clicks = amount(totals.clicks, `${where}.totals.clicks`, REPORT_LIMITS.count);
  if (clicks !== undefined) row.clicks = clicks;
  const status = str(v.status);
  if (status) row.status = status;
  return row;
}

function packageOf(v: unknown, where: string): PackageFigures {
  if (!isObject(v)) throw new Invalid('report_invalid', `${where} must be an object`);
  const id = str(v.package_id);
  if (!id) throw new Invalid('report_invalid', `${where}.package_id is missing`);
  const p: PackageFigures = { package_id: id };
  const impressions = amount(v.impressions, `${where}.impressions`, REPORT_LIMITS.count);
  if (impressions !== undefined) p.impressions = impressions;
  const spend = amount(v.spend, `${where}.spend`, REPORT_LIMITS.amount);
  if (spend !== undefined) p.spend = spend;
  const clicks = amount(v.clicks, `${where}.clicks`, REPORT_LIMITS.count);
  if (clicks !== undefined) p.clicks = clicks;
  // A pacing index is a ratio of actual to expected delivery: 0 and up, and nothing sane above 100.
  const pacing = amount(v.pacing_index, `${where}.pacing_index`, 100);
  if (pacing !== undefined) p.pacing_index = pacing;
  const status = str(v.delivery_status);
  if (status) p.delivery_status = status;
  if (typeof v.paused === 'boolean') p.paused = v.paused;
  return p;
}

/** A figure: absent is undefined; present, it must be a finite number from 0 up to `max`. */
function amount(v: unknown, where: string, max: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Invalid('report_invalid', `${where} must be a number`);
  if (v < 0) throw new Invalid('report_invalid', `${where} is negative (${v})`);
  if (v > max) throw new Invalid('report_invalid', `${where} is absurdly large (${v})`);
  return v;
}

function time(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}
