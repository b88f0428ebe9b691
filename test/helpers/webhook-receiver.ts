/**
 * A real HTTP receiver of outbound notifications on loopback. It records every
 * request (headers, exact body, when) and answers as the test's script says:
 * a status (with headers), or `hang` (never answer, to make the sender time out).
 * Tests await what they expect with `waitFor`, never a fixed sleep.
 */
import { once } from 'node:events';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { whenBodyRead } from './request-body.js';

export interface ReceivedRequest {
  /** 0-based, in arrival order. */
  index: number;
  at: number;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** What was answered: a status, or 'hang'. */
  answered: number | 'hang';
}

export type Answer = { status: number; headers?: Record<string, string> } | 'hang';

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Decides the answer to each request (the default answers 204). */
  script: (req: Omit<ReceivedRequest, 'answered'>) => Answer;
  waitFor<T>(check: () => T | undefined, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const events = new EventEmitter();
  const sockets = new Set<Socket>();
  const receiver: WebhookReceiver = {
    url: '',
    requests: [],
    script: () => ({ status: 204 }),
    async waitFor(check, timeoutMs = 30_000) {
      const first = check();
      if (first !== undefined) return first;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          events.off('request', onRequest);
          reject(new Error(`receiver: condition not met within ${timeoutMs} ms (${receiver.requests.length} requests so far)`));
        }, timeoutMs);
        const onRequest = () => {
          const v = check();
          if (v === undefined) return;
          clearTimeout(timer);
          events.off('request', onRequest);
          resolve(v);
        };
        events.on('request', onRequest);
      });
    },
    async close() {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
  const server = http.createServer((req, res) => {
    whenBodyRead(req, (body) => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
      const seen = { index: receiver.requests.length, at: Date.now(), path: req.url ?? '/', headers, body };
      const answer = receiver.script(seen);
      receiver.requests.push({ ...seen, answered: answer === 'hang' ? 'hang' : answer.status });
      if (answer !== 'hang') res.writeHead(answer.status, answer.headers).end();
      // Emitted after the answer is written, so a waiter sees the request as answered.
      setImmediate(() => events.emit('request'));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
