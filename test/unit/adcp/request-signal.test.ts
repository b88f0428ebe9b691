/**
 * fetchWithRequestSignal over real HTTP on loopback: the long-lived signal
 * carries one listener however many requests use it, a request counts as in
 * flight only until its body is done or it fails, and aborting the signal
 * still aborts requests waiting for headers and bodies being read.
 */
import { getEventListeners } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchWithRequestSignal, requestsInFlight } from '../../../src/adcp/request-signal.js';

let server: Server;
let base: string;
/** Responses the server holds open, ended by the test (or by the client going away). */
const held: ServerResponse[] = [];
let requestArrived: (() => void) | undefined;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    } else if (req.url === '/empty') {
      res.writeHead(204).end();
    } else if (req.url === '/fail') {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('broken');
    } else if (req.url === '/stream') {
      // Headers and a first chunk now, the rest never (until the client aborts).
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      held.push(res);
    } else if (req.url === '/hang') {
      held.push(res); // no headers at all
    }
    requestArrived?.();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of held) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;
const arrival = (): Promise<void> => new Promise((resolve) => (requestArrived = resolve));

describe('fetchWithRequestSignal', () => {
  const scopedFetch = fetchWithRequestSignal();

  it('releases a request once its body is read, cancelled or absent, or it fails; one listener throughout', async () => {
    const session = new AbortController();
    for (let i = 0; i < 50; i++) {
      const json = await scopedFetch(`${base}/json`, { signal: session.signal });
      expect(requestsInFlight(session.signal)).toBe(1); // in flight until the body is read
      expect(await json.json()).toEqual({ ok: true });
      expect(requestsInFlight(session.signal)).toBe(0);
      const failed = await scopedFetch(`${base}/fail`, { signal: session.signal });
      expect(failed.status).toBe(500);
      expect(await failed.clone().text()).toBe('broken'); // a tee, as readHttpFailure reads it
      expect(await failed.text()).toBe('broken');
      const empty = await scopedFetch(`${base}/empty`, { signal: session.signal });
      expect(empty.status).toBe(204);
      const cancelled = await scopedFetch(`${base}/json`, { signal: session.signal });
      await cancelled.body!.cancel();
      await expect(scopedFetch('http://127.0.0.1:1/refused', { signal: session.signal })).rejects.toThrow();
    }
    expect(requestsInFlight(session.signal)).toBe(0);
    expect(listeners(session.signal)).toBe(1);
  });

  it('many requests in flight at once: still one listener, and aborting aborts them all', async () => {
    const session = new AbortController();
    const arrivedAll = new Promise<void>((resolve) => {
      let n = 0;
      requestArrived = () => ++n === 40 && resolve();
    });
    const pending = Array.from({ length: 40 }, () => scopedFetch(`${base}/hang`, { signal: session.signal }));
    await arrivedAll;
    expect(requestsInFlight(session.signal)).toBe(40);
    expect(listeners(session.signal)).toBe(1);
    session.abort(new Error('session closed'));
    const settled = await Promise.allSettled(pending);
    expect(settled.every((s) => s.status === 'rejected')).toBe(true);
    expect(requestsInFlight(session.signal)).toBe(0);
  });

  it('keeps what callers read off the response: status, headers, url', async () => {
    const response = await scopedFetch(`${base}/json`, { signal: new AbortController().signal });
    expect(response.status).toBe(200);
    expect(response.ok).toBe(true);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.url).toBe(`${base}/json`);
    await response.text();
  });

  it('aborting the long-lived signal aborts a request still waiting for its headers', async () => {
    const session = new AbortController();
    const arrived = arrival();
    const pending = scopedFetch(`${base}/hang`, { signal: session.signal });
    await arrived;
    session.abort(new Error('session closed'));
    await expect(pending).rejects.toThrow('session closed');
    expect(requestsInFlight(session.signal)).toBe(0);
  });

  it('aborting the long-lived signal aborts a body still being read', async () => {
    const session = new AbortController();
    const response = await scopedFetch(`${base}/stream`, { signal: session.signal });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('first');
    const rest = reader.read();
    session.abort(new Error('session closed'));
    await expect(rest).rejects.toThrow();
    expect(requestsInFlight(session.signal)).toBe(0);
  });

  it('an already aborted signal fails the request at once', async () => {
    const session = new AbortController();
    session.abort(new Error('closed before'));
    await expect(scopedFetch(`${base}/json`, { signal: session.signal })).rejects.toThrow('closed before');
    expect(listeners(session.signal)).toBe(0);
  });

  it('passes a request without a signal straight through', async () => {
    const response = await scopedFetch(`${base}/json`);
    expect(await response.json()).toEqual({ ok: true });
  });
});
