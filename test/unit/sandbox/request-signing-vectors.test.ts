/**
 * The sandbox seller's request verifier (src/sandbox/signature-verifier.ts) against the
 * spec's request-signing vectors (test/fixtures/adcp-vectors/request-signing, from
 * adcontextprotocol/adcp at 4439b1871), run as the vectors' README says: the request as
 * given, the JWKS from `jwks_ref` or `jwks_override`, the harness state preloaded
 * (replay cache, per-keyid cap, revocation list), `reference_now` as the clock, the
 * vector's capability. Every negative vector is refused with its `error_code` (the 3.2
 * profile's under the 3.2 wire profile), every positive one verifies.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InMemoryReplayStore, InMemoryRevocationStore, StaticJwksResolver } from '@adcp/sdk/signing/server';
import { verifySignedRequest, type SigningProfile, type Verdict } from '../../../src/sandbox/signature-verifier.js';
import { canonicalTarget } from '../../../src/adcp/target-uri.js';

const DIR = fileURLToPath(new URL('../../fixtures/adcp-vectors/request-signing/', import.meta.url));
const read = (rel: string) => JSON.parse(readFileSync(join(DIR, rel), 'utf8'));
const dir = (rel: string): Array<[string, any]> =>
  readdirSync(join(DIR, rel))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [`${rel}/${f}`, read(join(rel, f))]);

const keys: any[] = read('keys.json').keys.map(({ _private_d_for_test_only, $comment, ...pub }: any) => pub);

async function run(v: any, profile: SigningProfile): Promise<Verdict> {
  const jwks = v.jwks_override?.keys ?? keys.filter((k) => (v.jwks_ref ?? []).includes(k.kid));
  const replay = new InMemoryReplayStore();
  const revocation = new InMemoryRevocationStore();
  const state = v.test_harness_state ?? {};
  let scope = v.request.url;
  try {
    scope = canonicalTarget(v.request.url).targetUri;
  } catch {
    /* a malformed target is refused before the cache is looked at */
  }
  for (const e of state.replay_cache_entries ?? []) replay.preload(e.keyid, scope, e.nonce, e.ttl_seconds, v.reference_now);
  if (state.replay_cache_per_keyid_cap_hit) replay.setCapHitForTesting(state.replay_cache_per_keyid_cap_hit.keyid);
  if (state.revocation_list) revocation.load(state.revocation_list);
  return verifySignedRequest(
    { method: v.request.method, url: v.request.url, headers: v.request.headers, body: v.request.body },
    {
      capability: { required_for: [], covers_content_digest: 'either', ...v.verifier_capability },
      profile,
      jwks: new StaticJwksResolver(jwks),
      replay,
      revocation,
      now: () => v.reference_now,
    },
  );
}

const negatives: Array<[string, any, SigningProfile]> = [
  ...dir('negative').map(([f, v]): [string, any, SigningProfile] => [f, v, 'legacy']),
  ...dir('profile-3.2/negative').map(([f, v]): [string, any, SigningProfile] => [f, v, 'rfc8941']),
];
const positives: Array<[string, any, SigningProfile]> = [
  ...dir('positive').map(([f, v]): [string, any, SigningProfile] => [f, v, 'legacy']),
  ...dir('profile-3.2/positive').map(([f, v]): [string, any, SigningProfile] => [f, v, 'rfc8941']),
];

describe('sandbox verifier: negative vectors', () => {
  it('has them all', () => expect(negatives.length).toBe(30));
  for (const [name, v, profile] of negatives) {
    it(`${name} → ${v.expected_outcome.error_code}`, async () => {
      const verdict = await run(v, profile);
      expect(verdict).toMatchObject({ ok: false, code: v.expected_outcome.error_code });
    });
  }
});

describe('sandbox verifier: positive vectors', () => {
  it('has them all', () => expect(positives.length).toBe(13));
  for (const [name, v, profile] of positives) {
    it(name, async () => {
      const verdict = await run(v, profile);
      expect(verdict).toMatchObject({ ok: true, status: 'verified' });
    });
  }
  it('refuses a positive vector replayed (its nonce is remembered once verified)', async () => {
    const [, v] = positives[0]!;
    const replay = new InMemoryReplayStore();
    const cfg = {
      capability: { required_for: [], covers_content_digest: 'either' as const, ...v.verifier_capability },
      profile: 'legacy' as const,
      jwks: new StaticJwksResolver(keys),
      replay,
      revocation: new InMemoryRevocationStore(),
      now: () => v.reference_now,
    };
    const request = { method: v.request.method, url: v.request.url, headers: v.request.headers, body: v.request.body };
    expect(await verifySignedRequest(request, cfg)).toMatchObject({ status: 'verified' });
    expect(await verifySignedRequest(request, cfg)).toMatchObject({ ok: false, code: 'request_signature_replayed' });
  });
  it('turns a key source that cannot be read into request_signature_jwks_unavailable, never a throw', async () => {
    const [, v] = positives[0]!;
    const verdict = await verifySignedRequest(
      { method: v.request.method, url: v.request.url, headers: v.request.headers, body: v.request.body },
      {
        capability: { required_for: [], covers_content_digest: 'either', supported: true },
        profile: 'legacy',
        jwks: { resolve: async () => Promise.reject(new Error('JWKS response missing `keys` array')) },
        replay: new InMemoryReplayStore(),
        revocation: new InMemoryRevocationStore(),
        now: () => v.reference_now,
      },
    );
    expect(verdict).toMatchObject({ ok: false, code: 'request_signature_jwks_unavailable' });
  });
});
