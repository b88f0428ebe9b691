/**
 * The database replay cache (the one the webhook route uses) on SQLite and
 * PostgreSQL: its contract, atomicity under concurrency, the per-key cap, and
 * every RFC 9421 signing vector run through the verifier with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryRevocationList, staticKeySource, type WebhookJwk } from '../../src/adcp/webhook-signature.js';
import { openStore, type Store } from '../../src/store/index.js';
import { DbNonceReplayStore } from '../../src/store/nonce-repo.js';
import { authenticateRfc9421 } from '../../src/webhooks/rfc9421.js';
import { publicJwk, testKey } from '../unit/webhooks/signing-helpers.js';
import { readVectorDir, type SigningVector } from '../unit/webhooks/vectors.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';

const vectors = [...readVectorDir<SigningVector>('webhook-signing/positive'), ...readVectorDir<SigningVector>('webhook-signing/negative')];
const POLL_MS = 30 * 60_000;
const TTL_MS = 360_000;
/** A small cap keeps "fill the key's cap" quick; the production cap is 100,000. */
const TEST_CAP = 50;

describe.each(dialects)('database nonce replay store on $name', ({ make }) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await make();
    store = await openStore(database.url);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('inserts once, reports a replay while live, and takes over an expired entry', async () => {
    const nonces = new DbNonceReplayStore(store.db);
    expect(await nonces.checkAndInsert('k1', 'n1', 2000, 1000)).toBe('fresh');
    expect(await nonces.has('k1', 'n1', 1500)).toBe(true);
    expect(await nonces.checkAndInsert('k1', 'n1', 3000, 1500)).toBe('replayed');
    expect(await nonces.has('k1', 'n1', 2500)).toBe(false);
    expect(await nonces.checkAndInsert('k1', 'n1', 5000, 2500)).toBe('fresh');
  });

  it('lets exactly one of several concurrent inserts of one nonce win', async () => {
    const nonces = new DbNonceReplayStore(store.db);
    const results = await Promise.all(Array.from({ length: 6 }, () => nonces.checkAndInsert('k2', 'same', 10_000, 1000)));
    expect(results.filter((r) => r === 'fresh')).toHaveLength(1);
    expect(results.filter((r) => r === 'replayed')).toHaveLength(5);
  });

  it('refuses new nonces for a key at its cap without evicting live ones', async () => {
    const nonces = new DbNonceReplayStore(store.db, 3);
    for (const n of ['a', 'b', 'c']) expect(await nonces.checkAndInsert('k3', n, 10_000, 1000)).toBe('fresh');
    expect(await nonces.checkAndInsert('k3', 'd', 10_000, 1000)).toBe('rate_abuse');
    expect(await nonces.has('k3', 'd', 1000)).toBe(false);
    expect(await nonces.has('k3', 'a', 1000)).toBe(true);
    // Another key is unaffected; expired entries free the cap.
    expect(await nonces.checkAndInsert('k4', 'a', 10_000, 1000)).toBe('fresh');
    expect(await nonces.checkAndInsert('k3', 'd', 20_000, 10_001)).toBe('fresh');
  });

  it('keeps the per-key bound through inserts, takeovers and sweeps, so the cap frees when nonces expire', async () => {
    const nonces = new DbNonceReplayStore(store.db, 3);
    const bound = async (keyid: string) =>
      Number((await store.db.kysely.selectFrom('webhook_nonce_counts').select((eb) => eb.fn.sum<number>('n').as('n')).where('keyid', '=', keyid).executeTakeFirst())?.n ?? 0);
    for (const n of ['a', 'b', 'c']) expect(await nonces.checkAndInsert('k5', n, 10_000, 1000)).toBe('fresh');
    expect(await bound('k5')).toBe(3);
    expect(await nonces.checkAndInsert('k5', 'd', 10_000, 1000)).toBe('rate_abuse');
    // A takeover of an expired pair reuses its row: the bound does not grow.
    expect(await nonces.checkAndInsert('k5', 'a', 20_000, 10_001)).toBe('fresh');
    expect(await bound('k5')).toBe(3);
    // The sweep deletes b and c (expired) and takes them off the bound.
    expect(await nonces.sweep(10_001)).toBeGreaterThanOrEqual(2);
    expect(await bound('k5')).toBe(1);
    expect(await nonces.checkAndInsert('k5', 'e', 20_000, 10_001)).toBe('fresh');
    expect(await nonces.checkAndInsert('k5', 'f', 20_000, 10_001)).toBe('fresh');
    expect(await nonces.checkAndInsert('k5', 'g', 20_000, 10_001)).toBe('rate_abuse');
  });

  it('inserts on the caller\'s transaction: rolled back with it, nothing of the nonce stays', async () => {
    const nonces = new DbNonceReplayStore(store.db);
    await expect(
      store.db.kysely.transaction().execute(async (trx) => {
        expect(await nonces.checkAndInsertOn(trx, 'k6', 'n1', 10_000, 1000)).toBe('fresh');
        throw new Error('the delivery failed');
      }),
    ).rejects.toThrow('the delivery failed');
    expect(await nonces.has('k6', 'n1', 1000)).toBe(false);
    expect(await nonces.checkAndInsert('k6', 'n1', 10_000, 1000)).toBe('fresh');
  });

  it.each(vectors)('vector %s through the verifier with the database store', async (_name, vector) => {
    const nowMs = vector.reference_now * 1000;
    // Each vector gets its own key space: a fresh table state is what the vector describes.
    await store.db.kysely.deleteFrom('webhook_nonces').execute();
    const state = vector.test_harness_state ?? {};
    const nonces = new DbNonceReplayStore(store.db, TEST_CAP);
    for (const e of state.replay_cache_entries ?? []) expect(await nonces.checkAndInsert(e.keyid, e.nonce, nowMs + TTL_MS, nowMs)).toBe('fresh');
    if (state.per_keyid_cap_filled_for) {
      for (let i = 0; i < TEST_CAP; i++) await nonces.checkAndInsert(state.per_keyid_cap_filled_for, `fill-${i}`, nowMs + TTL_MS, nowMs);
    }
    const refreshedAt = state.revocation_list_stale_seconds !== undefined ? nowMs - state.revocation_list_stale_seconds * 1000 : nowMs;
    const revocation = new InMemoryRevocationList({ revokedKids: state.revoked_kids ?? [], nextUpdateMs: refreshedAt + POLL_MS, pollIntervalMs: POLL_MS });
    const keys = vector.jwks_ref.map((kid) => (vector.jwks_override?.[kid] ?? publicJwk(testKey(kid))) as WebhookJwk);
    const result = await authenticateRfc9421(
      { method: vector.request.method, url: vector.request.url, headers: vector.request.headers, rawBody: Buffer.from(vector.request.body, 'utf8') },
      { keys: staticKeySource(keys), replayStore: nonces, revocation, now: () => nowMs },
    );
    if (vector.expected_outcome.success) {
      expect(result).toMatchObject({ ok: true });
      // Accepted once; the same delivery again is a replay, caught by the shared table.
      const again = await authenticateRfc9421(
        { method: vector.request.method, url: vector.request.url, headers: vector.request.headers, rawBody: Buffer.from(vector.request.body, 'utf8') },
        { keys: staticKeySource(keys), replayStore: new DbNonceReplayStore(store.db, TEST_CAP), revocation, now: () => nowMs },
      );
      expect(again).toMatchObject({ ok: false, code: 'webhook_signature_replayed' });
    } else {
      expect(result).toMatchObject({ ok: false, code: vector.expected_outcome.error_code });
    }
  });
});
