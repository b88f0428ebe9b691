/**
 * A minimal, fast local MCP seller for load: plain node:http, stateless JSON-RPC
 * (Streamable HTTP with application/json replies), no SDK. It answers
 * `initialize`, `tools/list` (get_task_status, create_media_buy) and `tools/call`:
 *   - get_task_status → {task_id, status: 'submitted'} (every 10th task id ending
 *     in 0 answers 'completed' with a small result), like a seller still working;
 *   - create_media_buy → completed at once with a media_buy_id;
 *   - get_media_buys → every buy asked for, `active` (a live buy's status read after
 *     its reports, bench/reporting-ingest.ts).
 * It counts calls, records the time of the first get_task_status, and counts polls of
 * a task id it was already polled for (`repeatPolls`: where each task is due once, a
 * repeat is a second worker on the same operation, or a re-poll after a lost lease).
 *
 * Run as its own process: `node --import tsx bench/lib/fast-seller.ts` prints
 * {"url": ...} then, on any stdin line, {"stats": {...}}.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { onStdinMessages, reply } from './common.js';

export interface FastSellerStats {
  calls: number;
  polls: number;
  repeatPolls: number;
  firstPollAt: number | null;
}

export interface FastSeller {
  url: string;
  stats: FastSellerStats;
  close(): Promise<void>;
}

const TOOLS = [
  { name: 'get_task_status', description: 'task status', inputSchema: { type: 'object', properties: { task_id: { type: 'string' } } } },
  { name: 'create_media_buy', description: 'create a media buy', inputSchema: { type: 'object' } },
  { name: 'get_media_buys', description: 'media buy status', inputSchema: { type: 'object', properties: { media_buy_ids: { type: 'array' } } } },
];

function toolResult(payload: Record<string, unknown>) {
  return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload };
}

export async function startFastSeller(port = 0): Promise<FastSeller> {
  const stats: FastSellerStats = { calls: 0, polls: 0, repeatPolls: 0, firstPollAt: null };
  const polledTasks = new Set<string>();
  let n = 0;
  const handle = (msg: any): unknown => {
    switch (msg.method) {
      case 'initialize':
        return { protocolVersion: msg.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bench-fast-seller', version: '1.0.0' } };
      case 'tools/list':
        return { tools: TOOLS };
      case 'ping':
        return {};
      case 'tools/call': {
        stats.calls++;
        const name = msg.params?.name;
        const args = msg.params?.arguments ?? {};
        if (name === 'get_task_status' || name === 'tasks/get') {
          stats.polls++;
          if (stats.firstPollAt === null) stats.firstPollAt = performance.timeOrigin + performance.now();
          const taskId = String(args.task_id ?? '');
          if (polledTasks.has(taskId)) stats.repeatPolls++;
          else polledTasks.add(taskId);
          const done = taskId.endsWith('0');
          return toolResult({
            task_id: taskId,
            task_type: 'create_media_buy',
            status: done ? 'completed' : 'submitted',
            updated_at: new Date().toISOString(),
            // The create's result states the buy's status (3.0): its first status read comes on the tracking interval.
            ...(done ? { result: { media_buy_id: `mb_${taskId}`, status: 'active', packages: [] } } : { message: 'pending review' }),
          });
        }
        if (name === 'create_media_buy') {
          n++;
          return toolResult({ status: 'completed', media_buy_id: `mb_fast_${n}`, packages: [{ package_id: `pkg_${n}` }] });
        }
        if (name === 'get_media_buys') {
          const ids: unknown[] = Array.isArray(args.media_buy_ids) ? args.media_buy_ids : [];
          return toolResult({
            media_buys: ids.map((id) => ({ media_buy_id: String(id), status: 'active', revision: 1, currency: 'USD', valid_actions: ['pause', 'cancel'], packages: [] })),
          });
        }
        return { content: [{ type: 'text', text: `unknown tool ${name}` }], isError: true };
      }
      default:
        return undefined;
    }
  };
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let msg: any;
      try {
        msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      if (msg.id === undefined) {
        // A notification (e.g. notifications/initialized).
        res.writeHead(202).end();
        return;
      }
      const result = handle(msg);
      const body =
        result === undefined
          ? JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'method not found' } })
          : JSON.stringify({ jsonrpc: '2.0', id: msg.id, result });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const { port: actual } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${actual}/mcp`,
    stats,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const seller = await startFastSeller(Number(process.env.FAST_SELLER_PORT ?? 0));
  reply({ url: seller.url, pid: process.pid });
  onStdinMessages((m) => {
    if (m.cmd === 'stats') reply({ stats: seller.stats });
    if (m.cmd === 'stop') void seller.close().then(() => process.exit(0));
  });
  process.stdin.on('end', () => void seller.close().then(() => process.exit(0)));
}
