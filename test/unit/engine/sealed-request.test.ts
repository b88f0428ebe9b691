import { describe, expect, it } from 'vitest';
import { redactedRequest } from '../../../src/domain/credential-fields.js';
import { RequestSealer } from '../../../src/engine/sealed-request.js';
import { SecretBox } from '../../../src/store/secret-box.js';

const box = new SecretBox('unit-test-secret-key-0123456789');
const sealer = new RequestSealer(box);

const HMAC_SECRET = 'hmac-secret-0123456789abcdefghijklmnopqrstuv';
const REPORTING_SECRET = 'reporting-credential-ABCDEFGHIJKLMNOPQRSTUVWX';
const REPORTING_TOKEN = 'reporting-token-0123456789';
const WEBHOOK_TOKEN = 'Zk3v0wq8h2mN5pL7rT1xY4bC6dE9fG0h';

/** A create_media_buy as the engine builds it, with every kind of credential AdCP requests carry. */
function request(): Record<string, unknown> {
  return {
    account: { account_id: 'acc_1' },
    brand: { domain: 'example-brand.com' },
    start_time: 'asap',
    end_time: '2027-12-31T23:59:59Z',
    po_number: 'PO-ünïcødé-✓',
    packages: [{ product_id: 'p1', pricing_option_id: 'cpm', budget: 40000, ext: JSON.parse('{"__proto__": {"polluted": true}}') }],
    reporting_webhook: {
      url: 'https://buyer.example/reports',
      token: REPORTING_TOKEN,
      authentication: { schemes: ['Bearer'], credentials: REPORTING_SECRET },
      reporting_frequency: 'daily',
    },
    creative_asset: { access: { method: 'service_account', provider: 'gcp', credentials: { private_key: 'pk-0123456789abcdef', client_email: 'x@y.z' } } },
    idempotency_key: '6f1c1b8e-0d7e-4b4a-9a77-3c2f1d0e9b8a',
    context: { orchestrator_operation_id: 'op-1' },
    push_notification_config: {
      url: `https://orch.example/webhooks/adcp/${WEBHOOK_TOKEN}`,
      operation_id: 'op-1',
      authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC_SECRET },
    },
  };
}

describe('stored requests', () => {
  it('keep no credential in clear, and everything else readable', () => {
    const stored = sealer.seal(request());
    for (const secret of [HMAC_SECRET, REPORTING_SECRET, REPORTING_TOKEN, 'pk-0123456789abcdef']) expect(stored).not.toContain(secret);
    const parsed = JSON.parse(stored);
    expect(parsed.account).toEqual({ account_id: 'acc_1' });
    expect(parsed.packages[0].budget).toBe(40000);
    expect(parsed.push_notification_config.authentication.schemes).toEqual(['HMAC-SHA256']);
    expect(Object.keys(parsed.push_notification_config.authentication.credentials)).toEqual(['$sealed']);
    expect(parsed.reporting_webhook.token.$sealed).toMatch(/^v1\./);
  });

  it('open to exactly the bytes of the request as first built, however often they are sealed', () => {
    const sent = JSON.stringify(request());
    const first = sealer.seal(request());
    const second = sealer.seal(request());
    // A fresh IV each time, the same request inside.
    expect(first).not.toBe(second);
    expect(JSON.stringify(sealer.open(first))).toBe(sent);
    expect(JSON.stringify(sealer.open(second))).toBe(sent);
    // Opening twice (a resend after a resend) changes nothing either.
    expect(JSON.stringify(sealer.open(first))).toBe(JSON.stringify(sealer.open(first)));
  });

  it('keep a caller\'s "__proto__" key an own property, never a prototype', () => {
    const opened = sealer.open(sealer.seal(request())) as any;
    expect(Object.getPrototypeOf(opened.packages[0].ext)).toBe(Object.prototype);
    expect(Object.hasOwn(opened.packages[0].ext, '__proto__')).toBe(true);
  });

  it("take a caller's own {$sealed} at a credential field for a value like any other", () => {
    const tricky = { a: { credentials: { $sealed: 'not ours' } }, b: { $sealed: 'anything' } };
    const stored = sealer.seal(tricky);
    expect(JSON.stringify(sealer.open(stored))).toBe(JSON.stringify(tricky));
  });

  it('send a body stored before sealing existed as it is', () => {
    const legacy = JSON.stringify(request());
    expect(JSON.stringify(sealer.open(legacy))).toBe(legacy);
  });

  it('do not open under another key', () => {
    const stored = sealer.seal(request());
    expect(() => new RequestSealer(new SecretBox('another-secret-key-0123456789')).open(stored)).toThrow();
  });

  it('are shown with every credential and the webhook token redacted, sealed or not, without the key', () => {
    for (const stored of [sealer.seal(request()), JSON.stringify(request())]) {
      const shown = redactedRequest(stored, WEBHOOK_TOKEN) as any;
      const text = JSON.stringify(shown);
      for (const secret of [HMAC_SECRET, REPORTING_SECRET, REPORTING_TOKEN, WEBHOOK_TOKEN, 'pk-0123456789abcdef', '$sealed']) expect(text).not.toContain(secret);
      expect(shown.push_notification_config).toEqual({
        url: 'https://orch.example/webhooks/adcp/[redacted]',
        operation_id: 'op-1',
        authentication: { schemes: ['HMAC-SHA256'], credentials: '[redacted]' },
      });
      expect(shown.reporting_webhook.token).toBe('[redacted]');
      expect(shown.packages[0].product_id).toBe('p1');
    }
  });
});

describe('the fast paths (no reviver) of reading stored requests', () => {
  it('still hide a credential field spelled with an escape, and the token, in a body with no credential name', () => {
    const escaped = `{"a":{"tok\\u0065n":"${REPORTING_TOKEN}"},"u":"https://o/webhooks/adcp/${WEBHOOK_TOKEN}"}`;
    expect(JSON.parse(escaped).a.token).toBe(REPORTING_TOKEN);
    expect(redactedRequest(escaped, WEBHOOK_TOKEN)).toEqual({ a: { token: '[redacted]' }, u: 'https://o/webhooks/adcp/[redacted]' });
    const plain = `{"u":"https://o/webhooks/adcp/${WEBHOOK_TOKEN}","n":[1,2]}`;
    expect(redactedRequest(plain, WEBHOOK_TOKEN)).toEqual({ u: 'https://o/webhooks/adcp/[redacted]', n: [1, 2] });
    expect(sealer.open(plain)).toEqual(JSON.parse(plain));
  });
});

describe('the keyed digest of API requests (Idempotency-Key)', () => {
  it('is stable under one key, differs under another, and is not the bare SHA-256', async () => {
    const { createHash } = await import('node:crypto');
    const text = 'POST /v1/agents\n{}\n{"auth":{"scheme":"bearer","token":"guessable"}}';
    expect(box.digest(text)).toBe(box.digest(text));
    expect(box.digest(text)).not.toBe(new SecretBox('another-secret-key-0123456789').digest(text));
    expect(box.digest(text)).not.toBe(createHash('sha256').update(text).digest('hex'));
  });
});

describe('requests kept inside other stored JSON (a stored answer)', () => {
  it('seal and open in place, as objects, and pass undefined through', () => {
    const input = request();
    const inside = sealer.sealedIn(input);
    expect(JSON.stringify(inside)).not.toContain(HMAC_SECRET);
    expect(JSON.stringify(sealer.openedIn(JSON.parse(JSON.stringify({ wrapped: inside })).wrapped))).toBe(JSON.stringify(input));
    expect(sealer.sealedIn(undefined)).toBeUndefined();
    expect(sealer.openedIn(undefined)).toBeUndefined();
  });
});
