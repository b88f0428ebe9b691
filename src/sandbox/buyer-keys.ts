/**
 * The buyer's request-signing keys as the sandbox seller sees them: its JWKS fetched
 * over HTTP and cached, following the spec's discovery rules (security.mdx, "Agent key
 * publication"): kept for the response's max-age (at most 30 minutes), and on a `kid`
 * it does not know, fetched again at once, then not again within 30 s (the cooldown is
 * between refetches, not before the first). So a rotation is seen at its first new kid,
 * while a request signed with the previous key still verifies from the cache.
 *
 * A JWKS that cannot be fetched or read throws (the verifier answers
 * `request_signature_jwks_unavailable`); a malformed entry is skipped, never trusted.
 */
import type { AdcpJsonWebKey, JwksResolver } from '@adcp/sdk/signing/server';

const COOLDOWN_S = 30;
const MAX_AGE_S = 1_800;
const MAX_JWKS_BYTES = 65_536;

export class BuyerJwks implements JwksResolver {
  private keys: Map<string, AdcpJsonWebKey> | undefined;
  private expiresAt = 0;
  private lastRefetchAt: number | undefined;
  private inFlight: Promise<void> | undefined;
  /** How many times the JWKS was fetched (tests read it). */
  fetches = 0;

  constructor(
    private readonly url: () => string,
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  async resolve(kid: string): Promise<AdcpJsonWebKey | null> {
    if (!this.keys) {
      await this.fetch();
    } else if (!this.keys.has(kid)) {
      const now = this.now();
      if (this.lastRefetchAt === undefined || now - this.lastRefetchAt >= COOLDOWN_S) {
        this.lastRefetchAt = now;
        await this.fetch();
      }
    } else if (this.now() > this.expiresAt) {
      // Past max-age: look again, but a failure keeps what we have.
      await this.fetch().catch(() => undefined);
    }
    return this.keys?.get(kid) ?? null;
  }

  private fetch(): Promise<void> {
    this.inFlight ??= this.load().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async load(): Promise<void> {
    this.fetches++;
    const res = await fetch(this.url(), { headers: { accept: 'application/jwk-set+json, application/json' }, signal: AbortSignal.timeout(5_000) });
    if (!res.ok) throw new Error(`JWKS fetch answered HTTP ${res.status}`);
    const text = await res.text();
    if (text.length > MAX_JWKS_BYTES) throw new Error('JWKS larger than 64 KiB');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error('JWKS is not JSON');
    }
    const list = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(list)) throw new Error('JWKS has no keys array');
    const keys = new Map<string, AdcpJsonWebKey>();
    for (const entry of list) {
      if (entry && typeof entry === 'object' && typeof (entry as { kid?: unknown }).kid === 'string' && typeof (entry as { kty?: unknown }).kty === 'string') {
        const jwk = entry as AdcpJsonWebKey;
        keys.set(jwk.kid, jwk);
      }
    }
    const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get('cache-control') ?? '')?.[1] ?? MAX_AGE_S);
    this.keys = keys;
    this.expiresAt = this.now() + Math.min(maxAge, MAX_AGE_S);
  }
}
