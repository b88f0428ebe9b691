/**
 * Every RFC 9421 webhook-signing conformance vector, through the receiver's
 * entry point. Each vector carries its own URL, clock (`reference_now`), JWKS
 * (`jwks_ref`, `jwks_override`) and, for 016–019, a store state to set up
 * (`test_harness_state`), which is set up exactly as described.
 */
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import {
  InMemoryRevocationList,
  staticKeySource,
  type NonceReplayStore,
  type RevocationSource,
  type WebhookJwk,
} from '../../../src/adcp/webhook-signature.js';
import { InMemoryNonceReplayStore } from '../../../src/webhooks/memory-replay-store.js';
import { authenticateRfc9421 } from '../../../src/webhooks/rfc9421.js';
import { publicJwk, testKey } from './signing-helpers.js';
import { readVectorDir, type SigningVector } from './vectors.js';

const POLL_INTERVAL_MS = 30 * 60_000; // the longest poll interval the spec allows
const REPLAY_TTL_MS = 360_000; // a live entry: (expires − now) + 60 s for a 300 s window

function jwksFor(vector: SigningVector): WebhookJwk[] {
  return vector.jwks_ref.map(
    (kid) => (vector.jwks_override?.[kid] ?? publicJwk(testKey(kid))) as WebhookJwk,
  );
}

/** Build the stores in exactly the state the vector's test_harness_state describes. */
async function storesFor(vector: SigningVector): Promise<{ replayStore: NonceReplayStore; revocation: RevocationSource }> {
  const nowMs = vector.reference_now * 1000;
  const state = vector.test_harness_state ?? {};
  const replayStore = new InMemoryNonceReplayStore();
  for (const entry of state.replay_cache_entries ?? []) {
    expect(await replayStore.checkAndInsert(entry.keyid, entry.nonce, nowMs + REPLAY_TTL_MS, nowMs)).toBe('fresh');
  }
  if (state.per_keyid_cap_filled_for) {
    // Fill the key's cap with live nonces, the way a flood would.
    const keyid = state.per_keyid_cap_filled_for;
    for (let i = 0; i < replayStore.maxPerKeyid; i++) {
      await replayStore.checkAndInsert(keyid, `fill-${i}`, nowMs + REPLAY_TTL_MS, nowMs);
    }
    expect(await replayStore.isAtCapacity(keyid, nowMs)).toBe(true);
  }
  // A freshly polled list unless the vector says otherwise.
  let revocation = new InMemoryRevocationList({
    revokedKids: state.revoked_kids ?? [],
    nextUpdateMs: nowMs + POLL_INTERVAL_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
  });
  if (state.revocation_list_stale_seconds !== undefined) {
    // Last successful refresh that many seconds ago, next_update one poll later.
    const refreshedAt = nowMs - state.revocation_list_stale_seconds * 1000;
    revocation = new InMemoryRevocationList({
      revokedKids: [],
      nextUpdateMs: refreshedAt + POLL_INTERVAL_MS,
      pollIntervalMs: POLL_INTERVAL_MS,
    });
  }
  return { replayStore, revocation };
}

async function runVector(vector: SigningVector, stores?: Awaited<ReturnType<typeof storesFor>>) {
  const { replayStore, revocation } = stores ?? (await storesFor(vector));
  return authenticateRfc9421(
    {
      method: vector.request.method,
      url: vector.request.url,
      headers: vector.request.headers,
      rawBody: Buffer.from(vector.request.body, 'utf8'),
    },
    { keys: staticKeySource(jwksFor(vector)), replayStore, revocation, now: () => vector.reference_now * 1000 },
  );
}

const positive = readVectorDir<SigningVector>('webhook-signing/positive');
const negative = readVectorDir<SigningVector>('webhook-signing/negative');

describe('RFC 9421 webhook-signing vectors', () => {
  it('finds the vectors', () => {
    expect(positive.length).toBeGreaterThanOrEqual(8);
    expect(negative.length).toBeGreaterThanOrEqual(21);
  });

  it.each(positive)('positive %s verifies', async (_file, vector) => {
    expect(vector.expected_outcome.success).toBe(true);
    const result = await runVector(vector);
    expect(result).toMatchObject({ ok: true });
    const keyid = /keyid="([^"]+)"/.exec(vector.request.headers['Signature-Input'])![1];
    expect(result.ok && result.keyid).toBe(keyid);
  });

  it.each(negative)('negative %s is rejected with its code', async (_file, vector) => {
    expect(vector.expected_outcome.success).toBe(false);
    const result = await runVector(vector);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.code).toBe(vector.expected_outcome.error_code);
    // The sender's fault, never ours: these must become a webhook_* 401.
    expect(!result.ok && result.transient).toBeFalsy();
  });
});

describe('RFC 9421 vector states, black-box style', () => {
  const byName = Object.fromEntries([...positive, ...negative]);
  const basic = byName['001-basic-post.json'] as SigningVector;

  it('016: the same delivery twice is accepted once, then replayed', async () => {
    const vector = byName['016-replayed-nonce.json'] as SigningVector;
    const replayStore = new InMemoryNonceReplayStore();
    const deps = {
      keys: staticKeySource(jwksFor(vector)),
      replayStore,
      now: () => vector.reference_now * 1000,
    };
    const request = {
      method: vector.request.method,
      url: vector.request.url,
      headers: vector.request.headers,
      rawBody: Buffer.from(vector.request.body),
    };
    expect(await authenticateRfc9421(request, deps)).toMatchObject({ ok: true });
    expect(await authenticateRfc9421(request, deps)).toMatchObject({ ok: false, code: 'webhook_signature_replayed' });
  });

  it('replay protection spans URLs: a nonce accepted on one endpoint is refused on another', async () => {
    const replayStore = new InMemoryNonceReplayStore();
    const nowMs = basic.reference_now * 1000;
    await replayStore.checkAndInsert('test-ed25519-webhook-2026', 'KXYnfEfJ0PBRZXQyVXfVQA', nowMs + REPLAY_TTL_MS, nowMs);
    const result = await authenticateRfc9421(
      { method: 'POST', url: basic.request.url, headers: basic.request.headers, rawBody: Buffer.from(basic.request.body) },
      { keys: staticKeySource(jwksFor(basic)), replayStore, now: () => nowMs },
    );
    expect(result).toMatchObject({ ok: false, code: 'webhook_signature_replayed' });
  });

  it('018: a key at its cap is refused before any signature work (even a forged signature says rate_abuse)', async () => {
    const vector = byName['018-rate-abuse.json'] as SigningVector;
    const { replayStore, revocation } = await storesFor(vector);
    const forged = { ...vector.request.headers, Signature: `sig1=:${randomBytes(64).toString('base64url')}:` };
    const result = await authenticateRfc9421(
      { method: 'POST', url: vector.request.url, headers: forged, rawBody: Buffer.from(vector.request.body) },
      { keys: staticKeySource(jwksFor(vector)), replayStore, revocation, now: () => vector.reference_now * 1000 },
    );
    expect(result).toMatchObject({ ok: false, code: 'webhook_signature_rate_abuse' });
  });

  it('017/019 are about the state: with a fresh, empty revocation list the same requests verify', async () => {
    for (const file of ['017-key-revoked.json', '019-revocation-stale.json']) {
      const vector = byName[file] as SigningVector;
      const result = await runVector({ ...vector, test_harness_state: {} });
      expect(result).toMatchObject({ ok: true });
    }
  });

  it('a failed signature consumes no replay entry', async () => {
    const vector = byName['015-signature-invalid.json'] as SigningVector;
    const stores = await storesFor(vector);
    expect(await runVector(vector, stores)).toMatchObject({ ok: false, code: 'webhook_signature_invalid' });
    const { replayStore } = stores;
    const nonce = /nonce="([^"]+)"/.exec(vector.request.headers['Signature-Input'])![1];
    expect(await replayStore.has('test-ed25519-webhook-2026', nonce, vector.reference_now * 1000)).toBe(false);
  });
});
