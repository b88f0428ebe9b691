/** Legacy Bearer webhook credentials. */
import { describe, expect, it } from 'vitest';
import { verifyBearerWebhook } from '../../../src/webhooks/bearer.js';

const token = 'tok_' + 'a1b2c3d4'.repeat(5);
const old = 'old_' + 'z9y8x7w6'.repeat(5);

describe('Bearer webhook authentication', () => {
  it('accepts the registered credential (scheme case-insensitive)', () => {
    expect(verifyBearerWebhook({ authorization: `Bearer ${token}` }, { token })).toEqual({ ok: true, usedPreviousToken: false });
    expect(verifyBearerWebhook({ Authorization: `bearer ${token}` }, { token }).ok).toBe(true);
  });

  it('rejects a different, a prefix and an extended credential', () => {
    for (const presented of [old, token.slice(0, -1), `${token}x`]) {
      expect(verifyBearerWebhook({ authorization: `Bearer ${presented}` }, { token })).toMatchObject({
        ok: false,
        code: 'webhook_signature_invalid',
      });
    }
  });

  it('rejects missing, repeated or malformed Authorization headers', () => {
    for (const headers of [{}, { authorization: token }, { authorization: 'Basic abc' }, { authorization: [`Bearer ${token}`, `Bearer ${token}`] }]) {
      expect(verifyBearerWebhook(headers, { token })).toMatchObject({ ok: false, code: 'webhook_signature_header_malformed' });
    }
  });

  it('accepts the previous credential only until the rotation deadline', () => {
    const creds = { token, previous: { token: old, validUntilMs: 1000 } };
    expect(verifyBearerWebhook({ authorization: `Bearer ${old}` }, creds, () => 1000)).toEqual({ ok: true, usedPreviousToken: true });
    expect(verifyBearerWebhook({ authorization: `Bearer ${old}` }, creds, () => 1001)).toMatchObject({ ok: false });
  });

  it('answers webhook_mode_mismatch for an HMAC-signed delivery', () => {
    expect(verifyBearerWebhook({ 'x-adcp-signature': 'sha256=00', 'x-adcp-timestamp': '1' }, { token })).toMatchObject({
      ok: false,
      code: 'webhook_mode_mismatch',
    });
  });
});
