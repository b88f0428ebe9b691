/**
 * The reporting webhook we ask a seller to fire (the AdCP spec, `reporting_webhook`
 * on `create_media_buy`), and when its reports are due. Pure.
 */

export const REPORTING_FREQUENCIES = ['hourly', 'daily', 'monthly'] as const;
export type ReportingFrequency = (typeof REPORTING_FREQUENCIES)[number];

/**
 * How a reporting fire authenticates: legacy HMAC-SHA256 (the default) or Bearer
 * with a per-buy secret in `authentication`. RFC 9421 (no `authentication`, the seller
 * signing with its published keys) is what the spec prefers, but every AdCP 3.x
 * schema requires `reporting_webhook.authentication`: a seller that validates refuses
 * a request without it, so it can be asked for but is refused (reporting-choice.ts).
 * Fires signed with RFC 9421 are still accepted, for buys made before.
 */
export const REPORTING_AUTH = ['hmac', 'bearer', 'rfc9421'] as const;
export type ReportingAuth = (typeof REPORTING_AUTH)[number];

/**
 * How a buy's delivery reaches us, as its row keeps it (`media_buys.reporting_auth`):
 * fires to our reporting webhook authenticated so; `none`: the caller set its own
 * reporting webhook; `polled:governed`: a governed buy of a tenant whose setting leaves
 * the reporting webhook out of governed buys; `polled:no_public_url`: no URL sellers
 * could reach. Without fires, delivery is polled (`get_media_buy_delivery`).
 */
export type ReportingMode = ReportingAuth | 'none' | 'polled:governed' | 'polled:no_public_url';

/** Why a buy's delivery is polled instead of fired to us (null: it is fired to us). */
export type PollingReason = 'own_webhook' | 'governed_buys_polled' | 'no_public_url';

export function firesReachUs(mode: string): boolean {
  return pollingReason(mode) === null;
}

export function pollingReason(mode: string): PollingReason | null {
  if (mode === 'none') return 'own_webhook';
  if (mode === 'polled:governed') return 'governed_buys_polled';
  if (mode === 'polled:no_public_url') return 'no_public_url';
  return null;
}

/** Whether governed buys carry our reporting webhook (its secret shown to the governance agent) or are polled. */
export const GOVERNED_REPORTING = ['webhook', 'polling'] as const;
export type GovernedReporting = (typeof GOVERNED_REPORTING)[number];

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

/** What a person reads of how a buy's delivery reaches us. */
export function deliveryRouteText(mode: string): string {
  switch (pollingReason(mode)) {
    case 'own_webhook':
      return 'polled (the caller set its own reporting webhook)';
    case 'governed_buys_polled':
      return "polled (the tenant's settings poll governed buys: no reporting webhook was sent)";
    case 'no_public_url':
      return 'polled (no public URL for sellers to reach: no reporting webhook was sent)';
    default:
      return `webhook (${mode})`;
  }
}
