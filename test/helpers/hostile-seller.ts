/**
 * A hostile seller on loopback, speaking just enough MCP (stateless, JSON replies)
 * and A2A (agent card, `message/send`) to be registered and called, whose answer to
 * a chosen tool is one of:
 * - `drip`: the status line and headers, then one byte every `dripEveryMs`, never
 *   ending (a seller that holds a connection open for as long as it likes);
 * - `{ bytes }`: a well-formed reply of about that many bytes (a `get_products`
 *   answer of many products), built when set and sent in 64 KiB writes, each in a
 *   turn of the event loop of its own (as a network would deliver it, and so that
 *   this server, sharing the test's process, does not block it);
 * - `ok`: a small well-formed reply;
 * - `{ body }`: that reply (a declaration of capabilities, say).
 * The MCP handshake (`initialize`) and the A2A agent card can be set to `drip` too.
 *
 * It keeps when each socket and each drip was open, reports each drip whose socket
 * the buyer closed, and each large reply the buyer hung up on before its end.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readBodyText, type JsonRpcRequest } from './request-body.js';

export type HostileReply = 'drip' | 'ok' | { bytes: number } | { body: Record<string, unknown> };

export interface Span {
  openedAt: number;
  closedAt?: number;
}

/**
 * The most spans open at once, each ending where `endOf` says (by default when it was
 * seen to close, or now while it is open).
 */
export function mostAtOnce(spans: Span[], endOf: (span: Span) => number = (s) => s.closedAt ?? Date.now()): number {
  const edges: Array<[number, number]> = [];
  for (const span of spans) {
    const end = endOf(span);
    if (end <= span.openedAt) continue;
    edges.push([span.openedAt, 1], [end, -1]);
  }
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, delta] of edges) most = Math.max(most, (open += delta));
  return most;
}

export interface HostileSeller {
  /** The MCP endpoint. */
  mcpUrl: string;
  /** The A2A base URL (its card at /.well-known/agent-card.json). */
  a2aUrl: string;
  /** What calls of `tool` get from now on (default `ok`); `initialize` and `agent-card` name the handshakes. */
  set(tool: string, reply: HostileReply): void;
  /** Sockets open now. */
  openSockets(): number;
  /** Drips going on now (their sockets still open). */
  dripping(): number;
  /** When each socket was open (closedAt unset while it is). */
  socketSpans: Span[];
  /** When each drip went on (closedAt unset while it does). */
  dripSpans: Span[];
  /** Each drip that ended, with how long its socket stayed open. */
  closedDrips: Array<{ tool: string; openMs: number }>;
  /** Resolves once `n` drips have ended (closed by the buyer). */
  waitForClosedDrips(n: number): Promise<void>;
  /** Large replies whose connection the buyer closed before the reply's end. */
  cutReplies: Array<{ tool: string; sentBytes: number; totalBytes: number }>;
  /** Tool calls received, in order, with their arguments. */
  calls: Array<{ tool: string; args: Record<string, unknown> }>;
  close(): Promise<void>;
}

const CHUNK = 64 * 1024;

/** The tools (and A2A skills) it lists by default: a 3.0 seller's, its task tools included. */
const LISTED_TOOLS = ['get_adcp_capabilities', 'get_products', 'create_media_buy', 'tasks/get', 'tasks/list'];

export async function startHostileSeller(opts: { dripEveryMs?: number; tools?: string[] } = {}): Promise<HostileSeller> {
  const dripEveryMs = opts.dripEveryMs ?? 100;
  // It answers any tool it is called with; these are the ones it says it has (a buyer may go by them).
  const listed = opts.tools ?? LISTED_TOOLS;
  const replies = new Map<string, HostileReply>();
  const payloads = new Map<number, Buffer>();
  const sockets = new Set<Socket>();
  const socketSpans: Span[] = [];
  const dripSpans: Span[] = [];
  let dripping = 0;
  const closedDrips: HostileSeller['closedDrips'] = [];
  const cutReplies: HostileSeller['cutReplies'] = [];
  const calls: HostileSeller['calls'] = [];
  const waiters: Array<() => void> = [];
  let origin = '';

  const products = (bytes: number): Buffer => {
    let text = payloads.get(bytes);
    if (!text) {
      const list: unknown[] = [];
      for (let i = 0, size = 0; size < bytes; i++) {
        const p = product(i);
        size += JSON.stringify(p).length + 1;
        list.push(p);
      }
      text = Buffer.from(JSON.stringify({ products: list }));
      payloads.set(bytes, text);
    }
    return text;
  };

  const drip = (tool: string, req: IncomingMessage, res: ServerResponse) => {
    const started = Date.now();
    const span: Span = { openedAt: started };
    dripSpans.push(span);
    dripping++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{');
    const timer = setInterval(() => res.write(' '), dripEveryMs);
    req.socket.once('close', () => {
      clearInterval(timer);
      span.closedAt = Date.now();
      dripping--;
      closedDrips.push({ tool, openMs: Date.now() - started });
      for (const w of waiters.splice(0)) w();
    });
  };

  /** The reply: the payload inside `around` (the JSON-RPC envelope before and after it). */
  const answer = async (tool: string, res: ServerResponse, req: IncomingMessage, around: [string, string], payload?: Buffer) => {
    const reply = replies.get(tool) ?? 'ok';
    if (reply === 'drip') return drip(tool, req, res);
    const data =
      payload ?? (reply === 'ok' ? Buffer.from(JSON.stringify({ products: [product(0)] })) : 'body' in reply ? Buffer.from(JSON.stringify(reply.body)) : products(reply.bytes));
    const body = Buffer.concat([Buffer.from(around[0]), data, Buffer.from(around[1])]);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    let sent = 0;
    for (; sent < body.length && !res.destroyed; sent += CHUNK) {
      if (!res.write(body.subarray(sent, sent + CHUNK))) await drained(res);
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (res.destroyed) cutReplies.push({ tool, sentBytes: Math.min(sent, body.length), totalBytes: body.length });
    else res.end();
  };

  const server: Server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', origin).pathname;
    if (req.method === 'GET' && path.endsWith('/agent-card.json')) {
      const card = { name: 'hostile', url: `${origin}/a2a`, version: '1', protocolVersion: '0.3.0', skills: listed.map((id) => ({ id, name: id })) };
      return answer('agent-card', res, req, ['', ''], Buffer.from(JSON.stringify(card)));
    }
    if (req.method !== 'POST') return json(res, 405, { error: 'method not allowed' });
    const rpc = JSON.parse(await readBodyText(req)) as JsonRpcRequest;
    const id = JSON.stringify(rpc.id);
    if (path === '/a2a') {
      const data = rpc.params?.message?.parts?.find((p: any) => p?.kind === 'data')?.data ?? {};
      const tool = String(data.skill ?? '');
      calls.push({ tool, args: data.input ?? {} });
      const task = `{"jsonrpc":"2.0","id":${id},"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"data","data":`;
      return answer(tool, res, req, [task, '}]}]}}']);
    }
    // MCP, stateless: no session id, JSON replies.
    if (rpc.id === undefined) return void res.writeHead(202).end();
    if (rpc.method === 'initialize') {
      const hello = { protocolVersion: rpc.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1' } };
      return answer('initialize', res, req, [`{"jsonrpc":"2.0","id":${id},"result":`, '}'], Buffer.from(JSON.stringify(hello)));
    }
    if (rpc.method === 'tools/list') return json(res, 200, { jsonrpc: '2.0', id: rpc.id, result: { tools: listed.map((name) => ({ name, inputSchema: { type: 'object' } })) } });
    const tool = String(rpc.params?.name ?? '');
    calls.push({ tool, args: rpc.params?.arguments ?? {} });
    return answer(tool, res, req, [`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"products"}],"structuredContent":`, '}}']);
  });
  server.on('connection', (socket: Socket) => {
    const span: Span = { openedAt: Date.now() };
    socketSpans.push(span);
    sockets.add(socket);
    socket.once('close', () => {
      span.closedAt = Date.now();
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    mcpUrl: `${origin}/mcp`,
    a2aUrl: `${origin}/a2a`,
    set: (tool, reply) => {
      if (typeof reply === 'object' && 'bytes' in reply) products(reply.bytes);
      replies.set(tool, reply);
    },
    openSockets: () => sockets.size,
    dripping: () => dripping,
    socketSpans,
    dripSpans,
    closedDrips,
    async waitForClosedDrips(n) {
      while (closedDrips.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    cutReplies,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A product shaped like a real catalogue entry (about 700 bytes). */
function product(i: number) {
  return {
    product_id: `prod_${i}`,
    name: `Homepage takeover, slot ${i}`,
    description: 'Premium display inventory on the publisher homepage, above the fold, all devices, brand-safe content only.',
    publisher_properties: [{ publisher_domain: 'news.example', selection_type: 'all' }],
    format_ids: [{ agent_url: 'https://creative.example/mcp', id: 'display_300x250' }],
    delivery_type: 'guaranteed',
    pricing_options: [{ pricing_option_id: 'cpm_usd_fixed', pricing_model: 'cpm', currency: 'USD', fixed_price: 10 + (i % 7) }],
    reporting_capabilities: { available_reporting_frequencies: ['daily'], expected_delay_minutes: 240, timezone: 'UTC', supports_webhooks: false, available_metrics: ['impressions', 'spend', 'clicks'] },
  };
}

/** Resolves when the response can take more, or is closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
