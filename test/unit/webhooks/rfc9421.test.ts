/** RFC 9421 receiver behaviour beyond the vectors: key sources, odd bodies, failures of our own. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  brandJsonKeySource,
  jwksUriKeySource,
  keySourceFromConfig,
  staticKeySource,
  type NonceReplayStore,
  type WebhookJwk,
  type WebhookKeySource,
} from '../../../src/adcp/webhook-signature.js';
import { InMemoryNonceReplayStore } from '../../../src/webhooks/memory-replay-store.js';
import { authenticateRfc9421 } from '../../../src/webhooks/rfc9421.js';
import { publicJwk, signWebhook, testKey } from './signing-helpers.js';

const NOW_S = 1_776_520_800;
const now = () => NOW_S * 1000;
const URL_ = 'https://buyer.example.com/webhooks/adcp/tok_123';
const ed25519 = publicJwk(testKey('test-ed25519-webhook-2026')) as WebhookJwk;
const es256 = publicJwk(testKey('test-es256-webhook-2026')) as WebhookJwk;

function delivery(body = Buffer.from('{"task_id":"t1"}'), kid?: string) {
  return { method: 'POST', url: URL_, headers: signWebhook({ url: URL_, body, createdSeconds: NOW_S, kid }), rawBody: body };
}

function deps(keys: WebhookKeySource, replayStore: NonceReplayStore = new InMemoryNonceReplayStore()) {
  return { keys, replayStore, now };
}

describe('RFC 9421 verification', () => {
  it('verifies a signed delivery and reports the keyid', async () => {
    const result = await authenticateRfc9421(delivery(), deps(staticKeySource({ keys: [ed25519] })));
    expect(result).toEqual({ ok: true, keyid: 'test-ed25519-webhook-2026', verifiedAt: NOW_S * 1000 });
  });

  it('checks the digest over the raw bytes, even when they are not UTF-8', async () => {
    const body = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const request = delivery(body);
    expect(await authenticateRfc9421(request, deps(staticKeySource([ed25519])))).toMatchObject({ ok: true });
    const tampered = { ...request, rawBody: Buffer.from([0x7b, 0xff, 0xfd, 0x7d]) };
    expect(await authenticateRfc9421(tampered, deps(staticKeySource([ed25519])))).toMatchObject({
      ok: false,
      code: 'webhook_signature_digest_mismatch',
    });
  });

  it('rejects the request-signing tag on a webhook', async () => {
    const body = Buffer.from('{}');
    const headers = signWebhook({ url: URL_, body, createdSeconds: NOW_S, tag: 'adcp/request-signing/v1' });
    const result = await authenticateRfc9421({ method: 'POST', url: URL_, headers, rawBody: body }, deps(staticKeySource([ed25519])));
    expect(result).toMatchObject({ ok: false, code: 'webhook_signature_tag_invalid' });
  });

  it('refuses a key whose use is not "sig" as a purpose problem', async () => {
    const result = await authenticateRfc9421(delivery(), deps(staticKeySource([{ ...ed25519, use: 'enc' }])));
    expect(result).toMatchObject({ ok: false, code: 'webhook_signature_key_purpose_invalid' });
  });

  it('refuses a key without adcp_use as a purpose problem', async () => {
    const { adcp_use: _omit, ...bare } = ed25519;
    const result = await authenticateRfc9421(delivery(), deps(staticKeySource([bare as WebhookJwk])));
    expect(result).toMatchObject({ ok: false, code: 'webhook_signature_key_purpose_invalid' });
  });

  it('answers webhook_mode_mismatch when an RFC 9421 endpoint gets HMAC headers', async () => {
    const result = await authenticateRfc9421(
      { method: 'POST', url: URL_, headers: { 'X-ADCP-Signature': 'sha256=00', 'X-ADCP-Timestamp': '1' }, rawBody: Buffer.from('{}') },
      deps(staticKeySource([ed25519])),
    );
    expect(result).toMatchObject({ ok: false, code: 'webhook_mode_mismatch' });
  });

  it('an unsigned delivery is header_malformed, not a mode mismatch', async () => {
    const result = await authenticateRfc9421(
      { method: 'POST', url: URL_, headers: { 'content-type': 'application/json' }, rawBody: Buffer.from('{}') },
      deps(staticKeySource([ed25519])),
    );
    expect(result).toMatchObject({ ok: false, code: 'webhook_signature_header_malformed' });
  });

  it('a key source that cannot be reached is a transient failure (503), not a sender error', async () => {
    const broken: WebhookKeySource = { resolve: async () => Promise.reject(new Error('ECONNREFUSED')) };
    const result = await authenticateRfc9421(delivery(), deps(broken));
    expect(result).toMatchObject({ ok: false, code: 'webhook_signature_key_unknown', transient: true });
  });

  it('a failing replay store is a transient failure, never an acceptance', async () => {
    const failing: NonceReplayStore = {
      isAtCapacity: async () => false,
      has: async () => false,
      checkAndInsert: async () => Promise.reject(new Error('database is locked')),
    };
    const result = await authenticateRfc9421(delivery(), deps(staticKeySource([ed25519]), failing));
    expect(result).toMatchObject({ ok: false, code: 'webhook_verifier_unavailable', transient: true });
  });

  it('a concurrent duplicate delivery is accepted exactly once', async () => {
    const request = delivery();
    const store = new InMemoryNonceReplayStore();
    const results = await Promise.all([1, 2, 3].map(() => authenticateRfc9421(request, deps(staticKeySource([ed25519]), store))));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.code === 'webhook_signature_replayed')).toHaveLength(2);
  });
});

describe('key sources over HTTP (loopback, private network allowed for tests)', () => {
  let server: Server;
  let base = '';
  const hits: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      const json = (value: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.url === '/.well-known/jwks.json') return json({ keys: [ed25519] });
      if (req.url === '/seller/jwks.json') return json({ keys: [es256] });
      if (req.url === '/.well-known/brand.json') {
        return json({
          agents: [{ type: 'sales', id: 'seller', url: `${base}/mcp`, jwks_uri: `${base}/seller/jwks.json` }],
        });
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('jwks_uri: fetches the key set and verifies', async () => {
    const keys = jwksUriKeySource(`${base}/.well-known/jwks.json`, { allowPrivateNetwork: true, now });
    expect(await authenticateRfc9421(delivery(), deps(keys))).toMatchObject({ ok: true });
    expect(hits).toContain('/.well-known/jwks.json');
  });

  it('brand_json_url: follows brand.json → agents[] → jwks_uri and verifies', async () => {
    const keys = brandJsonKeySource(`${base}/.well-known/brand.json`, { allowPrivateNetwork: true, now });
    const result = await authenticateRfc9421(delivery(undefined, 'test-es256-webhook-2026'), deps(keys));
    expect(result).toMatchObject({ ok: true, keyid: 'test-es256-webhook-2026' });
    expect(hits).toContain('/seller/jwks.json');
  });

  it('without the private-network allowance, a loopback key URL is refused (SSRF guard) as transient', async () => {
    const keys = jwksUriKeySource(`${base}/.well-known/jwks.json`, { now });
    expect(await authenticateRfc9421(delivery(), deps(keys))).toMatchObject({
      ok: false,
      code: 'webhook_signature_key_unknown',
      transient: true,
    });
  });

  it('keySourceFromConfig picks inline keys, then jwks_uri, then brand.json', async () => {
    expect(keySourceFromConfig({})).toBeNull();
    const inline = keySourceFromConfig({ jwks: { keys: [ed25519] }, jwks_uri: 'https://unused.example/jwks' })!;
    expect(await inline.resolve(ed25519.kid)).toMatchObject({ kid: ed25519.kid });
    const viaUri = keySourceFromConfig({ jwks_uri: `${base}/.well-known/jwks.json` }, { allowPrivateNetwork: true, now })!;
    expect(await viaUri.resolve(ed25519.kid)).toMatchObject({ kid: ed25519.kid });
  });
});
