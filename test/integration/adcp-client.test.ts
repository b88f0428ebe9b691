/**
 * createAdcpClient against throwaway agents over real HTTP on 127.0.0.1.
 *
 * The agents are the SDK's own server (createAdcpServer + serve for MCP,
 * createA2AAdapter for A2A) with custom tools that return raw replies the SDK's
 * buyer-side TaskExecutor would remap (`rejected`, `auth-required`, ...). The
 * client must report them exactly as sent, send params untouched, and turn
 * rate limits and deadlines into AdcpTransportError.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createA2AAdapter, createAdcpServer, serve } from '@adcp/sdk/server/legacy/v5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAdcpClient } from '../../src/adcp/client.js';
import { AdcpTransportError, type AdcpClient, type AgentEndpoint } from '../../src/adcp/types.js';

const TOKEN = 'test-token-abcdefghijklmnopqrstuvwxyz';

/**
 * createA2AAdapter mounts on an Express app. Express is installed (the MCP SDK
 * depends on it) but ships no types and @types/express is not ours to add, so
 * it is loaded through a non-literal specifier and typed with the little we use.
 */
type Handler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
interface ExpressApp {
  use(handler: Handler): void;
  listen(port: number, host: string): Server;
}
type ExpressFactory = (() => ExpressApp) & { json(): Handler };
const express = ((await import('express' as string)) as { default: ExpressFactory }).default;

type ToolResult = { content: { type: 'text'; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
const reply = (structuredContent: Record<string, unknown>, isError = false): ToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(structuredContent) }],
  structuredContent,
  ...(isError ? { isError } : {}),
});

/** What the last `echo` call received, as the agent saw it. */
let received: { args: Record<string, unknown>; authorization: string | undefined } | undefined;

/** Raw replies by scenario; `echo` returns the arguments the seller received. */
function scenario(args: Record<string, unknown>, authorization: string | undefined): ToolResult {
  if (args.scenario === 'echo') received = { args, authorization };
  switch (args.scenario) {
    case 'rejected':
      return reply({ status: 'rejected', message: 'inventory withdrawn', context: args.context });
    case 'auth-required':
      return reply({ status: 'auth-required', message: 'credentials expired' });
    case 'canceled':
      return reply({ status: 'canceled' });
    case 'submitted':
      return reply({ status: 'submitted', task_id: 'tsk_async_1', message: 'queued for IO signature' });
    case 'media-buy':
      return reply({ status: 'pending_creatives', media_buy_id: 'mb_1', packages: [] });
    case 'rate-limited':
      return reply({ adcp_error: { code: 'RATE_LIMITED', message: 'slow down', retry_after: 2.5, recovery: 'transient' } }, true);
    case 'echo':
    default:
      return reply({ status: 'completed', received: args, authorization: authorization ?? null });
  }
}

const looseArgs = z.object({}).passthrough();

/** The list body the spec spells: {filters: {statuses}, pagination: {max_results 1..100, cursor}}. */
function listBodyIsValid(args: Record<string, unknown>): boolean {
  const { filters, pagination, ...rest } = args as { filters?: { statuses?: unknown }; pagination?: { max_results?: unknown } };
  if (Object.keys(rest).length > 0) return false; // nothing else is sent, not even adcp_major_version
  if (filters !== undefined && !Array.isArray(filters.statuses)) return false;
  const max = pagination?.max_results;
  return max === undefined || (Number.isInteger(max) && (max as number) >= 1 && (max as number) <= 100);
}

/** `legacy`: a 3.0.26 seller, answering `tasks/get` / `tasks/list` instead of the 3.1 tools. */
function buildServer(legacy = false) {
  const server = createAdcpServer({
    name: 'adcp-client-test-seller',
    version: '0.0.1',
    customTools: {
      raw_reply: {
        description: 'Returns a raw reply chosen by `scenario`.',
        inputSchema: looseArgs,
        handler: async (args: Record<string, unknown>, extra: { requestInfo?: { headers?: Record<string, unknown> } }) =>
          scenario(args, extra?.requestInfo?.headers?.authorization as string | undefined),
      },
      slow_reply: {
        description: 'Answers after 2 s.',
        inputSchema: looseArgs,
        handler: async () => {
          await new Promise((r) => setTimeout(r, 2_000));
          return reply({ status: 'completed' });
        },
      },
      [legacy ? 'tasks/get' : 'get_task_status']: {
        description: 'Poll a task.',
        inputSchema: looseArgs,
        handler: async (args: Record<string, unknown>) =>
          args.task_id === 'tsk_missing'
            ? reply({ adcp_error: { code: 'REFERENCE_NOT_FOUND', message: 'no such task' } }, true)
            : reply({
                task_id: args.task_id,
                task_type: 'create_media_buy',
                protocol: 'media-buy',
                status: 'rejected',
                created_at: '2026-08-20T10:00:00Z',
                updated_at: '2026-08-20T11:00:00Z',
                error: { code: 'POLICY_VIOLATION', message: 'creative policy' },
                result: { errors: [{ code: 'POLICY_VIOLATION' }], echo_include_result: args.include_result, legacy },
              }),
      },
      [legacy ? 'tasks/list' : 'list_tasks']: {
        description: 'List tasks.',
        inputSchema: looseArgs,
        handler: async (args: Record<string, unknown>) =>
          !listBodyIsValid(args)
            ? reply({ adcp_error: { code: 'INVALID_REQUEST', message: JSON.stringify(args) } }, true)
            : reply({
                query_summary: { legacy },
                tasks: [
                  { task_id: 'tsk_async_1', task_type: 'create_media_buy', domain: 'media-buy', status: 'auth-required', created_at: 'c', updated_at: 'u' },
                ],
                pagination: { has_more: true, cursor: 'page2' },
              }),
      },
    },
  } as never);
  return server;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => {
    if (server.listening) resolve((server.address() as AddressInfo).port);
    else server.once('listening', () => resolve((server.address() as AddressInfo).port));
  });
}

let mcpServer: Server;
let legacyServer: Server;
let legacyAgent: AgentEndpoint;
let a2aServer: Server;
let client: AdcpClient;
let mcpAgent: AgentEndpoint;
let a2aAgent: AgentEndpoint;

beforeAll(async () => {
  mcpServer = serve(() => buildServer() as never, { port: 0, path: '/mcp' });
  const mcpPort = await listen(mcpServer);
  mcpAgent = { url: `http://127.0.0.1:${mcpPort}/mcp`, protocol: 'mcp', authToken: TOKEN };

  const app = express();
  // The A2A adapter does not show handlers the headers, so the token is checked here.
  app.use((req, res, next) => {
    if (req.headers.authorization === `Bearer ${TOKEN}`) next();
    else res.writeHead(401).end();
  });
  app.use(express.json());
  a2aServer = app.listen(0, '127.0.0.1');
  const a2aPort = await listen(a2aServer);
  const adapter = createA2AAdapter({
    server: buildServer() as never,
    agentCard: { name: 'test seller', description: 'raw replies', url: `http://127.0.0.1:${a2aPort}/a2a`, version: '0.0.1' },
  });
  adapter.mount(app as never);
  a2aAgent = { url: `http://127.0.0.1:${a2aPort}/a2a`, protocol: 'a2a', authToken: TOKEN };

  legacyServer = serve(() => buildServer(true) as never, { port: 0, path: '/mcp' });
  legacyAgent = { url: `http://127.0.0.1:${await listen(legacyServer)}/mcp`, protocol: 'mcp' };

  client = createAdcpClient();
});

afterAll(async () => {
  await client?.close();
  await Promise.all([mcpServer, a2aServer, legacyServer].map((s) => new Promise<void>((r) => (s ? s.close(() => r()) : r()))));
});

const params = (scenarioName: string) => ({
  scenario: scenarioName,
  idempotency_key: '7f3c2a9e-5b1d-4e8f-a2c6-0d9b8e7f6a51',
  context: { orch_op: 'op_1' },
  push_notification_config: { url: 'https://orch.example.net/adcp/hooks/r/abc', operation_id: 'op_1' },
});

describe.each([
  ['mcp', () => mcpAgent],
  ['a2a', () => a2aAgent],
] as const)('callTask over %s', (_protocol, agent) => {
  it.each([['rejected'], ['auth-required'], ['canceled']])('reports %s unmapped', async (status) => {
    const r = await client.callTask(agent(), 'raw_reply', params(status));
    expect(r.status).toBe(status);
  });

  it('reports submitted with the seller task id', async () => {
    const r = await client.callTask(agent(), 'raw_reply', params('submitted'));
    expect(r).toMatchObject({ status: 'submitted', taskId: 'tsk_async_1', message: 'queued for IO signature' });
  });

  it('reads a 3.0 create_media_buy MediaBuyStatus as completed', async () => {
    const r = await client.callTask(agent(), 'raw_reply', params('media-buy'));
    expect(r.status).toBe('completed');
    expect(r.data.media_buy_id).toBe('mb_1');
  });

  it('sends params exactly as given, with the bearer token', async () => {
    const sent = params('echo');
    received = undefined;
    const r = await client.callTask(agent(), 'raw_reply', sent);
    expect(r.status).toBe('completed');
    // Nothing added (no adcp_major_version), nothing changed (same key, same webhook).
    expect(received!.args).toEqual(sent);
    // The MCP server hands handlers the request headers; the A2A adapter does not.
    if (_protocol === 'mcp') expect(received!.authorization).toBe(`Bearer ${TOKEN}`);
    // What the agent echoes back has our token and webhook URL scrubbed out.
    expect(r.data.received).toEqual({ ...sent, push_notification_config: { ...sent.push_notification_config, url: '[redacted]' } });
    if (_protocol === 'mcp') expect(r.data.authorization).toBe('Bearer [redacted]');
  });

  it('returns an AdCP error reply as failed with the error, retry_after rounded up', async () => {
    const r = await client.callTask(agent(), 'raw_reply', params('rate-limited'));
    expect(r.status).toBe('failed');
    expect(r.error).toEqual({ code: 'RATE_LIMITED', message: 'slow down', recovery: 'transient', retryAfterSeconds: 3 });
  });

  it('gives up at timeoutMs with an AdcpTransportError of kind timeout', async () => {
    const err = await client.callTask(agent(), 'slow_reply', {}, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdcpTransportError);
    expect((err as AdcpTransportError).kind).toBe('timeout');
  });

  it('polls with get_task_status (advertised) and returns the task status, result and error', async () => {
    const r = await client.getTask(agent(), 'tsk_async_1');
    expect(r).toMatchObject({
      status: 'rejected',
      taskId: 'tsk_async_1',
      data: { errors: [{ code: 'POLICY_VIOLATION' }], echo_include_result: true },
      error: { code: 'POLICY_VIOLATION', message: 'creative policy', recovery: 'correctable' },
    });
  });

  it('a failed poll throws instead of failing the task', async () => {
    const err = await client.getTask(agent(), 'tsk_missing').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdcpTransportError);
    expect((err as AdcpTransportError).adcpError?.code).toBe('REFERENCE_NOT_FOUND');
  });

  it('lists tasks with list_tasks (advertised)', async () => {
    const page = await client.listTasks(agent(), { statuses: ['submitted', 'auth-required'], maxResults: 500, cursor: 'p1' });
    expect(page).toEqual({
      tasks: [{ taskId: 'tsk_async_1', taskType: 'create_media_buy', status: 'auth-required', createdAt: 'c', updatedAt: 'u' }],
      hasMore: true,
      cursor: 'page2',
    });
  });
});

describe('a 3.0.26 seller without get_task_status / list_tasks', () => {
  it('is polled with tasks/get and include_result', async () => {
    const r = await client.getTask(legacyAgent, 'tsk_async_1');
    expect(r.status).toBe('rejected');
    expect(r.data).toMatchObject({ legacy: true, echo_include_result: true });
  });

  it('is listed with tasks/list, filters and pagination as the spec spells them', async () => {
    const page = await client.listTasks(legacyAgent, { statuses: ['submitted'], maxResults: 20 });
    expect(page.tasks.map((t) => t.status)).toEqual(['auth-required']);
  });
});

describe('transport failures', () => {
  it('a refused connection is a network AdcpTransportError', async () => {
    const probe = createServer().listen(0, '127.0.0.1');
    const port = await listen(probe);
    await new Promise<void>((r) => probe.close(() => r()));
    const err = await client
      .callTask({ url: `http://127.0.0.1:${port}/mcp`, protocol: 'mcp' }, 'raw_reply', {}, { timeoutMs: 5_000 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdcpTransportError);
    expect((err as AdcpTransportError).kind).toBe('network');
  });

  it('an A2A agent refusing us without the token is an http 401', async () => {
    const err = await client.callTask({ ...a2aAgent, url: a2aAgent.url + '/', authToken: undefined }, 'raw_reply', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdcpTransportError);
    expect([(err as AdcpTransportError).kind, (err as AdcpTransportError).httpStatus]).toEqual(['http', 401]);
  });

  it('an HTTP 429 carries RATE_LIMITED and the Retry-After header', async () => {
    const server = createServer((_req, res) => res.writeHead(429, { 'retry-after': '17' }).end('too many')).listen(0, '127.0.0.1');
    const port = await listen(server);
    try {
      const err = await client
        .callTask({ url: `http://127.0.0.1:${port}/mcp`, protocol: 'mcp' }, 'raw_reply', {}, { timeoutMs: 5_000 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AdcpTransportError);
      const t = err as AdcpTransportError;
      expect([t.kind, t.httpStatus, t.adcpError?.code, t.adcpError?.retryAfterSeconds]).toEqual(['http', 429, 'RATE_LIMITED', 17]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
