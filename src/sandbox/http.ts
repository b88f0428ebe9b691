/**
 * HTTP plumbing shared by the sandbox agents (seller, governance): bounded
 * body reading, JSON replies, and stateless MCP over a pool of AdcpServers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AdcpServer } from '@adcp/sdk/server';

export const MAX_BODY_BYTES = 1_000_000;
const MAX_IDLE_SERVERS = 32;

/** Bodies read before the handler (a signature check, signed-requests.ts), kept for it: a stream is read once. */
const kept = new WeakMap<IncomingMessage, string>();

export function keepBody(req: IncomingMessage, text: string): void {
  kept.set(req, text);
}

/** The body as text, or undefined when it is larger than MAX_BODY_BYTES. */
export async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const already = kept.get(req);
  if (already !== undefined) return already;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Stateless MCP: one transport per request, on an AdcpServer that serves one
 * request at a time. All state lives outside the servers, so they are
 * interchangeable; idle ones are pooled because building one (tool
 * registration, a fresh Ajv) was a fifth of the CPU per poll.
 */
export class McpEndpoint {
  private readonly idle: AdcpServer[] = [];

  constructor(private readonly build: () => AdcpServer) {}

  /** `parsed` is the JSON-RPC body already read from `req` (undefined for GET/DELETE). */
  async handle(req: IncomingMessage, res: ServerResponse, parsed: unknown): Promise<void> {
    const adcp = this.idle.pop() ?? this.build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      // close() detaches the transport; the server's tools stay registered.
      adcp.close().then(
        () => {
          if (this.idle.length < MAX_IDLE_SERVERS) this.idle.push(adcp);
        },
        () => undefined,
      );
    });
    await adcp.connect(transport);
    await transport.handleRequest(req, res, parsed);
  }
}

/** Reads and parses a POST body: the value and its text, or undefined when the HTTP answer was already sent. */
export async function readJsonRpc(req: IncomingMessage, res: ServerResponse): Promise<{ parsed: unknown; raw?: string } | undefined> {
  if (req.method !== 'POST') return { parsed: undefined };
  const raw = await readBody(req);
  if (raw === undefined) {
    sendJson(res, 413, { error: 'body too large' });
    return undefined;
  }
  try {
    return { parsed: JSON.parse(raw) as unknown, raw };
  } catch {
    sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    return undefined;
  }
}
