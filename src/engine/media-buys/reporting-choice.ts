/**
 * Which reporting webhook a new `create_media_buy` gets (README, Media buys):
 * ours, unless the caller set its own `reporting_webhook` (then theirs is kept
 * and the buy is polled) or we have no public URL for sellers to reach. Its
 * frequency is the caller's `reporting.frequency`, else the tenant's default
 * (`daily` unless set), kept within what the buy's products offer when we know
 * it (the tenant's latest `get_products` answers). Its authentication is HMAC by
 * default; a governed buy's is RFC 9421, since its request is shown to the
 * governance agent in full and must carry no secret.
 */
import { DEFAULT_REPORTING_FREQUENCY, chooseFrequency, commonFrequencies, type ReportingAuth, type ReportingFrequency } from '../../domain/reporting-webhook.js';
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

export async function chooseReporting(
  store: Store,
  input: { tenantId: string; agentId: string; params: Record<string, unknown>; asked?: ReportingAsked; governed: boolean; publicUrl?: string },
): Promise<ReportingPlan | null> {
  const { asked, params } = input;
  if (params.reporting_webhook !== undefined) {
    if (asked) throw new EngineError('reporting_conflict', 'the request sets its own reporting_webhook: leave out `reporting`, or leave reporting_webhook to us', 400);
    return null;
  }
  // Without a public URL no seller can reach us: the buy is polled instead.
  if (!input.publicUrl) {
    if (asked) throw new EngineError('webhook_unavailable', 'reporting webhooks need ADCP_ORCH_PUBLIC_URL to be set', 400);
    return null;
  }
  const auth = asked?.authentication ?? (input.governed ? 'rfc9421' : 'hmac');
  if (input.governed && auth !== 'rfc9421') {
    throw new EngineError(
      'webhook_mode_not_allowed',
      `a governed request goes to the governance agent in full, reporting_webhook included: a ${auth} secret would be disclosed to it; use rfc9421 (the default for governed buys)`,
      400,
    );
  }
  const settings = await store.settings.forTenantIn(input.tenantId);
  const productIds = productIdsOf(params);
  const known = await new ProductReads(store.db).reportingCapabilities(input.tenantId, input.agentId, productIds);
  const available = commonFrequencies(productIds.map((id) => known.get(id)));
  const choice = chooseFrequency(asked?.frequency, settings.reporting?.frequency ?? DEFAULT_REPORTING_FREQUENCY, available);
  if (!choice.ok) throw new EngineError('reporting_frequency_unavailable', choice.message, 422, { available });
  return { frequency: choice.frequency, auth };
}

function productIdsOf(params: Record<string, unknown>): string[] {
  const packages = Array.isArray(params.packages) ? params.packages : [];
  const ids = packages.map((p) => (p && typeof p === 'object' ? (p as { product_id?: unknown }).product_id : undefined)).filter((id): id is string => typeof id === 'string');
  return [...new Set(ids)];
}

/** A stored request's reporting plan, when the reporting webhook in it is ours: what a corrected copy asks for again. */
export function reportingPlanOf(request: Record<string, unknown>, ours: boolean): ReportingPlan | null {
  const rw = request.reporting_webhook as { reporting_frequency?: unknown; authentication?: { schemes?: unknown } } | undefined;
  if (!ours || !rw || typeof rw.reporting_frequency !== 'string') return null;
  const scheme = Array.isArray(rw.authentication?.schemes) ? rw.authentication.schemes[0] : undefined;
  const auth: ReportingAuth = scheme === 'HMAC-SHA256' ? 'hmac' : scheme === 'Bearer' ? 'bearer' : 'rfc9421';
  return { frequency: rw.reporting_frequency as ReportingFrequency, auth };
}
