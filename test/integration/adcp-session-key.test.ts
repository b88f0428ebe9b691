/**
 * An MCP session belongs to one agent URL and one token (src/adcp/mcp-transport.ts keeps
 * the session key per URL so a poll hashes no token): over real HTTP, a new token on the
 * same URL opens a session of its own and its polls go on that session; the first token
 * goes on using its own session; polls on a session already open reuse it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAdcpClient } from '../../src/adcp/client.js';
import type { AdcpClient, AgentEndpoint } from '../../src/adcp/types.js';
import { whenBodyRead } from '../helpers/request-body.js';

/** Per session id: the token it was opened with. */
const opened = new Map<string, string | undefined>();
/** Every get_task_status: the session it came on and the token it carried. */
const polls: Array<{ session: string | undefined; token: string | undefined }> = [];

let server: Server;
let url: string;
let client: AdcpClient;
beforeAll(async () => {
  server = createServer((req, res) => {
    whenBodyRead(req, (body) => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const msg = JSON.parse(body);
      const token = req.headers['x-adcp-auth'] as string | undefined;
      let session = req.headers['mcp-session-id'] as string | undefined;
      if (msg.method === 'initialize') {
        session = `s${opened.size + 1}`;
        opened.set(session, token);
      } else if (!session || !opened.has(session)) {
        return void res.writeHead(404).end();
      }
      if (msg.id === undefined) return void res.writeHead(202).end();
      let result: unknown;
      if (msg.method === 'initialize') result = { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 't', version: '1' } };
      else if (msg.method === 'tools/list') result = { tools: [{ name: 'get_task_status', inputSchema: { type: 'object' } }] };
      else {
        polls.push({ session, token });
        const status = { task_id: msg.params.arguments.task_id, status: 'submitted' };
        result = { content: [{ type: 'text', text: JSON.stringify(status) }], structuredContent: status };
      }
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': session }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  client = createAdcpClient({ pollTimeoutMs: 5_000 });
});
afterAll(async () => {
  await client.close();
  await new Promise((r) => server.close(r));
});

it('a new token on the same URL polls on a session of its own; each token keeps its session', async () => {
  const agent = (token: string): AgentEndpoint => ({ url, protocol: 'mcp', authToken: token });
  const first = 'token-first-0123456789';
  const second = 'token-second-0123456789';
  await client.getTask(agent(first), 'task_1');
  await client.getTask(agent(first), 'task_2');
  await client.getTask(agent(second), 'task_3');
  await client.getTask(agent(first), 'task_4');
  await client.getTask(agent(second), 'task_5');

  expect([...opened.values()]).toEqual([first, second]);
  const sessionOf = (token: string) => [...opened].find(([, t]) => t === token)![0];
  expect(polls).toEqual([
    { session: sessionOf(first), token: first },
    { session: sessionOf(first), token: first },
    { session: sessionOf(second), token: second },
    { session: sessionOf(first), token: first },
    { session: sessionOf(second), token: second },
  ]);
});
