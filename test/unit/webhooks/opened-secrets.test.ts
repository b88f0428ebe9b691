import { describe, expect, it } from 'vitest';
import { computeHmacSignature } from '../../../src/webhooks/hmac.js';
import { OpenedSecrets } from '../../../src/webhooks/opened-secrets.js';

describe('OpenedSecrets', () => {
  it('opens each sealed secret once and keeps it, a changed secret being a new entry', () => {
    const opened: string[] = [];
    const secrets = new OpenedSecrets((sealed) => {
      opened.push(sealed);
      return `plain-of-${sealed}`;
    });
    expect(secrets.get('a').plain).toBe('plain-of-a');
    expect(secrets.get('a').plain).toBe('plain-of-a');
    expect(secrets.get('b').plain).toBe('plain-of-b');
    expect(opened).toEqual(['a', 'b']);
  });

  it('keeps at most its bound, the oldest opened going first', () => {
    const opened: string[] = [];
    const secrets = new OpenedSecrets((sealed) => (opened.push(sealed), sealed), 2);
    secrets.get('a');
    secrets.get('b');
    secrets.get('c');
    secrets.get('b');
    secrets.get('a');
    expect(opened).toEqual(['a', 'b', 'c', 'a']);
  });

  it('judges an HMAC secret once: a short one is refused, a 32-byte random one accepted', () => {
    const secrets = new OpenedSecrets((sealed) => sealed);
    const weak = secrets.get('short');
    expect(weak.hmacStrength().ok).toBe(false);
    expect(weak.hmacStrength()).toBe(weak.hmacStrength());
    const strong = secrets.get('q8Xk2vR7mN4pL9sT1wY6zB3cF5hJ0dGa');
    expect(strong.hmacStrength()).toEqual({ ok: true });
  });

  it('verifies an HMAC delivery with a strong secret, and refuses any with a weak one, saying why', () => {
    const secrets = new OpenedSecrets((sealed) => sealed);
    const now = 1_700_000_000_000;
    const body = Buffer.from('{"task_id":"t1","status":"working"}', 'utf8');
    const signed = (secret: string) => ({
      headers: { 'X-ADCP-Timestamp': String(now / 1000), 'X-ADCP-Signature': computeHmacSignature(secret, String(now / 1000), body) },
      rawBody: body,
    });
    const why: string[] = [];
    const strong = 'q8Xk2vR7mN4pL9sT1wY6zB3cF5hJ0dGa';
    expect(secrets.get(strong).verifyHmac(signed(strong), () => now, (m) => why.push(m)).ok).toBe(true);
    expect(secrets.get(strong).verifyHmac(signed('another-secret-of-32-bytes-xxxxx'), () => now, (m) => why.push(m)).ok).toBe(false);
    expect(why).toEqual([]);
    expect(secrets.get('short').verifyHmac(signed('short'), () => now, (m) => why.push(m))).toMatchObject({ ok: false, code: 'webhook_signature_invalid' });
    expect(why).toHaveLength(1);
  });
});
