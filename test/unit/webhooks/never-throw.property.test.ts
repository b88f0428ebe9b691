/**
 * Property: the authentication functions answer every input with a result
 * (ok, or a code), never an exception — a throw in the route would become a
 * 500 and make the sender retry something that can never succeed.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { staticKeySource, type WebhookJwk } from '../../../src/adcp/webhook-signature.js';
import { verifyBearerWebhook } from '../../../src/webhooks/bearer.js';
import { verifyHmacWebhook } from '../../../src/webhooks/hmac.js';
import { InMemoryNonceReplayStore } from '../../../src/webhooks/memory-replay-store.js';
import { authenticateRfc9421 } from '../../../src/webhooks/rfc9421.js';
import { readWebhookPayload } from '../../../src/webhooks/read-payload.js';
import { publicJwk, testKey } from './signing-helpers.js';

const HEADER_NAMES = [
  'signature',
  'Signature-Input',
  'content-digest',
  'content-type',
  'x-adcp-signature',
  'X-ADCP-Timestamp',
  'authorization',
];

/** Header values: random text, plus fragments that get parsers past their first checks. */
const headerValue = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    'sig1=("@method" "@target-uri" "@authority" "content-type" "content-digest");created=1776520800;expires=1776521100;nonce="KXYnfEfJ0PBRZXQyVXfVQA";keyid="test-ed25519-webhook-2026";alg="ed25519";tag="adcp/webhook-signing/v1"',
    'sig1=:nqTKCpjlqf1OqZPuJyPeiF7HJ01G8KmPNSzzmad0PAJv7OUVKthI7ks_j4G-6x1H4mBpXDIISgX_iZQiYvG7Dg:',
    'sha-256=:dJ2koiIMZIhdGE7tidErCHV13FFvOIowCcXDiwyG54I=:',
    'sha256=' + 'ab'.repeat(32),
    '1776520800',
    'Bearer ' + 'x'.repeat(40),
    'application/json',
  ),
);
const headers = fc.dictionary(
  fc.oneof(fc.constantFrom(...HEADER_NAMES), fc.string()),
  fc.oneof(headerValue, fc.array(headerValue, { maxLength: 3 }), fc.constant(undefined)),
);
const body = fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.from(b));
const url = fc.oneof(
  fc.constantFrom('https://buyer.example.com/adcp/webhook/create_media_buy/agent_123/op_abc', 'http://127.0.0.1:1/x', 'not a url', ''),
  fc.webUrl(),
  fc.string(),
);

const keys = staticKeySource([publicJwk(testKey('test-ed25519-webhook-2026')) as WebhookJwk]);

describe('verification never throws', () => {
  it('RFC 9421', async () => {
    const replayStore = new InMemoryNonceReplayStore();
    await fc.assert(
      fc.asyncProperty(headers, body, url, fc.string(), async (h, b, u, method) => {
        const result = await authenticateRfc9421({ method, url: u, headers: h, rawBody: b }, { keys, replayStore, now: () => 1_776_520_800_000 });
        if (!result.ok) expect(result.code).toMatch(/^webhook_/);
      }),
      { numRuns: 1500 },
    );
  });

  it('HMAC', () => {
    fc.assert(
      fc.property(headers, body, (h, b) => {
        const result = verifyHmacWebhook({ headers: h, rawBody: b }, { secret: 'k'.repeat(16) + 'z'.repeat(16) }, () => 1_776_520_800_000);
        if (!result.ok) expect(result.code).toMatch(/^webhook_/);
      }),
      { numRuns: 3000 },
    );
  });

  it('Bearer', () => {
    fc.assert(
      fc.property(headers, (h) => {
        const result = verifyBearerWebhook(h, { token: 'x'.repeat(40) });
        if (!result.ok) expect(result.code).toMatch(/^webhook_/);
      }),
      { numRuns: 3000 },
    );
  });

  it('payload reading', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(typeof readWebhookPayload(value).ok).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
  });
});
