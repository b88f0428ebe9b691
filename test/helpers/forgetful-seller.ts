/**
 * An HTTP proxy in front of an MCP seller that makes it forget some media buys in
 * its status reads (`get_media_buys`), the ways a restarted or confused seller does:
 * - `no_row`: the call is passed on with the forgotten ids swapped for ids the
 *   seller never made, so its answer simply lists no row for them;
 * - `not_found`: a call naming only forgotten buys is answered here with the AdCP
 *   error MEDIA_BUY_NOT_FOUND, without reaching the seller.
 * Everything else (other tools, other buys) passes untouched. `remember` makes the
 * seller know a buy again. It counts the status reads naming each buy.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardTo } from './proxy-forward.js';
import { peekJsonRpc, readBody } from './request-body.js';

export type Forgetting = 'no_row' | 'not_found';

export interface ForgetfulSeller {
  /** The proxy's origin; the seller's paths are the same under it. */
  origin: string;
  forget(mediaBuyId: string, how?: Forgetting): void;
  remember(mediaBuyId: string): void;
  /** When each status read naming this buy came, in order. */
  statusReads(mediaBuyId: string): number[];
  /** Resolves once `count` status reads have named this buy (those already seen included). */
  waitForStatusReads(mediaBuyId: string, count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startForgetfulSeller(target: string): Promise<ForgetfulSeller> {
  const forgotten = new Map<string, Forgetting>();
  const reads = new Map<string, number[]>();
  const waiters: Array<() => void> = [];
  const server: Server = createServer(async (req, res) => {
    let body = await readBody(req);
    const rpc = peekJsonRpc(body);
    const args = rpc?.method === 'tools/call' && rpc.params?.name === 'get_media_buys' ? (rpc.params.arguments as { media_buy_ids?: unknown }) : undefined;
    const ids = Array.isArray(args?.media_buy_ids) ? (args!.media_buy_ids as string[]) : [];
    for (const id of ids) reads.set(id, [...(reads.get(id) ?? []), Date.now()]);
    for (const w of waiters.splice(0)) w();
    if (ids.length > 0 && ids.every((id) => forgotten.get(id) === 'not_found')) {
      const error = { code: 'MEDIA_BUY_NOT_FOUND', message: `no media buy ${ids.join(', ')}`, recovery: 'correctable', field: 'media_buy_ids' };
      const result = { errors: [error], adcp_error: error };
      const answer = { jsonrpc: '2.0', id: rpc!.id, result: { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result, isError: true } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      return;
    }
    if (ids.some((id) => forgotten.has(id))) {
      args!.media_buy_ids = ids.map((id) => (forgotten.has(id) ? `forgotten_${id}` : id));
      body = Buffer.from(JSON.stringify(rpc));
    }
    try {
      const answer = await forwardTo(target, req, body);
      res.writeHead(answer.status, answer.headers).end(answer.body);
    } catch {
      res.writeHead(502).end('proxy: seller unreachable');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const statusReads = (id: string) => [...(reads.get(id) ?? [])];
  return {
    origin: `http://127.0.0.1:${port}`,
    forget: (id, how = 'no_row') => void forgotten.set(id, how),
    remember: (id) => void forgotten.delete(id),
    statusReads,
    async waitForStatusReads(id, count) {
      while (statusReads(id).length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
