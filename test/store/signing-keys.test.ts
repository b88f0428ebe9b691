/**
 * Our request-signing keys on SQLite and (with TEST_DATABASE_URL) PostgreSQL: instances
 * on one database share one key set (two made at once end as one key), a rotation made
 * by one is published by all and signs everywhere once it activates, the key it replaced
 * stays published for the grace period then goes, its private half as soon as it no
 * longer signs; private halves are stored sealed and never published; a key file's key
 * is published but never stored.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { SigningKeysRepo } from '../../src/store/signing-keys-repo.js';
import { REFRESH_MS, SigningKeyFileError, SigningKeys } from '../../src/engine/signing-keys.js';
import { materialFromPrivateKey } from '../../src/adcp/signing-key-material.js';
import { createLogger } from '../../src/logger.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';

const PUBLIC_MEMBERS = ['adcp_use', 'alg', 'crv', 'key_ops', 'kid', 'kty', 'use', 'x'];
const GRACE = 3_600_000;
const LEAD = 60_000;

describe.each(dialects)('request-signing keys on $name', ({ make }) => {
  let database: TestDatabase;
  let a: Store;
  let b: Store;
  let t = 1_800_000_000_000;
  const clock = { now: () => t, random: Math.random };
  const secrets = new SecretBox('test-secret-key-0123456789abcdef');
  const keys = (store: Store, keyFile?: ReturnType<typeof materialFromPrivateKey>) =>
    new SigningKeys({ repo: new SigningKeysRepo(store.db), secrets, clock, log: createLogger('silent'), graceMs: GRACE, leadMs: LEAD, ...(keyFile && { keyFile }) });

  beforeAll(async () => {
    database = await make();
    // Two stores on one database stand for two instances.
    a = await openStore(database.url);
    b = await openStore(database.url);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  it('is one key for every instance, however many start at once; stored sealed, published without private members', async () => {
    const [ka, kb] = [keys(a), keys(b)];
    await Promise.all([ka.start(), kb.start()]);
    const rows = await new SigningKeysRepo(a.db).all();
    expect(rows).toHaveLength(1);
    expect((await ka.signingKey())!.kid).toBe((await kb.signingKey())!.kid);
    expect(rows[0]!.kid).toBe((await ka.signingKey())!.kid);
    // The private half: sealed, its scalar nowhere in the clear.
    const d = (await ka.signingKey())!.privateKey.export({ format: 'jwk' }).d!;
    expect(SecretBox.isSealed(rows[0]!.private_jwk_enc!)).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(d);
    const jwks = await kb.jwks();
    expect(jwks.keys).toHaveLength(1);
    expect(Object.keys(jwks.keys[0]!).sort()).toEqual(PUBLIC_MEMBERS);
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', key_ops: ['verify'], adcp_use: 'request-signing', kid: rows[0]!.kid });
    expect(JSON.stringify(jwks)).not.toContain(d);
    // A restart finds the key and makes none.
    await keys(a).start();
    expect(await new SigningKeysRepo(a.db).all()).toHaveLength(1);
  });

  it('a rotation on one instance is published by all at once and signs everywhere once it activates; the old key goes after its grace', async () => {
    const [ka, kb] = [keys(a), keys(b)];
    await Promise.all([ka.start(), kb.start()]);
    const old = (await kb.signingKey())!.kid;
    const rotated = await ka.rotate();
    const fresh = rotated.key.kid;
    expect(rotated.key).toMatchObject({ state: 'next', published_until: null });
    expect(rotated.replaced).toEqual([expect.objectContaining({ kid: old, published_until: new Date(t + LEAD + GRACE).toISOString() })]);

    t += REFRESH_MS; // B reads the table again
    expect((await kb.jwks()).keys.map((k) => k.kid).sort()).toEqual([old, fresh].sort());
    expect((await kb.signingKey())!.kid).toBe(old); // published first, not signing yet
    t += LEAD;
    expect((await kb.signingKey())!.kid).toBe(fresh);
    expect((await ka.signingKey())!.kid).toBe(fresh);
    expect((await ka.list()).map((k) => [k.kid, k.state])).toEqual([
      [fresh, 'signing'],
      [old, 'retired'],
    ]);

    // Its private half is dropped at once; its public half stays for the grace.
    expect(await ka.prune()).toBe(0);
    expect((await new SigningKeysRepo(a.db).byKid(old))!.private_jwk_enc).toBeNull();
    expect((await ka.jwks()).keys.map((k) => k.kid)).toContain(old);
    t += GRACE;
    expect(await kb.prune()).toBe(1);
    t += REFRESH_MS;
    expect((await ka.jwks()).keys.map((k) => k.kid)).toEqual([fresh]);
  });

  it("publishes a key file's key without storing it, replaces the generated one, and refuses to rotate it", async () => {
    const file = materialFromPrivateKey(generateKeyPairSync('ed25519').privateKey);
    const kf = keys(a, file);
    await kf.start();
    expect((await kf.signingKey())!.kid).toBe(file.kid);
    const row = await new SigningKeysRepo(a.db).byKid(file.kid);
    expect(row).toMatchObject({ source: 'file', private_jwk_enc: null, publish_until: null });
    expect((await kf.jwks()).keys.map((k) => k.kid)).toContain(file.kid);
    await expect(kf.rotate()).rejects.toBeInstanceOf(SigningKeyFileError);
    // An instance without the file cannot rotate it away either.
    await expect(keys(b).rotate()).rejects.toThrow(/ADCP_ORCH_SIGNING_KEY_FILE/);
  });
});
