/**
 * Seller-side verification of a `governance_context` (AdCP JWS profile, the
 * seller checklist), with jose. Checks run in the checklist's order and stop
 * at the first failure, which is reported with the profile's stable code:
 *
 *   governance_token_invalid        malformed; alg not EdDSA/ES256; typ not adcp-gov+jws;
 *                                   crit names unknown, or a critical marker/claim without
 *                                   its partner; bad signature; a required claim missing
 *                                   or malformed
 *   governance_key_unknown          no usable key with that kid (after one refetch)
 *   governance_jwks_unavailable     the JWKS could not be fetched
 *   governance_issuer_not_authorized  `iss` is not the governance agent this seller trusts
 *   governance_token_not_applicable `aud`, `phase`, `sub` (plan), `caller`, `media_buy_id`,
 *                                   `authorized_task`, `authorized_payload_hash` or
 *                                   `authorized_commitment` does not fit this request
 *   governance_token_expired / _not_yet_valid   `exp` / `iat`, `nbf` (±clock skew)
 *   governance_token_replayed       the (iss, aud, jti) was already used
 *
 * `authorized_payload_hash` is recomputed over the request as received, minus
 * exactly `governance_context` and `context` (hashes.ts).
 */
import {
  compactVerify,
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors as joseErrors,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from 'jose';
import { governedPayloadHash } from './governance/hashes.js';
import { CRITICAL_CLAIMS, GOVERNANCE_TOKEN_TYPE } from './governance/signing.js';

export type GovernanceTokenCode =
  | 'governance_token_invalid'
  | 'governance_key_unknown'
  | 'governance_jwks_unavailable'
  | 'governance_issuer_not_authorized'
  | 'governance_token_not_applicable'
  | 'governance_token_expired'
  | 'governance_token_not_yet_valid'
  | 'governance_token_replayed';

export class GovernanceTokenError extends Error {
  constructor(
    readonly code: GovernanceTokenCode,
    /** For the seller's own log and stats; never sent to the caller. */
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
    this.name = 'GovernanceTokenError';
  }
}

type VerifyKey = Parameters<typeof compactVerify>[1];

/** Finds the verification key for a token header (throws GovernanceTokenError). */
export type GovernanceKeyResolver = (header: JWSHeaderParameters) => Promise<VerifyKey>;

export interface TokenExpectations {
  /** The governance agent this seller trusts for the account (`iss`, byte for byte). */
  issuer: string;
  /** This seller's own agent URL(s); `aud` must equal one, byte for byte. */
  audiences: readonly string[];
  phase: 'intent' | 'purchase' | 'modification' | 'delivery';
  /** The task being invoked, e.g. create_media_buy. */
  task: string;
  /** The request's arguments as received. */
  payload: Record<string, unknown>;
  /** AdCP 3.0: `sub` must equal the request's plan_id. Omit to skip (3.2 opaque `sub`). */
  planId?: string;
  /** The transport-authenticated caller, when the seller knows it. */
  authenticatedCaller?: string;
  /** What this request would commit; required of monetary actions. */
  commitment?: { amount: number; currency: string };
  media_buy_id?: string;
  nowSeconds: number;
  clockSkewSeconds: number;
  /** True when this (iss, aud, jti) was already used. */
  jtiSeen?: (iss: string, aud: string, jti: string) => boolean;
}

const ALGORITHMS = ['EdDSA', 'ES256'];
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const CRIT_UNDERSTOOD: Record<string, boolean> = Object.fromEntries(CRITICAL_CLAIMS.map((c) => [c, true]));
const REQUIRED_STRING_CLAIMS = ['iss', 'sub', 'aud', 'jti', 'phase', 'caller', 'check_id', 'plan_hash'] as const;

const fail = (code: GovernanceTokenCode, detail: string): never => {
  throw new GovernanceTokenError(code, detail);
};

export async function verifyGovernanceContext(
  token: unknown,
  keys: GovernanceKeyResolver,
  expect: TokenExpectations,
): Promise<{ header: JWSHeaderParameters; claims: Record<string, unknown> }> {
  // 1–4: shape and header, before any key is looked up.
  if (typeof token !== 'string' || !COMPACT_JWS.test(token)) fail('governance_token_invalid', 'not a compact JWS');
  let header: JWSHeaderParameters;
  try {
    header = decodeProtectedHeader(token as string) as JWSHeaderParameters;
  } catch {
    return fail('governance_token_invalid', 'protected header is not JSON');
  }
  if (!ALGORITHMS.includes(String(header.alg))) fail('governance_token_invalid', `alg ${String(header.alg)} is not allowed`);
  if (header.typ !== GOVERNANCE_TOKEN_TYPE) fail('governance_token_invalid', `typ ${String(header.typ)}`);
  if (typeof header.kid !== 'string' || header.kid.length === 0) fail('governance_token_invalid', 'no kid');
  const crit = header.crit;
  if (crit !== undefined) {
    if (!Array.isArray(crit) || crit.some((c) => !(c in CRIT_UNDERSTOOD))) fail('governance_token_invalid', 'unknown crit entry');
  }
  for (const name of CRITICAL_CLAIMS) {
    const marked = header[name] === true;
    const listed = Array.isArray(crit) && crit.includes(name);
    if (marked !== listed || (header[name] !== undefined && header[name] !== true)) {
      fail('governance_token_invalid', `critical marker ${name} and its crit entry must come together`);
    }
  }

  // 5–7: key, purpose, signature.
  const key = await keys(header);
  let payloadBytes: Uint8Array;
  try {
    ({ payload: payloadBytes } = await compactVerify(token as string, key, { algorithms: ALGORITHMS, crit: CRIT_UNDERSTOOD }));
  } catch {
    return fail('governance_token_invalid', 'signature does not verify');
  }
  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(new TextDecoder().decode(payloadBytes)) as Record<string, unknown>;
  } catch {
    return fail('governance_token_invalid', 'payload is not JSON');
  }
  if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) fail('governance_token_invalid', 'payload is not an object');

  checkClaimShapes(header, claims);
  checkBindings(claims, expect);
  return { header, claims };
}

/** Required claims present and well-formed; critical claims paired with their markers. */
function checkClaimShapes(header: JWSHeaderParameters, claims: Record<string, unknown>): void {
  for (const name of REQUIRED_STRING_CLAIMS) {
    const v = claims[name];
    if (typeof v !== 'string' || v.length === 0) fail('governance_token_invalid', `claim ${name} missing or empty`);
  }
  for (const name of ['iat', 'exp'] as const) {
    if (typeof claims[name] !== 'number' || !Number.isFinite(claims[name])) fail('governance_token_invalid', `claim ${name} missing`);
  }
  if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || !Number.isFinite(claims.nbf))) {
    fail('governance_token_invalid', 'claim nbf malformed');
  }
  for (const name of CRITICAL_CLAIMS) {
    if ((claims[name] !== undefined) !== (header[name] === true)) fail('governance_token_invalid', `claim ${name} without its critical marker, or the reverse`);
  }
  if ((claims.authorized_task === undefined) !== (claims.authorized_payload_hash === undefined)) {
    fail('governance_token_invalid', 'authorized_task and authorized_payload_hash come as a pair');
  }
  if (claims.authorized_task !== undefined && typeof claims.authorized_task !== 'string') fail('governance_token_invalid', 'authorized_task malformed');
  if (claims.authorized_payload_hash !== undefined && typeof claims.authorized_payload_hash !== 'string') {
    fail('governance_token_invalid', 'authorized_payload_hash malformed');
  }
  const ceiling = claims.authorized_commitment;
  if (ceiling !== undefined) {
    const c = ceiling as { amount?: unknown; currency?: unknown };
    if (ceiling === null || typeof ceiling !== 'object') fail('governance_token_invalid', 'authorized_commitment malformed');
    if (typeof c.currency !== 'string' || c.currency.length === 0) fail('governance_token_invalid', 'authorized_commitment.currency missing');
    if (typeof c.amount !== 'number' || !Number.isFinite(c.amount) || c.amount < 0) fail('governance_token_invalid', 'authorized_commitment.amount missing');
  }
}

/** Steps 8–15: is this well-formed token for this seller, this request, now? */
function checkBindings(claims: Record<string, unknown>, expect: TokenExpectations): void {
  const iss = claims.iss as string;
  const aud = claims.aud as string;
  if (iss !== expect.issuer) fail('governance_issuer_not_authorized', `iss ${iss}`);
  if (!expect.audiences.includes(aud)) fail('governance_token_not_applicable', `aud ${aud}`);
  const now = expect.nowSeconds;
  const skew = expect.clockSkewSeconds;
  if (now > (claims.exp as number) + skew) fail('governance_token_expired', `exp ${String(claims.exp)}`);
  if ((claims.iat as number) > now + skew) fail('governance_token_not_yet_valid', `iat ${String(claims.iat)}`);
  if (typeof claims.nbf === 'number' && now < claims.nbf - skew) fail('governance_token_not_yet_valid', `nbf ${claims.nbf}`);
  if (claims.phase !== expect.phase) fail('governance_token_not_applicable', `phase ${String(claims.phase)}`);
  if (expect.planId !== undefined && claims.sub !== expect.planId) fail('governance_token_not_applicable', `sub ${String(claims.sub)}`);
  if (expect.authenticatedCaller !== undefined && claims.caller !== expect.authenticatedCaller) {
    fail('governance_token_not_applicable', `caller ${String(claims.caller)}`);
  }
  if (expect.phase === 'intent' ? claims.media_buy_id != null : claims.media_buy_id !== expect.media_buy_id) {
    fail('governance_token_not_applicable', 'media_buy_id');
  }
  if (claims.authorized_task === undefined) fail('governance_token_not_applicable', 'the token binds no task and payload');
  if (claims.authorized_task !== expect.task) fail('governance_token_not_applicable', `authorized_task ${String(claims.authorized_task)}`);
  if (claims.authorized_payload_hash !== governedPayloadHash(expect.payload)) {
    fail('governance_token_not_applicable', 'authorized_payload_hash does not match the request');
  }
  if (expect.commitment) {
    const ceiling = claims.authorized_commitment as { amount: number; currency: string } | undefined;
    if (!ceiling) fail('governance_token_not_applicable', 'no authorized_commitment for a monetary action');
    if (ceiling!.currency !== expect.commitment.currency) fail('governance_token_not_applicable', `currency ${ceiling!.currency}`);
    if (expect.commitment.amount > ceiling!.amount) fail('governance_token_not_applicable', `amount above the ${ceiling!.amount} ceiling`);
  }
  if (expect.jtiSeen?.(iss, aud, claims.jti as string)) fail('governance_token_replayed', `jti ${String(claims.jti)}`);
}

/** Keys from a JWKS the caller holds (tests, conformance vectors). */
export function localGovernanceKeys(jwks: JSONWebKeySet): GovernanceKeyResolver {
  const select = createLocalJWKSet(jwks);
  return async (header) => {
    checkKeyPurpose(jwks, header.kid);
    try {
      return await select(header);
    } catch {
      return fail('governance_key_unknown', `kid ${String(header.kid)}`);
    }
  };
}

/**
 * Keys from the governance agent's JWKS over HTTP, cached (10 min at most, as
 * the JWKS cache must not outlive the revocation polling interval) and
 * refetched once, at most every 30 s, when a kid is not in the cache.
 */
export function remoteGovernanceKeys(jwksUrl: string, opts: { cacheMaxAgeMs?: number; cooldownMs?: number } = {}): GovernanceKeyResolver {
  const remote = createRemoteJWKSet(new URL(jwksUrl), {
    cacheMaxAge: opts.cacheMaxAgeMs ?? 600_000,
    cooldownDuration: opts.cooldownMs ?? 30_000,
  });
  return async (header) => {
    let key: VerifyKey;
    try {
      key = await remote(header);
    } catch (err) {
      if (err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWKSMultipleMatchingKeys) {
        return fail('governance_key_unknown', `kid ${String(header.kid)}`);
      }
      return fail('governance_jwks_unavailable', err instanceof Error ? err.message : String(err));
    }
    checkKeyPurpose(remote.jwks() ?? { keys: [] }, header.kid);
    return key;
  };
}

/** Step 6, and AdCP's purpose binding: a signing key for governance, nothing else. */
function checkKeyPurpose(jwks: JSONWebKeySet, kid: unknown): void {
  const jwk = jwks.keys.find((k) => k.kid === kid) as (JSONWebKeySet['keys'][number] & { adcp_use?: unknown }) | undefined;
  if (!jwk) fail('governance_key_unknown', `kid ${String(kid)}`);
  if (jwk!.use !== 'sig' || !Array.isArray(jwk!.key_ops) || !jwk!.key_ops.includes('verify')) {
    fail('governance_token_invalid', `key ${String(kid)} is not a verification key (use/key_ops)`);
  }
  if (jwk!.adcp_use !== 'governance-signing') fail('governance_token_invalid', `key ${String(kid)} is for ${String(jwk!.adcp_use)}`);
}
