/**
 * The lean poll path (src/adcp/mcp-lean-poll.ts) against the SDK client path, over real
 * HTTP: every reply of mcp-response-extraction.json served as a get_task_status result,
 * as JSON and as an SSE stream, on a stateful session, gives the same TaskReply (or the
 * same error) both ways; HTTP and JSON-RPC failures too. The server records which path
 * each call came from, so the lean path is shown to carry the successes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdcpClient } from '../../src/adcp/client.js';
import { AdcpTransportError, type AdcpClient } from '../../src/adcp/types.js';
import { loadVectors } from '../unit/adcp/vectors.js';
import { whenBodyRead } from '../helpers/request-body.js';

interface McpVector {
  id: string;
  response: Record<string, unknown>;
}
const vectors = loadVectors<McpVector>('mcp-response-extraction.json');

type Fault = 'none' | 'http429' | 'http500' | 'rpc-error' | 'garbage' | 'wrong-id';
let mode: 'json' | 'sse' = 'json';
let fault: Fault = 'none';
let toolResult: unknown = {};
const callIds: unknown[] = [];
const SESSION = 'session-abc';

function rpcReply(res: import('node:http').ServerResponse, message: unknown): void {
  if (mode === 'sse') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': SESSION });
    res.end(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  } else {
    const body = JSON.stringify(message);
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': SESSION }).end(body);
  }
}

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    whenBodyRead(req, (body) => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const msg = JSON.parse(body);
      if (msg.method !== 'initialize' && req.headers['mcp-session-id'] !== SESSION) return void res.writeHead(400).end('no session');
      if (msg.id === undefined) return void res.writeHead(202).end();
      if (msg.method === 'initialize') {
        return rpcReply(res, { jsonrpc: '2.0', id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 't', version: '1' } } });
      }
      if (msg.method === 'tools/list') {
        return rpcReply(res, { jsonrpc: '2.0', id: msg.id, result: { tools: [{ name: 'get_task_status', inputSchema: { type: 'object' } }] } });
      }
      callIds.push(msg.id);
      if (req.headers['mcp-protocol-version'] === undefined) return void res.writeHead(400).end('no protocol version');
      if (fault === 'http429') return void res.writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' }).end('{"error":"slow down"}');
      if (fault === 'http500') return void res.writeHead(500).end('boom');
      if (fault === 'rpc-error') return rpcReply(res, { jsonrpc: '2.0', id: msg.id, error: { code: -32602, message: 'bad task_id' } });
      if (fault === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{not json');
      if (fault === 'wrong-id' && typeof msg.id === 'string') return rpcReply(res, { jsonrpc: '2.0', id: 'someone-else', result: toolResult });
      return rpcReply(res, { jsonrpc: '2.0', id: msg.id, result: toolResult });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

async function outcome(client: AdcpClient): Promise<unknown> {
  try {
    return { reply: await client.getTask({ url, protocol: 'mcp' }, 'tsk_1', { timeoutMs: 5_000 }) };
  } catch (err) {
    if (!(err instanceof AdcpTransportError)) throw err;
    return { error: { kind: err.kind, httpStatus: err.httpStatus, adcpError: err.adcpError, rpcCode: err.rpcCode } };
  }
}

describe.each(['json', 'sse'] as const)('lean poll path vs SDK client, replies as %s', (replyMode) => {
  const lean = createAdcpClient({ leanPolls: true });
  const sdk = createAdcpClient({ leanPolls: false });
  afterAll(async () => {
    await lean.close();
    await sdk.close();
  });

  it.each(vectors.map((v) => [v.id, v] as const))('%s: the same reply', async (_id, v) => {
    mode = replyMode;
    fault = 'none';
    toolResult = v.response;
    callIds.length = 0;
    const viaLean = await outcome(lean);
    const leanIds = [...callIds];
    const viaSdk = await outcome(sdk);
    expect(viaLean).toEqual(viaSdk);
    // A valid CallToolResult is answered by the lean path alone, in one request.
    expect(leanIds).toHaveLength(1);
    expect(String(leanIds[0])).toMatch(/^lean-/);
  });

  it.each(['http429', 'http500', 'rpc-error', 'garbage', 'wrong-id'] as const)('%s: the same error or reply', async (f) => {
    mode = replyMode;
    fault = f;
    toolResult = { content: [], structuredContent: { task_id: 'tsk_1', status: 'working' } };
    const viaLean = await outcome(lean);
    const viaSdk = await outcome(sdk);
    expect(viaLean).toEqual(viaSdk);
  });

  it('a reply that is no CallToolResult falls back and fails the same way', async () => {
    mode = replyMode;
    fault = 'none';
    toolResult = { content: 'not an array' };
    expect(await outcome(lean)).toEqual(await outcome(sdk));
  });
});
