/**
 * A lean MCP `tools/call` for the hot poll (`get_task_status` / `tasks/get`): one
 * POST on a kept-alive node:http connection, on the session the SDK client opened
 * (same session id, protocol version and auth headers), reply read as JSON or as
 * the SSE stream a stateful server answers a POST with.
 *
 * Why: profiled, Node's fetch (undici plus web streams) under the SDK client cost
 * more than the rest of a poll; node:http answers the same local seller 4-8× faster.
 *
 * It handles only the plain success: a 200 whose JSON-RPC response has a `result`
 * that is a CallToolResult (the SDK's own schema). Anything else yields undefined and
 * the caller sends the poll again through the SDK client, which then produces exactly
 * the errors it always did (a poll is a read: sending it twice changes nothing at the
 * seller). Our own deadline is the exception: an aborted poll is not sent again; so is
 * a reply past the cap on reply size (ReplyTooLargeError: reading stops there and the
 * connection is closed, as it is when the deadline aborts the request).
 */
import http from 'node:http';
import https from 'node:https';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolResult } from './extract-mcp.js';
import { ReplyTooLargeError } from './reply-limit.js';

export interface LeanSession {
  sessionId?: string;
  protocolVersion?: string;
  headers: Record<string, string>;
}

export class LeanMcpPoller {
  private readonly httpAgent = new http.Agent({ keepAlive: true });
  private readonly httpsAgent = new https.Agent({ keepAlive: true });
  private nextId = 0;

  /** The tool's result, or undefined when the reply is anything but a plain success (see above). */
  async call(url: URL, session: LeanSession, name: string, args: Record<string, unknown>, signal: AbortSignal, maxReplyBytes: number, onBytes?: (n: number) => void): Promise<McpToolResult | undefined> {
    // String ids: never the same as the SDK client's numeric ids on the same session.
    const id = `lean-${++this.nextId}`;
    const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': String(Buffer.byteLength(body)),
      ...session.headers,
    };
    if (session.sessionId) headers['mcp-session-id'] = session.sessionId;
    if (session.protocolVersion) headers['mcp-protocol-version'] = session.protocolVersion;
    const reply = await this.post(url, headers, body, signal, maxReplyBytes);
    onBytes?.(reply.bytes);
    if (reply.status !== 200) return undefined;
    const message = responseFor(reply.contentType, reply.text, id);
    if (!message || !('result' in message)) return undefined;
    const parsed = CallToolResultSchema.safeParse(message.result);
    return parsed.success ? (parsed.data as McpToolResult) : undefined;
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** The abort of `signal` destroys the request, and with it the connection. */
  private post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal, maxReplyBytes: number): Promise<{ status: number; contentType: string; text: string; bytes: number }> {
    const secure = url.protocol === 'https:';
    const request = secure ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = request(url, { method: 'POST', headers, agent: secure ? this.httpsAgent : this.httpAgent, signal }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > maxReplyBytes) {
            const err = new ReplyTooLargeError(maxReplyBytes);
            req.destroy(err);
            reject(err);
            return;
          }
          chunks.push(c);
        });
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8'), bytes: size }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }
}

type RpcMessage = { id?: unknown; result?: unknown; error?: unknown };

/** The JSON-RPC response with our id, from a JSON body (one message or a batch) or an SSE stream. */
export function responseFor(contentType: string, text: string, id: string): RpcMessage | undefined {
  const candidates: unknown[] = [];
  try {
    if (contentType.includes('application/json')) {
      candidates.push(JSON.parse(text));
    } else if (contentType.includes('text/event-stream')) {
      // Events are separated by a blank line; an event's data is its `data:` lines joined by newlines.
      for (const event of text.split(/\r?\n\r?\n/)) {
        const data = event
          .split(/\r?\n/)
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
          .join('\n');
        if (data) candidates.push(JSON.parse(data));
      }
    }
  } catch {
    return undefined;
  }
  for (const c of candidates.flat()) {
    if (typeof c === 'object' && c !== null && (c as RpcMessage).id === id) return c as RpcMessage;
  }
  return undefined;
}
