/**
 * Where a seller's webhook signing keys come from (README.md, Using it `webhook_signing`):
 * inline JWKS, a `jwks_uri`, or brand.json discovery. The URL-backed sources are
 * the SDK's resolvers (SSRF-checked, cached, refetch on an unknown kid).
 */
import type { JwksResolver } from '@adcp/sdk/signing/server';
import { secondsClock, signing } from './sdk-signing.js';
import type { WebhookJwk, WebhookKeySource } from './webhook-signature.js';


export interface UrlKeySourceOptions {
  /** Allow http:// and private/loopback addresses (tests and local sandboxes only). */
  allowPrivateNetwork?: boolean;
  /** Minimum seconds between refetches (spec floor 30). */
  minCooldownSeconds?: number;
  /** Longest a fetched key set is used before refetching; keep ≤ the revocation poll interval. */
  maxAgeSeconds?: number;
  /** Clock, epoch ms (for cache expiry). */
  now?: () => number;
}

/** Keys given inline at agent registration (`webhook_signing.jwks`). */
export function staticKeySource(jwks: { keys: WebhookJwk[] } | WebhookJwk[]): WebhookKeySource {
  const list = Array.isArray(jwks) ? jwks : jwks.keys;
  const byKid = new Map<string, WebhookJwk>();
  for (const key of list) if (key && typeof key.kid === 'string') byKid.set(key.kid, key);
  return { resolve: async (keyid) => byKid.get(keyid) ?? null };
}

/** Keys fetched from a JWKS URL (`webhook_signing.jwks_uri`), SSRF-checked and cached by the SDK. */
export function jwksUriKeySource(url: string, options: UrlKeySourceOptions = {}): WebhookKeySource {
  // Built on first use (the SDK loads lazily); one resolver, so its key cache is kept.
  let resolver: Promise<JwksResolver> | undefined;
  const make = async () =>
    new (await signing()).HttpsJwksResolver(url, {
      allowPrivateIp: options.allowPrivateNetwork ?? false,
      ...(options.minCooldownSeconds !== undefined && { minCooldownSeconds: options.minCooldownSeconds }),
      ...(options.maxAgeSeconds !== undefined && { maxAgeSeconds: options.maxAgeSeconds }),
      ...(options.now && { now: secondsClock(options.now) }),
    });
  return { resolve: async (keyid) => (await (resolver ??= make())).resolve(keyid) as Promise<WebhookJwk | null> };
}

export interface BrandJsonKeySourceOptions extends UrlKeySourceOptions {
  /**
   * Which `agents[]` entry of brand.json holds the webhook keys. The SDK picks
   * by type (+ id when several share a type); sellers are `sales` agents.
   */
  agentType?: 'sales' | 'governance' | 'signals' | 'creative' | 'buying' | 'brand' | 'rights' | 'measurement';
  agentId?: string;
  brandId?: string;
}

/** Keys found through the seller's brand.json → agents[] → jwks_uri (`webhook_signing.brand_json_url`). */
export function brandJsonKeySource(url: string, options: BrandJsonKeySourceOptions = {}): WebhookKeySource {
  let resolver: Promise<JwksResolver> | undefined;
  const make = async () =>
    new (await signing()).BrandJsonJwksResolver(url, {
      agentType: options.agentType ?? 'sales',
      ...(options.agentId !== undefined && { agentId: options.agentId }),
      ...(options.brandId !== undefined && { brandId: options.brandId }),
      allowPrivateIp: options.allowPrivateNetwork ?? false,
      ...(options.minCooldownSeconds !== undefined && { minCooldownSeconds: options.minCooldownSeconds }),
      ...(options.maxAgeSeconds !== undefined && { maxAgeSeconds: options.maxAgeSeconds }),
      ...(options.now && { now: secondsClock(options.now) }),
    });
  return { resolve: async (keyid) => (await (resolver ??= make())).resolve(keyid) as Promise<WebhookJwk | null> };
}

/** An agent's registered `webhook_signing` config (README.md, Using it). */
export interface WebhookSigningConfig {
  jwks?: { keys: WebhookJwk[] } | WebhookJwk[];
  jwks_uri?: string;
  brand_json_url?: string;
}

/**
 * The key source for an agent's registration. Inline keys win (the operator
 * pinned them), then an explicit jwks_uri, then brand.json discovery.
 * Returns null when the config names no source at all.
 */
export function keySourceFromConfig(
  config: WebhookSigningConfig,
  options: BrandJsonKeySourceOptions = {},
): WebhookKeySource | null {
  if (config.jwks) return staticKeySource(config.jwks);
  if (config.jwks_uri) return jwksUriKeySource(config.jwks_uri, options);
  if (config.brand_json_url) return brandJsonKeySource(config.brand_json_url, options);
  return null;
}
