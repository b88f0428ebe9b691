/**
 * The stdio bridge (`adcp-orchestrator mcp --url`, a child process) driven by the SDK's
 * stdio client, as a desktop MCP client runs it: the key's tools, a held buy answered by
 * a person through the API, the resource update it causes arriving through the bridge
 * (the session's GET stream is pumped too), a missing key refused, and the server's
 * session ended when the client goes away.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationUri } from '../../src/mcp/operation-resource.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { startMcpStack, type McpStack } from '../helpers/mcp-stack.js';
import { runCli } from '../helpers/cli-process.js';
import { eventually } from '../helpers/orchestrator.js';

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));

describe('adcp-orchestrator mcp (stdio bridge)', () => {
  let stack: McpStack;

  beforeAll(async () => {
    stack = await startMcpStack();
  });
  afterAll(async () => stack?.close());

  it('bridges a local client to the server: tools, a buy, and resource updates', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--url', stack.orch.url],
      env: { ...(process.env as Record<string, string>), ADCP_ORCH_API_KEY: stack.keys.operator },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'desktop-app', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(stack.orch.app.mcp.sessions.size).toBe(1);
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain('create_media_buy');
      expect(tools).not.toContain('answer_operation');

      const held = await client.callTool({ name: 'create_media_buy', arguments: { agent_id: stack.agentId, request: mediaBuyRequest('sandbox_instant'), approval: 'required' } });
      const id = (held.structuredContent as { id: string }).id;
      const uri = operationUri(id);
      const updates: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
      await client.subscribeResource({ uri });

      // A person approves in their own way (here the API, with the approver's key).
      const answered = await fetch(`${stack.orch.url}/v1/operations/${id}/input`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.keys.approver}`, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve' }),
      });
      expect(answered.status).toBe(202);
      await eventually(async () => (updates.includes(uri) ? true : undefined));
      const done = await client.callTool({ name: 'wait_for_operation', arguments: { id, timeout_s: 20 } });
      expect((done.structuredContent as { status: string }).status).toBe('completed');
    } finally {
      await client.close();
    }
    // Closing our standard input ends the bridge, and it ends its session on the server.
    await eventually(async () => (stack.orch.app.mcp.sessions.size === 0 ? true : undefined));
  });

  it('without a key it says so on standard error and exits 2, sending nothing', async () => {
    const run = await runCli(['mcp', '--url', stack.orch.url]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('ADCP_ORCH_API_KEY');
    expect(run.stdout).toBe('');
  });
});
