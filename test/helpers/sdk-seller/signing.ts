/**
 * The seller's RFC 9421 webhook-signing key: a fresh Ed25519 pair per seller,
 * the private half for the SDK's webhook emitter, the public half published at
 * /.well-known/jwks.json (the buyer registers the seller with that as its
 * `webhook_signing.jwks_uri`). The published key says what it is for
 * (`adcp_use: "webhook-signing"`), which the SDK's verifier insists on.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { AdcpJsonWebKey, SignerKey } from '@adcp/sdk/signing/client';

export interface SigningIdentity {
  signerKey: SignerKey;
  jwks: { keys: AdcpJsonWebKey[] };
}

export function newSigningIdentity(): SigningIdentity {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pub = publicKey.export({ format: 'jwk' });
  const priv = privateKey.export({ format: 'jwk' });
  const kid = `sdk-seller-${randomUUID()}`;
  const base = { kid, kty: String(pub.kty), crv: String(pub.crv), x: String(pub.x) };
  return {
    signerKey: { keyid: kid, alg: 'ed25519', privateKey: { ...base, d: String(priv.d) } },
    jwks: { keys: [{ ...base, alg: 'EdDSA', use: 'sig', key_ops: ['verify'], adcp_use: 'webhook-signing' }] },
  };
}
