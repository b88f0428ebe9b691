/**
 * Test-only RFC 9421 webhook signer, written from the profile (AdCP spec, webhooks)
 * with node:crypto, so tests can make signed deliveries the vectors don't cover
 * (fresh nonces, odd bodies) without importing the SDK outside src/adcp.
 */
import { createHash, createPrivateKey, randomBytes, sign } from 'node:crypto';
import { readVectorFile } from './vectors.js';

export interface TestKey {
  kid: string;
  kty: string;
  crv: string;
  x: string;
  y?: string;
  _private_d_for_test_only: string;
  [member: string]: unknown;
}

export const TEST_KEYS: TestKey[] = readVectorFile<{ keys: TestKey[] }>('webhook-signing/keys.json').keys;

/** The public JWK as a seller would publish it (no private member, no comments). */
export function publicJwk(key: TestKey): Record<string, unknown> {
  const { _private_d_for_test_only: _d, $comment: _c, ...pub } = key;
  return pub;
}

export function testKey(kid: string): TestKey {
  const key = TEST_KEYS.find((k) => k.kid === kid);
  if (!key) throw new Error(`no test key ${kid}`);
  return key;
}

export interface SignOptions {
  kid?: string;
  url: string;
  body: Buffer;
  createdSeconds: number;
  nonce?: string;
  tag?: string;
  contentType?: string;
}

/** Headers for a POST webhook signed over the five mandatory components. */
export function signWebhook(options: SignOptions): Record<string, string> {
  const key = testKey(options.kid ?? 'test-ed25519-webhook-2026');
  const url = new URL(options.url);
  const contentType = options.contentType ?? 'application/json';
  const digest = `sha-256=:${createHash('sha256').update(options.body).digest('base64')}:`;
  const nonce = options.nonce ?? randomBytes(16).toString('base64url');
  const alg = key.kty === 'OKP' ? 'ed25519' : 'ecdsa-p256-sha256';
  const params =
    `("@method" "@target-uri" "@authority" "content-type" "content-digest")` +
    `;created=${options.createdSeconds};expires=${options.createdSeconds + 300};nonce="${nonce}"` +
    `;keyid="${key.kid}";alg="${alg}";tag="${options.tag ?? 'adcp/webhook-signing/v1'}"`;
  const base = [
    `"@method": POST`,
    `"@target-uri": ${url.href}`,
    `"@authority": ${url.host}`,
    `"content-type": ${contentType}`,
    `"content-digest": ${digest}`,
    `"@signature-params": ${params}`,
  ].join('\n');
  const privateKey = createPrivateKey({
    key: { kty: key.kty, crv: key.crv, x: key.x, ...(key.y && { y: key.y }), d: key._private_d_for_test_only },
    format: 'jwk',
  });
  const signature =
    alg === 'ed25519'
      ? sign(null, Buffer.from(base), privateKey)
      : sign('sha256', Buffer.from(base), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return {
    'Content-Type': contentType,
    'Content-Digest': digest,
    'Signature-Input': `sig1=${params}`,
    Signature: `sig1=:${signature.toString('base64url')}:`,
  };
}
