/**
 * An HTTP proxy in front of a sandbox seller that can spoil the next A2A
 * follow-up message (a `message/send` carrying a taskId: a person's answer on a
 * continuation), to make an ambiguous continuation send:
 * - `lose-reply`: the seller gets the message and acts on it; the buyer gets a 502;
 * - `drop-request`: the seller never sees it; the buyer gets a 502.
 * Everything else passes through untouched.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardTo } from './proxy-forward.js';
import { peekJsonRpc, readBody } from './request-body.js';

export type ContinuationFault = 'lose-reply' | 'drop-request';

export interface ContinuationFaultProxy {
  /** The proxy's origin; the seller's paths are the same under it. */
  origin: string;
  /** Spoil the next follow-up message this way (once). */
  spoilNext(fault: ContinuationFault): void;
  /** Follow-up messages seen, with what was done to each. */
  seen: Array<{ messageId: string; taskId: string; fault: ContinuationFault | 'passed' }>;
  close(): Promise<void>;
}

export async function startContinuationFaultProxy(target: string): Promise<ContinuationFaultProxy> {
  let pending: ContinuationFault | undefined;
  let origin = '';
  const seen: ContinuationFaultProxy['seen'] = [];
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const followUp = followUpOf(body);
    const fault = followUp ? pending : undefined;
    if (followUp) {
      seen.push({ ...followUp, fault: fault ?? 'passed' });
      pending = undefined;
    }
    if (fault === 'drop-request') {
      res.writeHead(502).end('proxy: dropped');
      return;
    }
    try {
      const answer = await forwardTo(target, req, body);
      if (fault === 'lose-reply') {
        res.writeHead(502).end('proxy: reply lost');
        return;
      }
      // The agent card names the seller's own endpoint: point it here, so calls keep coming through.
      const bodyOut = /agent(-card)?\.json$/.test(req.url ?? '') ? Buffer.from(answer.body.toString('utf8').split(target).join(origin)) : answer.body;
      res.writeHead(answer.status, { ...answer.headers, 'content-length': String(bodyOut.length) });
      res.end(bodyOut);
    } catch {
      res.writeHead(502).end('proxy: seller unreachable');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    spoilNext: (f) => (pending = f),
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function followUpOf(body: Buffer): { messageId: string; taskId: string } | undefined {
  const rpc = peekJsonRpc(body);
  const m = rpc?.params?.message as { messageId?: string; taskId?: string } | undefined;
  return rpc?.method === 'message/send' && m?.taskId && m.messageId ? { messageId: m.messageId, taskId: m.taskId } : undefined;
}
