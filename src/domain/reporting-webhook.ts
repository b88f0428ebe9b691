/**
 * The reporting webhook we ask a seller to fire (the AdCP spec, `reporting_webhook`
 * on `create_media_buy`), and when its reports are due. Pure.
 */

export const REPORTING_FREQUENCIES = ['hourly', 'daily', 'monthly'] as const;
export type ReportingFrequency = (typeof REPORTING_FREQUENCIES)[number];

/**
 * How a reporting fire authenticates: legacy HMAC-SHA256 (the default) or Bearer
 * with a per-buy secret in `authentication`, or RFC 9421 signatures with the
 * seller's published keys (no `authentication` block, so no secret in the request:
 * what a governed buy uses, since its request is shown to the governance agent).
 */
export const REPORTING_AUTH = ['hmac', 'bearer', 'rfc9421'] as const;
export type ReportingAuth = (typeof REPORTING_AUTH)[number];

export const DEFAULT_REPORTING_FREQUENCY: ReportingFrequency = 'daily';

const HOUR = 3_600_000;
const PERIOD_MS: Record<ReportingFrequency, number> = { hourly: HOUR, daily: 24 * HOUR, monthly: 30 * 24 * HOUR };

export function isReportingFrequency(v: unknown): v is ReportingFrequency {
  return typeof v === 'string' && (REPORTING_FREQUENCIES as readonly string[]).includes(v);
}

/** The nominal length of one reporting period. */
export function frequencyPeriodMs(f: ReportingFrequency): number {
  return PERIOD_MS[f];
}

export type FrequencyChoice = { ok: true; frequency: ReportingFrequency } | { ok: false; message: string };

/**
 * The frequency to ask for. A caller's explicit choice must be one every product of
 * the buy offers (when we know what they offer); the tenant's default gives way to
 * the nearest one they do offer. `available` is null when nothing is known.
 */
export function chooseFrequency(requested: ReportingFrequency | undefined, tenantDefault: ReportingFrequency, available: ReportingFrequency[] | null): FrequencyChoice {
  if (requested) {
    if (available && !available.includes(requested)) {
      return { ok: false, message: `the buy's products report ${available.length ? available.join(', ') : 'at no common frequency'}, not ${requested}` };
    }
    return { ok: true, frequency: requested };
  }
  if (!available || available.includes(tenantDefault)) return { ok: true, frequency: tenantDefault };
  // Nearest by period length: daily before monthly, hourly before daily, and so on.
  const byDistance = [...available].sort((a, b) => Math.abs(Math.log(PERIOD_MS[a] / PERIOD_MS[tenantDefault])) - Math.abs(Math.log(PERIOD_MS[b] / PERIOD_MS[tenantDefault])));
  return byDistance[0] ? { ok: true, frequency: byDistance[0] } : { ok: true, frequency: tenantDefault };
}

/**
 * The frequencies every listed product offers, from the products' `reporting_capabilities`
 * (null when none of them is known: nothing constrains the choice).
 */
export function commonFrequencies(products: Array<{ available_reporting_frequencies?: unknown } | undefined>): ReportingFrequency[] | null {
  const known = products.filter((p): p is { available_reporting_frequencies: unknown[] } => !!p && Array.isArray(p.available_reporting_frequencies));
  if (known.length === 0) return null;
  return REPORTING_FREQUENCIES.filter((f) => known.every((p) => p.available_reporting_frequencies.includes(f)));
}

/**
 * When the first report should have come: one period after the later of the buy's
 * creation and its flight's start (the seller reports a period once it is over).
 */
export function firstReportExpectedAt(createdAt: number, flightStart: number | null, frequency: ReportingFrequency): number {
  return Math.max(createdAt, flightStart ?? createdAt) + PERIOD_MS[frequency];
}
