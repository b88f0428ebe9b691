/**
 * The MCP server while the database is away: a tool call that meets it is an `isError`
 * result `database_unavailable` (counted, never `internal_error`), and a request whose key
 * cannot even be checked is HTTP 503 with Retry-After, a JSON-RPC error, never a crash.
 */
import Fastify from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseOutage, RETRY_AFTER_S } from '../../../src/engine/database-outage.js';
import { Metrics } from '../../../src/engine/metrics.js';
import { callTool } from '../../../src/mcp/call-tool.js';
import type { McpServices } from '../../../src/mcp/context.js';
import { ERROR_META_KEY } from '../../../src/mcp/results.js';
import { mcpRoutes } from '../../../src/mcp/routes.js';
import type { McpSessions } from '../../../src/mcp/sessions.js';
import { DatabaseUnavailableError } from '../../../src/store/db-errors.js';
import type { Store } from '../../../src/store/index.js';

const away = () => {
  throw new DatabaseUnavailableError('connection refused');
};

describe('MCP when the database is away', () => {
  const counted: string[] = [];
  const outage = new DatabaseOutage(pino({ level: 'silent' }), { databaseUnavailable: (where) => void counted.push(where) }, { now: Date.now, random: Math.random });
  const store = { agents: { list: away }, tenants: { findApiKey: away } } as unknown as Store;
  const metrics = new Metrics(undefined, { defaultMetrics: false });
  const app = Fastify();

  beforeAll(async () => {
    await app.register(mcpRoutes({ store, sessions: {} as McpSessions, outage }));
    await app.ready();
  });
  afterAll(() => app.close());

  it('a tool call is an isError result database_unavailable, counted under mcp', async () => {
    counted.length = 0;
    const services = { store, metrics, outage, log: pino({ level: 'silent' }) } as unknown as McpServices;
    const auth = { tenantId: 't', tenantName: 't', keyId: 'k', keyName: 'bot', role: 'viewer' as const };
    const result = await callTool({ method: 'tools/call', params: { name: 'list_agents', arguments: {} } }, { signal: new AbortController().signal } as never, { auth, services });
    expect(result).toMatchObject({ isError: true, _meta: { [ERROR_META_KEY]: { code: 'database_unavailable' } } });
    expect(JSON.stringify(result)).not.toMatch(/refused/);
    expect(counted).toEqual(['mcp']);
    expect(await metrics.registry.getSingleMetricAsString('adcp_orch_mcp_tool_calls_total')).toMatch(/tool="list_agents",outcome="database_unavailable"} 1/);
  });

  it('a request whose key cannot be checked is 503 with Retry-After and a JSON-RPC error', async () => {
    counted.length = 0;
    const res = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { authorization: 'Bearer some-key', 'content-type': 'application/json' },
      payload: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
    });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe(String(RETRY_AFTER_S));
    expect(res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(/^database_unavailable/) } });
    expect(counted).toEqual(['mcp']);
  });
});
