/**
 * A tiny HTTP proxy that hands each request to the next live backend in turn:
 * the "load balancer" in front of several orchestrator instances, so a seller's
 * webhook can land on any of them. A backend that refuses the connection (killed)
 * is skipped and the next one tried.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './request-body.js';

export interface RoundRobinProxy {
  url: string;
  /** Requests forwarded, per backend base URL. */
  counts: Map<string, number>;
  close(): Promise<void>;
}

export async function startRoundRobinProxy(backends: () => string[], port = 0): Promise<RoundRobinProxy> {
  let next = 0;
  const counts = new Map<string, number>();
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const list = backends();
    for (let tries = 0; tries < list.length; tries++) {
      const base = list[next++ % list.length]!;
      try {
        const answer = await forward(base, req, body);
        counts.set(base, (counts.get(base) ?? 0) + 1);
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
        return;
      } catch {
        /* backend down: try the next one */
      }
    }
    res.writeHead(502).end();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function forward(base: string, req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const target = new URL(req.url ?? '/', base);
    const out = request(target, { method: req.method, headers: req.headers }, (res) => {
      readBody(res).then((b) => resolve({ status: res.statusCode ?? 502, headers: res.headers as Record<string, string | string[]>, body: b }), reject);
    });
    out.on('error', reject);
    out.end(body);
  });
}
