/**
 * Which reporting webhook a new `create_media_buy` gets (README, Media buys):
 * ours, unless the caller set its own `reporting_webhook` (then theirs is kept
 * and the buy is polled), we have no public URL for sellers to reach, or the buy
 * is governed and the tenant's setting polls governed buys. Its frequency is the
 * caller's `reporting.frequency`, else the tenant's default (`daily` unless set),
 * kept within what the buy's products offer when we know it (the tenant's latest
 * `get_products` answers).
 *
 * Its authentication is a per-buy HMAC secret by default (Bearer on request). Every
 * AdCP schema requires `reporting_webhook.authentication`, so RFC 9421 (no secret) is
 * refused: a seller that validates would refuse the buy. A governed request goes to
 * the governance agent in full (the check's payload is the exact seller request), so
 * that agent sees the secret too: it authenticates nothing but that one buy's delivery
 * reports. A tenant that wants even that kept from it sets
 * `reporting.governed_buys: "polling"`: governed buys then carry no reporting webhook
 * and their delivery is read with `get_media_buy_delivery`.
 */
import { DEFAULT_REPORTING_FREQUENCY, chooseFrequency, commonFrequencies, type PollingReason, type ReportingAuth, type ReportingFrequency } from '../../domain/reporting-webhook.js';
import type { GovernedState } from '../../domain/governed-flow.js';
import type { Store } from '../../store/index.js';
import { ProductReads } from '../../store/product-reads.js';
import { EngineError } from '../errors.js';

/** What a caller may ask for (`POST /v1/media-buys` `reporting`). */
export interface ReportingAsked {
  frequency?: ReportingFrequency;
  authentication?: ReportingAuth;
}

/** What the request will carry: our reporting webhook at this frequency, authenticated so. */
export interface ReportingPlan {
  frequency: ReportingFrequency;
  auth: ReportingAuth;
}

/** Our reporting webhook at this plan, or none of ours and why (the buy is then polled). */
export type ReportingChoice = { plan: ReportingPlan } | { plan: null; reason: PollingReason };

export async function chooseReporting(
  store: Store,
  input: { tenantId: string; agentId: string; params: Record<string, unknown>; asked?: ReportingAsked; governed: boolean; publicUrl?: string },
): Promise<ReportingChoice> {
  const { asked, params } = input;
  if (params.reporting_webhook !== undefined) {
    if (asked) throw new EngineError('reporting_conflict', 'the request sets its own reporting_webhook: leave out `reporting`, or leave reporting_webhook to us', 400);
    return { plan: null, reason: 'own_webhook' };
  }
  // Without a public URL no seller can reach us: the buy is polled instead.
  if (!input.publicUrl) {
    if (asked) throw new EngineError('webhook_unavailable', 'reporting webhooks need ADCP_ORCH_PUBLIC_URL to be set', 400);
    return { plan: null, reason: 'no_public_url' };
  }
  const auth = asked?.authentication ?? 'hmac';
  if (auth === 'rfc9421') {
    throw new EngineError(
      'reporting_auth_unavailable',
      'every AdCP schema requires reporting_webhook.authentication (HMAC-SHA256 or Bearer): a reporting webhook without it, to be signed with RFC 9421, is refused by sellers that validate their requests; use hmac (the default) or bearer',
      400,
    );
  }
  const settings = await store.settings.forTenantIn(input.tenantId);
  if (input.governed && settings.reporting?.governed_buys === 'polling') {
    if (asked) throw new EngineError('reporting_conflict', "the tenant's settings poll governed buys (reporting.governed_buys: polling): leave out `reporting`", 400);
    return { plan: null, reason: 'governed_buys_polled' };
  }
  const productIds = productIdsOf(params);
  const known = await new ProductReads(store.db).reportingCapabilities(input.tenantId, input.agentId, productIds);
  const available = commonFrequencies(productIds.map((id) => known.get(id)));
  const choice = chooseFrequency(asked?.frequency, settings.reporting?.frequency ?? DEFAULT_REPORTING_FREQUENCY, available);
  if (!choice.ok) throw new EngineError('reporting_frequency_unavailable', choice.message, 422, { available });
  return { plan: { frequency: choice.frequency, auth } };
}

function productIdsOf(params: Record<string, unknown>): string[] {
  const packages = Array.isArray(params.packages) ? params.packages : [];
  const ids = packages.map((p) => (p && typeof p === 'object' ? (p as { product_id?: unknown }).product_id : undefined)).filter((id): id is string => typeof id === 'string');
  return [...new Set(ids)];
}

/**
 * An operation's input with the choice made: our reporting webhook's plan (or none), and on
 * a governed buy the note that its tenant's setting polls it, for the buy to say so.
 */
export function withReportingChoice<T extends { reporting?: ReportingPlan | null; governance?: GovernedState }>(input: T, choice: ReportingChoice): T {
  const polledByTenant = choice.plan === null && choice.reason === 'governed_buys_polled' && input.governance !== undefined;
  return { ...input, reporting: choice.plan, ...(polledByTenant ? { governance: { ...input.governance!, reporting_polled: true } } : {}) };
}

/** A stored request's reporting plan, when the reporting webhook in it is ours: what a corrected copy asks for again. */
export function reportingPlanOf(request: Record<string, unknown>, ours: boolean): ReportingPlan | null {
  const rw = request.reporting_webhook as { reporting_frequency?: unknown; authentication?: { schemes?: unknown } } | undefined;
  if (!ours || !rw || typeof rw.reporting_frequency !== 'string') return null;
  const scheme = Array.isArray(rw.authentication?.schemes) ? rw.authentication.schemes[0] : undefined;
  const auth: ReportingAuth = scheme === 'HMAC-SHA256' ? 'hmac' : scheme === 'Bearer' ? 'bearer' : 'rfc9421';
  return { frequency: rw.reporting_frequency as ReportingFrequency, auth };
}
