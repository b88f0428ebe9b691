/**
 * Our signer against the spec's request-signing vectors (test/fixtures/adcp-vectors/
 * request-signing, from adcontextprotocol/adcp at 4439b1871): every canonicalization
 * case, and for every positive vector (the 3.1 ones and the 3.2 profile's) the signature
 * base we build from the vector's request and parameters is its `expected_signature_base`
 * byte for byte, the Content-Digest we compute is the vector's, and where the key is the
 * vectors' Ed25519 test key (deterministic) our Signature header is the vector's.
 */
import { createPrivateKey } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { coveredComponents, prepareSignature, signRequest, type SigningProfile } from '../../../src/adcp/request-signing.js';
import { canonicalTarget, TargetUriError } from '../../../src/adcp/target-uri.js';

const DIR = fileURLToPath(new URL('../../fixtures/adcp-vectors/request-signing/', import.meta.url));
const read = (rel: string) => JSON.parse(readFileSync(join(DIR, rel), 'utf8'));
const dir = (rel: string): Array<[string, any]> =>
  readdirSync(join(DIR, rel))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, read(join(rel, f))]);

const keys: any[] = read('keys.json').keys;

/** The sig1 member of a Signature-Input header: its components and parameters. */
function sig1(header: string) {
  const m = /sig1=\(([^)]*)\);created=(\d+);expires=(\d+);nonce="([^"]*)";keyid="([^"]*)";alg="([^"]*)";tag="([^"]*)"/.exec(header);
  if (!m) throw new Error(`no sig1 in ${header}`);
  return {
    components: m[1]!.split(' ').map((c) => c.replace(/"/g, '')),
    created: Number(m[2]),
    expires: Number(m[3]),
    nonce: m[4]!,
    keyid: m[5]!,
    alg: m[6]!,
    tag: m[7]!,
  };
}

function header(headers: Record<string, string>, name: string): string | undefined {
  return Object.entries(headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
}

describe('@target-uri canonicalization (canonicalization.json)', () => {
  const cases: any[] = read('canonicalization.json').cases;
  it('has the spec file', () => expect(cases.length).toBeGreaterThanOrEqual(37));
  for (const c of cases) {
    it(c.name, () => {
      if (c.reject) {
        expect(() => canonicalTarget(c.input_url)).toThrow(TargetUriError);
        expect(c.expected_error_code ?? 'request_target_uri_malformed').toBe(new TargetUriError('x').code);
        return;
      }
      expect(canonicalTarget(c.input_url)).toEqual({ targetUri: c.expected_target_uri, authority: c.expected_authority });
    });
  }
});

const positives: Array<[string, any, SigningProfile]> = [
  ...dir('positive').map(([f, v]): [string, any, SigningProfile] => [`positive/${f}`, v, 'legacy']),
  ...dir('profile-3.2/positive').map(([f, v]): [string, any, SigningProfile] => [`profile-3.2/positive/${f}`, v, 'rfc8941']),
];

describe('signature base of every positive vector', () => {
  it('has them all', () => {
    expect(positives.length).toBe(13);
    expect(positives.filter(([, v]) => v.expected_signature_base !== undefined).length).toBe(12);
  });
  for (const [name, v, profile] of positives) {
    it(name, () => {
      const p = sig1(header(v.request.headers, 'Signature-Input')!);
      const request = { method: v.request.method, url: v.request.url, contentType: header(v.request.headers, 'Content-Type'), body: v.request.body };
      const coversDigest = p.components.includes('content-digest');
      // The components we would cover are the vector's, in its order.
      expect(coveredComponents(request, coversDigest)).toEqual(p.components);
      const prepared = prepareSignature(request, p.keyid, {
        profile,
        coverContentDigest: coversDigest,
        now: p.created,
        windowSeconds: p.expires - p.created,
        nonce: p.nonce,
        alg: p.alg,
      });
      // 004 (two labels) carries none: its sig1 is 001's, and the signature bytes below prove the base.
      if (v.expected_signature_base !== undefined) expect(prepared.base).toBe(v.expected_signature_base);
      expect(prepared.params.tag).toBe(p.tag);
      if (coversDigest) expect(prepared.digest).toBe(header(v.request.headers, 'Content-Digest'));

      const key = keys.find((k) => k.kid === p.keyid);
      if (p.alg === 'ed25519') {
        // Ed25519 is deterministic: our signature bytes are the vector's.
        const privateKey = createPrivateKey({ key: { kty: key.kty, crv: key.crv, x: key.x, d: key._private_d_for_test_only }, format: 'jwk' });
        const signed = signRequest(request, { kid: p.keyid, privateKey }, { profile, coverContentDigest: coversDigest, now: p.created, windowSeconds: p.expires - p.created, nonce: p.nonce });
        if (v.expected_signature_base !== undefined) expect(signed.base).toBe(v.expected_signature_base);
        expect(signed.headers.Signature).toBe(header(v.request.headers, 'Signature')!.split(', sig2=')[0]);
        expect(signed.headers['Signature-Input']).toBe(header(v.request.headers, 'Signature-Input')!.split(', sig2=')[0]);
      }
    });
  }
});

describe('the signer on its own', () => {
  const privateKey = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x: keys[0].x, d: keys[0]._private_d_for_test_only }, format: 'jwk' });
  const request = { method: 'POST', url: 'https://seller.example.com/mcp', contentType: 'application/json', body: '{"a":1}' };

  it('makes a fresh 128-bit nonce for every signature, never padded', () => {
    const a = signRequest(request, { kid: 'k', privateKey }, { profile: 'legacy', coverContentDigest: true, now: 1_776_520_800 });
    const b = signRequest(request, { kid: 'k', privateKey }, { profile: 'legacy', coverContentDigest: true, now: 1_776_520_800 });
    expect(a.params.nonce).not.toBe(b.params.nonce);
    expect(Buffer.from(a.params.nonce, 'base64url')).toHaveLength(16);
    expect(a.params.nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(a.params.expires - a.params.created).toBe(300);
  });

  it('encodes binary values per profile: unpadded base64url (3.0/3.1), padded base64 (3.2)', () => {
    const legacy = signRequest(request, { kid: 'k', privateKey }, { profile: 'legacy', coverContentDigest: true, now: 1 });
    const rfc = signRequest(request, { kid: 'k', privateKey }, { profile: 'rfc8941', coverContentDigest: true, now: 1 });
    expect(legacy.headers.Signature).toMatch(/^sig1=:[A-Za-z0-9_-]+:$/);
    expect(rfc.headers.Signature).toMatch(/^sig1=:[A-Za-z0-9+/]+={0,2}:$/);
    expect(rfc.headers.Signature).toMatch(/==:$/); // 64 bytes always pad
    expect(legacy.headers['Content-Digest']).toMatch(/^sha-256=:[A-Za-z0-9_-]{43}:$/);
    expect(rfc.headers['Content-Digest']).toMatch(/^sha-256=:[A-Za-z0-9+/]{43}=:$/);
  });

  it('covers no content-digest when told not to, and none on a request without a body', () => {
    const off = signRequest(request, { kid: 'k', privateKey }, { profile: 'legacy', coverContentDigest: false, now: 1 });
    expect(off.headers['Content-Digest']).toBeUndefined();
    expect(off.headers['Signature-Input']).toMatch(/^sig1=\("@method" "@target-uri" "@authority" "content-type"\);/);
    const get = signRequest({ method: 'GET', url: 'https://seller.example.com/x' }, { kid: 'k', privateKey }, { profile: 'rfc8941', coverContentDigest: true, now: 1 });
    expect(get.headers['Signature-Input']).toMatch(/^sig1=\("@method" "@target-uri" "@authority"\);/);
  });

  it('refuses to sign a malformed target URI', () => {
    expect(() => signRequest({ ...request, url: 'https://example..com/mcp' }, { kid: 'k', privateKey }, { profile: 'legacy', coverContentDigest: true, now: 1 })).toThrow(TargetUriError);
  });
});
