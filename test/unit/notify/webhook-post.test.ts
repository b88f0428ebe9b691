import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookPoster } from '../../../src/notify/webhook-post.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.js';

describe('WebhookPoster', () => {
  let rcv: WebhookReceiver;
  beforeAll(async () => {
    rcv = await startWebhookReceiver();
  });
  afterAll(async () => {
    await rcv.close();
  });

  it('posts the exact body with the given headers and reads the status and Retry-After', async () => {
    rcv.script = () => ({ status: 503, headers: { 'retry-after': '7' } });
    const poster = new WebhookPoster(true);
    const result = await poster.post(new URL(`${rcv.url}/in`), { 'webhook-id': 'ntf_1' }, '{"a":1}', { timeoutMs: 5000 });
    poster.close();
    expect(result).toEqual({ kind: 'response', status: 503, retryAfter: '7' });
    const got = rcv.requests.at(-1)!;
    expect(got).toMatchObject({ path: '/in', body: '{"a":1}' });
    expect(got.headers).toMatchObject({ 'webhook-id': 'ntf_1', 'content-type': 'application/json' });
  });

  it('does not follow redirects: a 3xx is the answer', async () => {
    rcv.script = () => ({ status: 302, headers: { location: 'http://169.254.169.254/' } });
    const poster = new WebhookPoster(true);
    expect(await poster.post(new URL(rcv.url), {}, '{}', { timeoutMs: 5000 })).toMatchObject({ kind: 'response', status: 302 });
    poster.close();
  });

  it('gives up at the deadline', async () => {
    rcv.script = () => 'hang';
    const poster = new WebhookPoster(true);
    expect(await poster.post(new URL(rcv.url), {}, '{}', { timeoutMs: 200 })).toEqual({ kind: 'error', error: 'timed out after 200 ms' });
    poster.close();
  });

  it('without private networks allowed, refuses at connect time a name that resolves to loopback, and a loopback literal, sending nothing', async () => {
    rcv.script = () => ({ status: 204 });
    const before = rcv.requests.length;
    const poster = new WebhookPoster(false);
    const port = new URL(rcv.url).port;
    const byName = await poster.post(new URL(`http://localhost:${port}/`), {}, '{}', { timeoutMs: 5000 });
    expect(byName).toMatchObject({ kind: 'error', error: expect.stringMatching(/^refused: localhost is, or resolves to/) });
    const literal = await poster.post(new URL(`http://127.0.0.1:${port}/`), {}, '{}', { timeoutMs: 5000 });
    expect(literal).toMatchObject({ kind: 'error', error: expect.stringMatching(/^refused/) });
    poster.close();
    expect(rcv.requests.length).toBe(before);
  });

  it('an abort (shutting down) ends the attempt as interrupted', async () => {
    rcv.script = () => 'hang';
    const poster = new WebhookPoster(true);
    const ac = new AbortController();
    const before = rcv.requests.length;
    const pending = poster.post(new URL(rcv.url), {}, '{}', { timeoutMs: 10_000, signal: ac.signal });
    // Aborted while the receiver holds the request.
    await rcv.waitFor(() => (rcv.requests.length > before ? true : undefined));
    ac.abort();
    expect(await pending).toEqual({ kind: 'error', error: 'interrupted' });
    poster.close();
  });
});
