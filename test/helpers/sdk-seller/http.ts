/**
 * The seller's HTTP front on loopback: MCP (Streamable HTTP, stateless, JSON
 * replies) at /mcp, and the webhook-signing JWKS at /.well-known/jwks.json.
 *
 * Every MCP POST is read whole, its `tools/call` requests noted, and the reply
 * the AdCP server writes captured on its way out, so the request log (see
 * request-log.ts) records each call with the seller's own verdict on it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AdcpServer } from '@adcp/sdk/server';
import { toolCallsOf, verdictOf, type RequestLog } from './request-log.js';
import { nameExtraProperties } from './schema.js';

const MAX_BODY_BYTES = 1_000_000;
/** Idle AdCP servers kept for reuse: building one registers every tool and compiles nothing twice. */
const MAX_IDLE = 8;

export interface HttpFront {
  server: Server;
  origin: string;
  close(): Promise<void>;
}

/** Replies to lose: the call is handled, then its connection is cut instead of answered (a reply lost on the way back). */
export class ReplyFaults {
  private readonly armed = new Map<string, number>();

  /** The next `times` calls of `tool` are done but never answered. */
  dropReplies(tool: string, times = 1): void {
    this.armed.set(tool, (this.armed.get(tool) ?? 0) + times);
  }

  take(tools: Iterable<string>): boolean {
    for (const tool of tools) {
      const left = this.armed.get(tool) ?? 0;
      if (left > 0) {
        this.armed.set(tool, left - 1);
        return true;
      }
    }
    return false;
  }
}

export async function startHttpFront(opts: { build: () => AdcpServer; log: RequestLog; jwks: () => unknown; faults: ReplyFaults; port?: number }): Promise<HttpFront> {
  const idle: AdcpServer[] = [];

  const mcp = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let parsed: unknown;
    if (req.method === 'POST') {
      const raw = await readBody(req);
      if (raw === undefined) return sendJson(res, 413, { error: 'body too large' });
      try {
        parsed = JSON.parse(raw);
      } catch {
        return sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      }
    }
    const calls = toolCallsOf(parsed);
    const drop = opts.faults.take([...calls.values()].map((c) => c.tool));
    if (calls.size > 0) captureReplies(res, (reply) => record(opts.log, calls, reply), drop);
    const adcp = idle.pop() ?? opts.build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      // close() detaches the transport only; the tools stay registered for the next request.
      adcp.close().then(
        () => void (idle.length < MAX_IDLE && idle.push(adcp)),
        () => undefined,
      );
    });
    await adcp.connect(transport);
    await transport.handleRequest(req, res, parsed);
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const handled =
      path === '/mcp'
        ? mcp(req, res)
        : path === '/.well-known/jwks.json' && req.method === 'GET'
          ? Promise.resolve(sendJson(res, 200, opts.jwks()))
          : Promise.resolve(sendJson(res, 404, { error: 'not found' }));
    handled.catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Collects what is written to `res` and hands it, parsed, to `done` once the reply is complete; with `drop`, cuts the connection instead of sending it. */
function captureReplies(res: ServerResponse, done: (reply: unknown) => void, drop: boolean): void {
  const chunks: Buffer[] = [];
  const keep = (chunk: unknown, encoding?: unknown): void => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((...args: unknown[]) => {
    keep(args[0], args[1]);
    return drop ? true : write(...args);
  }) as typeof res.write;
  res.end = ((...args: unknown[]) => {
    keep(args[0], args[1]);
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      done(text ? JSON.parse(text) : undefined);
    } catch {
      done(undefined);
    }
    if (drop) {
      res.socket?.destroy();
      return res;
    }
    return end(...args);
  }) as typeof res.end;
}

function record(log: RequestLog, calls: ReturnType<typeof toolCallsOf>, reply: unknown): void {
  const replies = new Map<string, unknown>();
  for (const r of Array.isArray(reply) ? reply : [reply]) {
    if (typeof r === 'object' && r !== null && 'id' in r) replies.set(JSON.stringify((r as { id: unknown }).id), r);
  }
  for (const [id, call] of calls) {
    const answer = replies.get(id);
    const verdict = answer === undefined ? { valid: false, issues: [], errorCode: 'NO_REPLY', errorMessage: 'the seller sent no reply to this call' } : verdictOf(answer);
    const schemaTool = call.tool.replace('/', '_');
    log.add({ at: Date.now(), tool: call.tool, args: call.args, ...verdict, issues: nameExtraProperties(schemaTool, call.args, verdict.issues) });
  }
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
