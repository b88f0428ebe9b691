/**
 * A real receiver of delivery reports on loopback that authenticates each
 * fire the way a buyer must before reading it: legacy HMAC (`X-ADCP-Signature`
 * over `"{X-ADCP-Timestamp}.{raw body}"`, ±300 s, constant-time compare),
 * Bearer, or RFC 9421 against the seller's JWKS. A fire that fails is answered
 * 401 and marked unverified; others get the scripted status (default 204).
 * Tests await fires with `waitFor`, never a sleep.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { InMemoryReplayStore, InMemoryRevocationStore, StaticJwksResolver, verifyWebhookSignature } from '@adcp/sdk/signing/server';
import { whenBodyRead } from './request-body.js';

export type ReceiverAuth = { hmac: string } | { bearer: string } | { rfc9421: { keys: unknown[] } };

export interface ReceivedFire {
  path: string;
  headers: Record<string, string>;
  raw: string;
  body: Record<string, any>;
  verified: boolean;
  status: number;
}

export interface ReportReceiver {
  /** Base URL; fires may go to any path under it. */
  url: string;
  fires: ReceivedFire[];
  /** The status for the n-th (1-based) fire that verified; default 204. */
  answer: (n: number) => number;
  /** Resolves with the fires once there are at least n of them. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedFire[]>;
  close(): Promise<void>;
}

function verifyHmac(secret: string, headers: Record<string, string>, raw: string): boolean {
  const ts = headers['x-adcp-timestamp'] ?? '';
  const sig = headers['x-adcp-signature'] ?? '';
  if (!/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${ts}.${raw}`).digest('hex')}`);
  const got = Buffer.from(sig);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

export async function startReportReceiver(auth: ReceiverAuth): Promise<ReportReceiver> {
  const events = new EventEmitter();
  const sockets = new Set<Socket>();
  const replayStore = new InMemoryReplayStore();
  let verifiedCount = 0;
  const verify = async (url: string, headers: Record<string, string>, raw: string): Promise<boolean> => {
    if ('hmac' in auth) return verifyHmac(auth.hmac, headers, raw);
    if ('bearer' in auth) return headers.authorization === `Bearer ${auth.bearer}`;
    try {
      await verifyWebhookSignature(
        { method: 'POST', url, headers, body: raw },
        { jwks: new StaticJwksResolver(auth.rfc9421.keys as never), replayStore, revocationStore: new InMemoryRevocationStore() },
      );
      return true;
    } catch {
      return false;
    }
  };
  const receiver: ReportReceiver = {
    url: '',
    fires: [],
    answer: () => 204,
    async waitFor(n, timeoutMs = 20_000) {
      if (receiver.fires.length >= n) return receiver.fires;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          events.off('fire', onFire);
          reject(new Error(`report receiver: ${n} fires expected within ${timeoutMs} ms, got ${receiver.fires.length}`));
        }, timeoutMs);
        const onFire = (): void => {
          if (receiver.fires.length < n) return;
          clearTimeout(timer);
          events.off('fire', onFire);
          resolve(receiver.fires);
        };
        events.on('fire', onFire);
      });
    },
    async close() {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
  const server = http.createServer((req, res) => {
    whenBodyRead(req, (raw) => {
      void (async () => {
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
        const verified = await verify(`${receiver.url}${req.url ?? '/'}`, headers, raw);
        const status = verified ? receiver.answer(++verifiedCount) : 401;
        receiver.fires.push({ path: req.url ?? '/', headers, raw, body: JSON.parse(raw) as Record<string, any>, verified, status });
        res.writeHead(status).end();
        setImmediate(() => events.emit('fire'));
      })();
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
