/**
 * The sandbox seller's RFC 9421 webhook-signing identity.
 *
 * A fresh Ed25519 key is minted at every start: the sandbox has no durable
 * identity, and a buyer that registered the seller with
 * `webhook_signing: { jwks_uri }` re-fetches the JWKS anyway when it meets an
 * unknown `keyid`. The public half is served at `/.well-known/jwks.json`.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { SignerKey } from '@adcp/sdk/signing/client';
import type { AdcpJsonWebKey } from '@adcp/sdk/signing/server';

export interface PublicJwks {
  keys: AdcpJsonWebKey[];
}

export interface WebhookSigningIdentity {
  /** Handed to the SDK's webhook signer (carries the private scalar `d`). */
  signerKey: SignerKey;
  /** What we publish: public members only, purpose-bound to webhook signing. */
  jwks: PublicJwks;
}

export function mintWebhookSigningIdentity(): WebhookSigningIdentity {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  // A recognisable but unique kid: a buyer's cache keyed on kid must not
  // confuse two sandbox runs.
  const kid = `sandbox-seller-${randomBytes(6).toString('hex')}`;
  const pub = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string };
  const priv = privateKey.export({ format: 'jwk' }) as { d: string };

  // Receivers check `use`, `key_ops ∋ verify` and `adcp_use` before trusting
  // a key (the SDK verifier insists on adcp_use "webhook-signing").
  const publicJwk: AdcpJsonWebKey = {
    kid,
    kty: pub.kty,
    crv: pub.crv,
    x: pub.x,
    alg: 'EdDSA',
    use: 'sig',
    key_ops: ['verify'],
    adcp_use: 'webhook-signing',
  };
  return {
    // Only the members Node needs to import the private key; purpose metadata
    // belongs to the published half.
    signerKey: { keyid: kid, alg: 'ed25519', privateKey: { kid, kty: pub.kty, crv: pub.crv, x: pub.x, d: priv.d } },
    jwks: { keys: [publicJwk] },
  };
}
