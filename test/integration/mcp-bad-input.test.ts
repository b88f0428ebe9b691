/**
 * Bad input to /mcp: an unknown tool, arguments that fail the schema, an oversized
 * argument or body, a missing or wrong key, requests outside a session. Each gets a
 * clear MCP error or `isError` result; the server carries on, and nothing is stored.
 */
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { connectMcp, errorOf, textOf, type McpTestClient } from '../helpers/mcp-client.js';
import { startMcpStack, type McpStack } from '../helpers/mcp-stack.js';

describe('MCP bad input', () => {
  let stack: McpStack;
  let operator: McpTestClient;
  let before: Record<string, number>;

  const stored = async () => ({
    operations: await stack.count('operations'),
    events: await stack.count('operation_events'),
    keys: await stack.count('api_idempotency'),
    buys: stack.seller.stats().mediaBuysCreated,
  });

  beforeAll(async () => {
    stack = await startMcpStack();
    operator = await stack.connect('operator');
    before = await stored();
  });
  afterAll(async () => {
    // Whatever was sent, nothing was stored, and the session still works.
    expect(await stored()).toEqual(before);
    expect((await operator.call('list_agents')).isError).toBeFalsy();
    await stack?.close();
  });

  it('an unknown tool is an MCP error naming it', async () => {
    await expect(operator.client.callTool({ name: 'buy_everything', arguments: {} })).rejects.toThrow(/unknown tool 'buy_everything'/);
    const metrics = await (await fetch(`${stack.orch.url}/metrics`)).text();
    expect(metrics).toMatch(/adcp_orch_mcp_tool_calls_total\{tool="unknown",outcome="unknown_tool"\} 1/);
  });

  it('arguments that fail the schema are an isError result saying which and why', async () => {
    const missing = await operator.call('create_media_buy', { request: mediaBuyRequest('sandbox_instant') });
    expect(missing.isError).toBe(true);
    expect(errorOf(missing)?.code).toBe('invalid_request');
    expect(textOf(missing)).toContain('agent_id');
    const wrongType = await operator.call('create_media_buy', { agent_id: stack.agentId, request: 'buy me ads' });
    expect(errorOf(wrongType)?.code).toBe('invalid_request');
    expect(textOf(wrongType)).toContain('request');
    const unknownField = await operator.call('get_operation', { id: 'x', surprise: true });
    expect(errorOf(unknownField)?.code).toBe('invalid_request');
    const badKey = await operator.call('create_media_buy', { agent_id: stack.agentId, request: mediaBuyRequest('sandbox_instant'), idempotency_key: 'has spaces in it' });
    expect(errorOf(badKey)?.code).toBe('invalid_request');
    expect(textOf(badKey)).toContain('idempotency_key');
    const tooLong = await operator.call('wait_for_operation', { id: 'x', timeout_s: 600 });
    expect(textOf(tooLong)).toContain('timeout_s');
  });

  it('an oversized argument is refused by its schema, an oversized body by the transport, as a JSON-RPC error', async () => {
    const longMessage = await (await stack.connect('approver')).call('answer_operation', { id: 'x', decision: 'reject', message: 'x'.repeat(5000) });
    expect(errorOf(longMessage)?.code).toBe('invalid_request');
    expect(textOf(longMessage)).toContain('message');
    const huge = { agent_id: stack.agentId, request: mediaBuyRequest('sandbox_instant', { notes: 'x'.repeat(1_200_000) }) };
    await expect(operator.client.callTool({ name: 'create_media_buy', arguments: huge }, CallToolResultSchema)).rejects.toThrow(/larger than 1048576 bytes/);
  });

  it('a task asked of a tool that runs no tasks is an MCP error', async () => {
    await expect(
      operator.client.request({ method: 'tools/call', params: { name: 'list_agents', arguments: {}, task: { ttl: 1000 } } }, CallToolResultSchema),
    ).rejects.toThrow(/does not run as a task/);
  });

  it('a missing or wrong key opens no session', async () => {
    await expect(connectMcp(stack.orch.url, undefined)).rejects.toThrow(/401|unauthorized/i);
    await expect(connectMcp(stack.orch.url, 'not-a-key-at-all')).rejects.toThrow(/401|unauthorized/i);
    const res = await fetch(`${stack.orch.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001, message: expect.stringContaining('Authorization: Bearer') } });
    expect(stack.orch.app.mcp.sessions.size).toBe(2); // the operator's and the approver's
  });

  it('outside a session: not JSON, no initialize, an unknown session id', async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${stack.orch.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.keys.operator}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body,
      });
    const notJson = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).error.code).toBe(-32700);
    const noInit = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    expect(noInit.status).toBe(400);
    expect((await noInit.json()).error.message).toContain('send initialize first');
    const unknown = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { 'mcp-session-id': 'not-a-session' });
    expect(unknown.status).toBe(404);
    const text = await post('plain text', { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    // An initialize the transport refuses (it must accept an event stream too) leaves no session behind.
    const sessions = stack.orch.app.mcp.sessions.size;
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const notAcceptable = await post(JSON.stringify(initialize), { accept: 'application/json' });
    expect(notAcceptable.status).toBe(406);
    expect(stack.orch.app.mcp.sessions.size).toBe(sessions);
  });
});
