/**
 * RFC 9421 webhook-signature verification (AdCP webhook profile), as a thin
 * wrapper over @adcp/sdk's verifier. With its neighbours (webhook-keys.ts: key
 * sources; webhook-revocation.ts: revocation lists; sdk-signing.ts: the lazy
 * SDK import) these are the only webhook files that touch the SDK: everything the rest of the orchestrator sees (key sources, the nonce
 * replay store, the revocation source, the result) is our own type, so a
 * database-backed replay store or a different key fetcher can be plugged in
 * without knowing the SDK.
 *
 * What we add around the SDK (AdCP spec, webhooks, vectors README):
 *  - Key purpose (step 8) is checked here, not by the SDK: the spec accepts
 *    `adcp_use` `webhook-signing` and `request-signing`, and anything else must
 *    be `webhook_signature_key_purpose_invalid`. SDK 6.11 rejects request-signing
 *    keys and reports other purposes as `webhook_mode_mismatch`, a code reserved
 *    for HMAC-vs-9421 confusion. So the key source wrapper vets the key and then
 *    presents it to the SDK as a webhook key.
 *  - The replay cache is keyed by (keyid, nonce) across all endpoints, as the
 *    spec's digest states; the SDK's per-URL scope is deliberately dropped, which
 *    is stricter (a nonce is never accepted twice for a key, whatever the URL).
 *  - Failures come back as values, never exceptions; a failing dependency (key
 *    fetch, replay store) is marked `transient` so the route can answer 503
 *    (the sender retries) instead of a `webhook_*` 401 (the sender gives up).
 */
import type { AdcpJsonWebKey, JwksResolver, ReplayInsertResult, ReplayStore, RevocationStore } from '@adcp/sdk/signing/server';
import { signing, type SigningModule } from './sdk-signing.js';

export { InMemoryRevocationList, revocationListFromUrl, type RevocationListOptions, type UrlRevocationOptions } from './webhook-revocation.js';
export {
  brandJsonKeySource,
  jwksUriKeySource,
  keySourceFromConfig,
  staticKeySource,
  type BrandJsonKeySourceOptions,
  type UrlKeySourceOptions,
  type WebhookSigningConfig,
} from './webhook-keys.js';

// ---------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------

/** A public JWK as published in a seller's JWKS (private members are ignored). */
export interface WebhookJwk {
  kid: string;
  kty: string;
  crv?: string;
  alg?: string;
  use?: string;
  key_ops?: string[];
  adcp_use?: string;
  x?: string;
  y?: string;
  [member: string]: unknown;
}

/**
 * Where a seller's webhook keys come from. Build one per agent and keep it:
 * the URL-backed sources cache keys and refetch on an unknown kid (≥30 s apart).
 * `resolve` returns null for an unknown kid and throws only when the source
 * itself cannot be reached or read (reported as a transient failure).
 */
export interface WebhookKeySource {
  resolve(keyid: string): Promise<WebhookJwk | null>;
}

/** Outcome of one atomic nonce insert. */
export type NonceInsertResult = 'fresh' | 'replayed' | 'rate_abuse';

/**
 * Replay cache of accepted (keyid, nonce) pairs. Must be shared by every
 * process that receives webhooks (AdCP spec, webhooks), so production uses a
 * database table: primary key (keyid, nonce), column expires_at_ms, and a
 * sweep (or `WHERE expires_at_ms > now`) for expiry. All times are epoch ms.
 *
 * Call order per webhook: `isAtCapacity` and `has` run before the signature
 * check (cheap rejects, so an attacker cannot make us do crypto), and
 * `checkAndInsert` runs only after the signature and digest are good.
 */
export interface NonceReplayStore {
  /**
   * True when `keyid` already holds its cap of live (unexpired) nonces.
   * Step 9a: such a key is rejected with `webhook_signature_rate_abuse`
   * rather than silently evicting old nonces (which would reopen replays).
   */
  isAtCapacity(keyid: string, nowMs: number): Promise<boolean>;
  /** True when (keyid, nonce) is present and not expired. A fast pre-check only. */
  has(keyid: string, nonce: string, nowMs: number): Promise<boolean>;
  /**
   * Atomically insert (keyid, nonce) unless a live entry exists. This is the
   * authoritative replay check: two concurrent deliveries of one nonce must
   * see exactly one 'fresh'. Returns 'rate_abuse' (and inserts nothing) when
   * the key's cap or the store's total cap is reached.
   */
  checkAndInsert(keyid: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<NonceInsertResult>;
}

export type RevocationState = 'ok' | 'revoked' | 'stale';

/**
 * Revoked key ids for a seller. 'stale' means the list has not been refreshed
 * within its grace (next_update + 4 × poll interval): verification must then
 * fail closed with `webhook_signature_revocation_stale`.
 */
export interface RevocationSource {
  check(keyid: string, nowMs: number): Promise<RevocationState>;
}

export interface WebhookRequest {
  method: string;
  /** The full target URI the seller signed (scheme, host, port, path, query). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** Raw body bytes exactly as received; the Content-Digest is checked over them. */
  rawBody: Buffer;
}

export interface VerifyDeps {
  keys: WebhookKeySource;
  replayStore: NonceReplayStore;
  revocation?: RevocationSource;
  /** Clock, epoch ms. */
  now?: () => number;
}

export type WebhookSignatureCode =
  | 'webhook_signature_header_malformed'
  | 'webhook_signature_params_incomplete'
  | 'webhook_signature_tag_invalid'
  | 'webhook_signature_alg_not_allowed'
  | 'webhook_signature_window_invalid'
  | 'webhook_signature_components_incomplete'
  | 'webhook_target_uri_malformed'
  | 'webhook_signature_key_unknown'
  | 'webhook_signature_key_purpose_invalid'
  | 'webhook_mode_mismatch'
  | 'webhook_signature_key_revoked'
  | 'webhook_signature_revocation_stale'
  | 'webhook_signature_rate_abuse'
  | 'webhook_signature_invalid'
  | 'webhook_signature_digest_mismatch'
  | 'webhook_signature_replayed'
  /** Not a spec code on purpose: our dependency failed, answer 503 so the sender retries. */
  | 'webhook_verifier_unavailable';

export type Rfc9421Result =
  | { ok: true; keyid: string; verifiedAt: number }
  | {
      ok: false;
      code: WebhookSignatureCode;
      message: string;
      /** The checklist step that failed (security.mdx numbering), when known. */
      step?: number;
      /** True when the failure is ours (key fetch, store), not the sender's. */
      transient?: boolean;
    };

// ---------------------------------------------------------------------------
// Verification
// ---------------------------------------------------------------------------

/** Key purposes a webhook signature may be made with (vectors README, step 8). */
const ACCEPTED_KEY_PURPOSES: ReadonlySet<string> = new Set(['webhook-signing', 'request-signing']);

class KeyPurposeError extends Error {}
/** A dependency (key source, stores) failed: not the sender's fault. */
class DependencyError extends Error {
  constructor(
    message: string,
    readonly code: WebhookSignatureCode,
    readonly step: number,
  ) {
    super(message);
  }
}
class StaleRevocationError extends Error {}

export async function verifyRfc9421Webhook(input: WebhookRequest, deps: VerifyDeps): Promise<Rfc9421Result> {
  const nowMs = deps.now ?? Date.now;
  const sdk = await signing();
  try {
    const verified = await sdk.verifyWebhookSignature(
      {
        method: input.method,
        url: input.url,
        headers: input.headers,
        // The SDK hashes a Buffer byte-for-byte (a string would be re-encoded
        // as UTF-8 and break the digest of any non-UTF-8 body). Its type says
        // string only, hence the cast.
        body: input.rawBody as unknown as string,
      },
      {
        jwks: purposeCheckingResolver(deps.keys),
        replayStore: replayStoreAdapter(deps.replayStore, nowMs),
        revocationStore: revocationAdapter(deps.revocation, nowMs),
        now: () => Math.floor(nowMs() / 1000),
      },
    );
    return { ok: true, keyid: verified.keyid, verifiedAt: verified.verified_at * 1000 };
  } catch (err) {
    return failureFrom(err, sdk);
  }
}

function failureFrom(err: unknown, sdk: SigningModule): Rfc9421Result & { ok: false } {
  if (err instanceof sdk.WebhookSignatureError) {
    return { ok: false, code: err.code, message: err.message, step: err.failedStep };
  }
  if (err instanceof KeyPurposeError) {
    return { ok: false, code: 'webhook_signature_key_purpose_invalid', message: err.message, step: 8 };
  }
  if (err instanceof StaleRevocationError) {
    return { ok: false, code: 'webhook_signature_revocation_stale', message: err.message, step: 9 };
  }
  if (err instanceof DependencyError) {
    return { ok: false, code: err.code, message: err.message, step: err.step, transient: true };
  }
  if (err instanceof sdk.RequestSignatureError) {
    // Shared SDK helpers (e.g. JWK import) raise request-profile codes; the
    // suffix is the same taxonomy, so translate to the webhook profile.
    const code = err.code.replace(/^request_signature_/, 'webhook_signature_') as WebhookSignatureCode;
    return { ok: false, code, message: err.message, step: err.failedStep };
  }
  // Anything else (a malformed URL deep in canonicalisation, a crypto library
  // error on an odd key) fails closed as an invalid signature.
  const message = err instanceof Error ? err.message : String(err);
  return { ok: false, code: 'webhook_signature_invalid', message };
}

/**
 * Wrap our key source for the SDK: vet the key's purpose ourselves (step 8),
 * then hand the SDK a copy marked `webhook-signing` so its own, narrower
 * purpose rule cannot misfire.
 */
function purposeCheckingResolver(source: WebhookKeySource): JwksResolver {
  return {
    async resolve(keyid: string): Promise<AdcpJsonWebKey | null> {
      let jwk: WebhookJwk | null;
      try {
        jwk = await source.resolve(keyid);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        throw new DependencyError(`Could not resolve keys for keyid "${keyid}": ${why}`, 'webhook_signature_key_unknown', 7);
      }
      if (!jwk || typeof jwk !== 'object' || jwk.kid !== keyid) return null;
      // The sources hand back the same key object until they refetch, so the vetted
      // copy is kept per object: a rotated or refetched key is a new object, vetted anew.
      const known = vetted.get(jwk);
      if (known) return known;
      const presented = vetKey(jwk, keyid);
      vetted.set(jwk, presented);
      return presented;
    },
  };
}

/** Vetted, SDK-ready copies of keys, per key object a source returned (see purposeCheckingResolver). */
const vetted = new WeakMap<WebhookJwk, AdcpJsonWebKey>();

function vetKey(jwk: WebhookJwk, keyid: string): AdcpJsonWebKey {
  if (jwk.use !== undefined && jwk.use !== 'sig') {
    throw new KeyPurposeError(`JWK "${keyid}" has use="${String(jwk.use)}", expected "sig".`);
  }
  if (!Array.isArray(jwk.key_ops) || !jwk.key_ops.includes('verify')) {
    throw new KeyPurposeError(`JWK "${keyid}" key_ops does not include "verify".`);
  }
  if (typeof jwk.adcp_use !== 'string' || !ACCEPTED_KEY_PURPOSES.has(jwk.adcp_use)) {
    throw new KeyPurposeError(`JWK "${keyid}" adcp_use="${String(jwk.adcp_use)}" is not a webhook signing purpose.`);
  }
  const { d: _private, ...publicPart } = jwk;
  return { ...publicPart, adcp_use: 'webhook-signing' } as AdcpJsonWebKey;
}

/** Our NonceReplayStore seen through the SDK's ReplayStore (scope dropped, seconds → ms). */
function replayStoreAdapter(store: NonceReplayStore, nowMs: () => number): ReplayStore {
  const guard = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new DependencyError(`Replay store ${what} failed: ${why}`, 'webhook_verifier_unavailable', 12);
    }
  };
  return {
    has: (keyid, _scope, nonce) => guard('lookup', () => store.has(keyid, nonce, nowMs())),
    isCapHit: (keyid) => guard('capacity check', () => store.isAtCapacity(keyid, nowMs())),
    async insert(keyid, _scope, nonce, ttlSeconds): Promise<ReplayInsertResult> {
      const now = nowMs();
      const result = await guard('insert', () => store.checkAndInsert(keyid, nonce, now + ttlSeconds * 1000, now));
      return result === 'fresh' ? 'ok' : result;
    },
  };
}

function revocationAdapter(source: RevocationSource | undefined, nowMs: () => number): RevocationStore {
  return {
    async isRevoked(keyid: string): Promise<boolean> {
      if (!source) return false;
      let state: RevocationState;
      try {
        state = await source.check(keyid, nowMs());
      } catch (err) {
        // An unreadable revocation list is treated like a stale one: fail
        // closed, but as our problem (transient) so the sender retries later.
        const why = err instanceof Error ? err.message : String(err);
        throw new DependencyError(`Revocation list unavailable: ${why}`, 'webhook_signature_revocation_stale', 9);
      }
      if (state === 'stale') throw new StaleRevocationError(`Revocation list for keyid "${keyid}" is past its grace period.`);
      return state === 'revoked';
    },
  };
}
