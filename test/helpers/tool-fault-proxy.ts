/**
 * An HTTP proxy in front of an MCP agent that can spoil the calls of one tool
 * (`tools/call` with that name), to make the agent unreachable for just that:
 * - `fail`: answer 503 without forwarding (the agent never sees it);
 * - `hold`: never answer and never forward (a hung agent; the socket is closed when the proxy is);
 * - `pass`: forward untouched (the default, and for every other request);
 * - `{ adcpError }`: answer, without forwarding, an MCP tool result that failed with this
 *   AdCP error (`isError`, `structuredContent.adcp_error`): a seller saying what we choose.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardTo } from './proxy-forward.js';
import { peekJsonRpc, readBody } from './request-body.js';

export type ToolFault = 'pass' | 'fail' | 'hold' | { adcpError: Record<string, unknown> };

export interface ToolFaultProxy {
  /** The proxy's origin; the agent's paths are the same under it. */
  origin: string;
  /** Set what happens to calls of `tool` from now on. */
  set(tool: string, fault: ToolFault): void;
  /** Calls of each tool seen, with what was done to them. */
  seen: Array<{ tool: string; fault: ToolFault; at: number }>;
  /** Resolves when a call of `tool` has been met with `fault` (including ones already seen). */
  waitFor(tool: string, fault: ToolFault, count?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startToolFaultProxy(target: string): Promise<ToolFaultProxy> {
  const faults = new Map<string, ToolFault>();
  const seen: ToolFaultProxy['seen'] = [];
  const waiters: Array<() => void> = [];
  const held = new Set<ServerResponse>();
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const rpc = peekJsonRpc(body);
    const tool = toolOf(body);
    const fault = tool ? (faults.get(tool) ?? 'pass') : 'pass';
    if (tool) {
      seen.push({ tool, fault, at: Date.now() });
      for (const w of waiters.splice(0)) w();
    }
    if (fault === 'fail') {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('proxy: unavailable');
      return;
    }
    if (fault === 'hold') {
      held.add(res);
      return;
    }
    if (typeof fault === 'object') {
      const structuredContent = { adcp_error: fault.adcpError };
      const result = { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent, isError: true };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: rpc?.id ?? null, result }));
      return;
    }
    try {
      const answer = await forwardTo(target, req, body);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    } catch {
      res.writeHead(502).end('proxy: agent unreachable');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const count = (tool: string, fault: ToolFault) => seen.filter((s) => s.tool === tool && s.fault === fault).length;
  return {
    origin: `http://127.0.0.1:${port}`,
    set: (tool, fault) => void faults.set(tool, fault),
    seen,
    async waitFor(tool, fault, n = 1) {
      while (count(tool, fault) < n) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function toolOf(body: Buffer): string | undefined {
  const rpc = peekJsonRpc(body);
  return rpc?.method === 'tools/call' && typeof rpc.params?.name === 'string' ? rpc.params.name : undefined;
}
