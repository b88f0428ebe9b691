/**
 * One POST of an outbound notification: node's own HTTP client, so that the
 * DNS lookup of every connection goes through the SSRF guard, with one deadline
 * over connect, headers and body. Redirects are not followed (a 3xx is a
 * failure, as Standard Webhooks asks). The answer's body is read (to free the
 * connection) and dropped: only the status and `Retry-After` matter.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { AttemptResult } from '../domain/subscription-retry.js';
import { guardedLookup, isBlockedAddress, TargetRefused } from './subscription-target.js';

export interface PostOptions {
  timeoutMs: number;
  allowPrivateNetwork: boolean;
  /** Aborts the attempt (shutting down); the result is then an error `interrupted`. */
  signal?: AbortSignal;
}

const MAX_ANSWER_BYTES = 64 * 1024;
const USER_AGENT = 'adcp-orchestrator/0.1 (+standard-webhooks)';

export class WebhookPoster {
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(private readonly allowPrivateNetwork: boolean) {
    const lookup = guardedLookup(allowPrivateNetwork);
    // One connection per attempt: deliveries are spread over many receivers and minutes,
    // and a kept-alive socket would skip the guarded lookup of a later attempt.
    this.agents = { http: new http.Agent({ keepAlive: false, lookup }), https: new https.Agent({ keepAlive: false, lookup }) };
  }

  post(url: URL, headers: Record<string, string>, body: string, opts: Omit<PostOptions, 'allowPrivateNetwork'>): Promise<AttemptResult> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && isBlockedAddress(host, this.allowPrivateNetwork)) {
      return Promise.resolve({ kind: 'error', error: `refused: ${host} is a loopback, private or link-local address` });
    }
    const client = url.protocol === 'https:' ? https : http;
    const agent = url.protocol === 'https:' ? this.agents.https : this.agents.http;
    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      const finish = (r: AttemptResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        resolve(r);
      };
      const req = client.request(url, {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': USER_AGENT },
      });
      const timer = setTimeout(() => {
        finish({ kind: 'error', error: `timed out after ${opts.timeoutMs} ms` });
        req.destroy();
      }, opts.timeoutMs);
      const onAbort = () => {
        finish({ kind: 'error', error: 'interrupted' });
        req.destroy();
      };
      if (opts.signal?.aborted) return onAbort();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => finish({ kind: 'error', error: describe(err) }));
      req.on('response', (res) => {
        let seen = 0;
        const status = res.statusCode ?? 0;
        const retryAfter = typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : undefined;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          // The status is known; a huge answer is not worth reading to the end.
          if (seen > MAX_ANSWER_BYTES) {
            finish({ kind: 'response', status, retryAfter });
            res.destroy();
          }
        });
        res.on('end', () => finish({ kind: 'response', status, retryAfter }));
        res.on('error', (err) => finish({ kind: 'error', error: describe(err) }));
      });
      req.end(body);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

function describe(err: unknown): string {
  if (err instanceof TargetRefused) return `refused: ${err.message}`;
  const e = err as NodeJS.ErrnoException;
  return e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? err);
}
