/**
 * How the tests' fault-injecting proxies pass a request on to the agent behind
 * them: same method, path and headers (Host made the agent's), the body already
 * read; the answer comes back whole, with the headers a proxy may copy as they
 * are (not the hop-by-hop ones) and a content-length of the body it carries.
 */
import { request, type IncomingMessage } from 'node:http';
import { readBody } from './request-body.js';

export interface ForwardedAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export function forwardTo(target: string, req: IncomingMessage, body: Buffer): Promise<ForwardedAnswer> {
  const url = new URL(req.url ?? '/', target);
  return new Promise((resolve, reject) => {
    const out = request(url, { method: req.method, headers: { ...req.headers, host: url.host, 'content-length': String(body.length) } }, (res) => {
      readBody(res).then((b) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string' && k !== 'transfer-encoding' && k !== 'connection') headers[k] = v;
        headers['content-length'] = String(b.length);
        resolve({ status: res.statusCode ?? 502, headers, body: b });
      }, reject);
    });
    out.on('error', reject);
    out.end(body);
  });
}
