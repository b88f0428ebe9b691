/**
 * The sandbox governance agent's signing identity: one Ed25519 key, minted at
 * every start (the sandbox has no durable identity; verifiers refetch the
 * JWKS when they meet an unknown `kid`), published at /.well-known/jwks.json.
 *
 * Tokens are compact JWS per the AdCP JWS profile: protected header
 * `{alg: "EdDSA", kid, typ: "adcp-gov+jws"}`. A claim that changes what the
 * token authorizes (`authorized_task`, `authorized_payload_hash`,
 * `authorized_commitment`) also gets a same-named boolean header marker and a
 * `crit` entry, so a verifier that does not understand it must reject rather
 * than silently ignore a binding.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { CompactSign, compactVerify } from 'jose';

export const GOVERNANCE_TOKEN_TYPE = 'adcp-gov+jws';

/** The binding claims that are critical when present, in header order. */
export const CRITICAL_CLAIMS = ['authorized_commitment', 'authorized_task', 'authorized_payload_hash'] as const;

/** jose's list of critical header extensions this code understands (all integrity-protected). */
const CRIT_UNDERSTOOD: Record<string, boolean> = Object.fromEntries(CRITICAL_CLAIMS.map((c) => [c, true]));

export interface GovernanceJwk {
  kid: string;
  kty: string;
  crv: string;
  x: string;
  alg: 'EdDSA';
  use: 'sig';
  key_ops: ['verify'];
  adcp_use: 'governance-signing';
}

export interface GovernanceJwks {
  keys: GovernanceJwk[];
}

export class GovernanceSigner {
  private constructor(
    readonly kid: string,
    private readonly privateKey: KeyObject,
    private readonly publicKey: KeyObject,
    readonly jwks: GovernanceJwks,
  ) {}

  static mint(): GovernanceSigner {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    // Unique per run, so a verifier's kid-keyed cache never mixes two runs up.
    return GovernanceSigner.from(`sandbox-gov-${randomBytes(6).toString('hex')}`, privateKey, publicKey);
  }

  /** A signer over a given Ed25519 private JWK (conformance vectors publish one). */
  static fromPrivateJwk(jwk: { kid: string; kty: string; crv: string; x: string; d: string }): GovernanceSigner {
    const privateKey = createPrivateKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d }, format: 'jwk' });
    return GovernanceSigner.from(jwk.kid, privateKey, createPublicKey(privateKey));
  }

  private static from(kid: string, privateKey: KeyObject, publicKey: KeyObject): GovernanceSigner {
    const pub = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string };
    const jwk: GovernanceJwk = {
      kid,
      kty: pub.kty,
      crv: pub.crv,
      x: pub.x,
      alg: 'EdDSA',
      use: 'sig',
      key_ops: ['verify'],
      adcp_use: 'governance-signing',
    };
    return new GovernanceSigner(kid, privateKey, publicKey, { keys: [jwk] });
  }

  async sign(claims: Record<string, unknown>): Promise<string> {
    const critical = CRITICAL_CLAIMS.filter((c) => claims[c] !== undefined);
    const header: Record<string, unknown> = { alg: 'EdDSA', kid: this.kid, typ: GOVERNANCE_TOKEN_TYPE };
    if (critical.length > 0) {
      header.crit = [...critical];
      for (const c of critical) header[c] = true;
    }
    return new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader(header as { alg: string })
      .sign(this.privateKey, { crit: CRIT_UNDERSTOOD });
  }

  /**
   * The claims of a token this agent signed itself, or undefined. The agent
   * reads its own tokens back (a re-check's `governance_context`, an outcome's)
   * to find the check they came from; anything it did not sign is refused.
   */
  async readOwn(token: string): Promise<Record<string, unknown> | undefined> {
    try {
      const { payload, protectedHeader } = await compactVerify(token, this.publicKey, {
        algorithms: ['EdDSA'],
        crit: CRIT_UNDERSTOOD,
      });
      if (protectedHeader.typ !== GOVERNANCE_TOKEN_TYPE || protectedHeader.kid !== this.kid) return undefined;
      const claims = JSON.parse(new TextDecoder().decode(payload)) as unknown;
      return claims !== null && typeof claims === 'object' && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }
}
