import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { newSubscriptionSecret, signWebhook } from '../../../src/notify/webhook-signer.js';

describe('signWebhook', () => {
  it('signs so that the reference verifier accepts it, and only with the right secret and body', () => {
    const secret = newSubscriptionSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ id: 'ntf_1', type: 'operation.completed' });
    const headers = signWebhook('ntf_1', new Date(), body, [secret]);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSubscriptionSecret()).verify(body, { ...headers })).toThrow();
    expect(() => new Webhook(secret).verify(body.replace('completed', 'failed'), { ...headers })).toThrow();
  });

  it('during rotation carries one signature per active secret, each verifiable alone', () => {
    const [a, b] = [newSubscriptionSecret(), newSubscriptionSecret()];
    const body = '{"x":1}';
    const headers = signWebhook('ntf_2', new Date(), body, [a, b]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(a).verify(body, { ...headers })).toEqual({ x: 1 });
    expect(new Webhook(b).verify(body, { ...headers })).toEqual({ x: 1 });
  });

  it('the timestamp is this attempt, in seconds', () => {
    const at = new Date('2026-03-01T12:00:00.900Z');
    expect(signWebhook('ntf_3', at, '{}', [newSubscriptionSecret()])['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
  });

  it('refuses to sign without a secret or with a dot in the id', () => {
    expect(() => signWebhook('ntf_4', new Date(), '{}', [])).toThrow();
    expect(() => signWebhook('a.b', new Date(), '{}', [newSubscriptionSecret()])).toThrow();
  });
});
