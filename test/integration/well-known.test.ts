/**
 * What we publish for sellers (README, Signed requests), on SQLite and (with
 * TEST_DATABASE_URL) PostgreSQL: GET /.well-known/jwks.json and /.well-known/brand.json
 * answer without any credential, cacheable, and the JWKS holds only public members,
 * before and after a rotation. A key kept in ADCP_ORCH_SIGNING_KEY_FILE is the one
 * published and the one a signing seller sees.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { dialects } from '../helpers/databases.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';

const PUBLIC_MEMBERS = ['adcp_use', 'alg', 'crv', 'key_ops', 'kid', 'kty', 'use', 'x'];

let orch: TestOrchestrator | undefined;
let seller: SandboxSeller | undefined;
afterEach(async () => {
  await orch?.close();
  await seller?.close();
  orch = seller = undefined;
});

/** Every key as published: exactly the public members, the request-signing purpose. */
function expectPublicOnly(jwks: any): void {
  expect(Array.isArray(jwks.keys)).toBe(true);
  for (const key of jwks.keys) {
    expect(Object.keys(key).sort()).toEqual(PUBLIC_MEMBERS);
    expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', key_ops: ['verify'], adcp_use: 'request-signing' });
  }
}

describe.each(dialects)('/.well-known on $name', ({ make }) => {
  it('publishes our keys and our brand.json without authentication, never a private member, before and after a rotation', async () => {
    orch = await startOrchestrator({ database: await make() });
    const res = await fetch(`${orch.url}/.well-known/jwks.json`); // no Authorization header
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    const text = await res.text();
    const jwks = JSON.parse(text);
    expect(jwks.keys).toHaveLength(1);
    expectPublicOnly(jwks);
    const d = (await orch.app.signingKeys.signingKey())!.privateKey.export({ format: 'jwk' }).d!;
    expect(text).not.toContain(d);

    const brand = await fetch(`${orch.url}/.well-known/brand.json`);
    expect(brand.status).toBe(200);
    expect(brand.headers.get('cache-control')).toBe('public, max-age=3600');
    const body = await brand.json();
    expect(body.agents).toEqual([
      expect.objectContaining({ type: 'buying', id: 'adcp_orchestrator', url: orch.config.ADCP_ORCH_PUBLIC_URL, jwks_uri: `${orch.config.ADCP_ORCH_PUBLIC_URL}/.well-known/jwks.json` }),
    ]);
    // The jwks_uri brand.json names is the JWKS above.
    expect(await (await fetch(body.agents[0].jwks_uri)).json()).toEqual(jwks);

    const { key } = await orch.app.signingKeys.rotate(0);
    const after = await (await fetch(`${orch.url}/.well-known/jwks.json`)).text();
    expectPublicOnly(JSON.parse(after));
    expect(JSON.parse(after).keys.map((k: any) => k.kid).sort()).toEqual([jwks.keys[0].kid, key.kid].sort());
    expect(after).not.toContain(d);
    expect(after).not.toContain((await orch.app.signingKeys.signingKey())!.privateKey.export({ format: 'jwk' }).d!);
  });
});

describe('a key kept outside the database (ADCP_ORCH_SIGNING_KEY_FILE)', () => {
  it('is the key published and the one a seller verifies our requests with', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-keyfile-'));
    try {
      const path = join(dir, 'signing.pem');
      writeFileSync(path, generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
      let jwksUrl = '';
      seller = await startSandboxSeller({ requireSignedRequests: { jwksUrl: () => jwksUrl } });
      orch = await startOrchestrator({ env: { ADCP_ORCH_SIGNING_KEY_FILE: path } });
      jwksUrl = `${orch.url}/.well-known/jwks.json`;
      const kid = (await orch.app.signingKeys.signingKey())!.kid;
      const jwks = await (await fetch(jwksUrl)).json();
      expect(jwks.keys.map((k: any) => k.kid)).toEqual([kid]);
      const agentId = await orch.registerAgent({ url: seller.url });
      const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), webhook: 'none' });
      await waitForStatus(orch, created.body.id, ['completed']);
      expect(seller.requestSignatures!.records().filter((r) => r.operation === 'create_media_buy')).toEqual([expect.objectContaining({ outcome: 'verified', keyid: kid })]);
      // Not stored: only its public half is.
      const row = (await orch.app.store.db.kysely.withTables<{ signing_keys: { kid: string; private_jwk_enc: string | null; source: string } }>().selectFrom('signing_keys').selectAll().execute())[0];
      expect(row).toMatchObject({ kid, private_jwk_enc: null, source: 'file' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
