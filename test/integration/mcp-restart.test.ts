/**
 * MCP tasks are durable operations: a buy started as a task by an AI agent is still
 * its task after `serve` is killed (SIGKILL) and started again on the same SQLite file,
 * and tasks/get follows it to completed in a new session. Then the stdio bridge
 * (`adcp-orchestrator mcp --url`), driven by the SDK's stdio client, reaches the same
 * server, and carries on by itself when the server restarts under it.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { openStore } from '../../src/store/index.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { eventually } from '../helpers/orchestrator.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));

describe('MCP across restarts', () => {
  let seller: SandboxSeller;
  let database: TestDatabase;
  let serve: ServeProcess | undefined;
  const keys = { admin: '', model: '' };
  let agentId = '';

  beforeAll(async () => {
    // Long enough for the task to be in flight when the server dies.
    seller = await startSandboxSeller({ submittedDelayMs: 4000 });
    database = tempSqlite();
    const store = await openStore(database.url);
    try {
      const tenant = await store.tenants.ensureTenant('mcp-restart');
      keys.admin = await store.tenants.createApiKey(tenant.id, { name: 'admin', role: 'admin' });
      keys.model = await store.tenants.createApiKey(tenant.id, { name: 'buying-agent', role: 'operator' });
    } finally {
      await store.close();
    }
    serve = await startServeProcess({ databaseUrl: database.url });
    const res = await fetch(`${serve.url}/v1/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'seller', role: 'seller', protocol: 'mcp', url: seller.url }),
    });
    agentId = ((await res.json()) as { id: string }).id;
  });
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await seller?.close();
    await database?.drop();
  });

  it('a task started before a SIGKILL is followed to completed after serve starts again', async () => {
    const agent = await connectMcp(serve!.url, keys.model);
    const created = await agent.client.request(
      { method: 'tools/call', params: { name: 'create_media_buy', arguments: { agent_id: agentId, request: mediaBuyRequest('sandbox_submitted'), webhook: 'none', idempotency_key: 'restart-task' }, task: {} } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    expect((await agent.client.experimental.tasks.getTask(taskId)).status).toBe('working');

    await serve!.stop('SIGKILL');
    await agent.client.close();
    serve = await startServeProcess({ databaseUrl: database.url });

    const again = await connectMcp(serve.url, keys.model);
    try {
      const done = await eventually(async () => {
        const now = await again.client.experimental.tasks.getTask(taskId);
        return now.status === 'completed' ? now : undefined;
      }, 30_000);
      expect(done.taskId).toBe(taskId);
      const result = await again.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      const op = result.structuredContent as { id: string; idempotency_key: string; result: { media_buy_id: string } };
      expect(op.id).toBe(taskId);
      expect(op.result.media_buy_id).toMatch(/^mb_/);
      expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
    } finally {
      await again.close();
    }
  });

  it('the stdio bridge serves a local MCP client, and opens a new session when the server restarts', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--url', serve!.url],
      env: { ...(process.env as Record<string, string>), ADCP_ORCH_API_KEY: keys.model, ADCP_ORCH_URL: '' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d) => (stderr += d));
    const client = new Client({ name: 'desktop-app', version: '1.0.0' });
    try {
      await client.connect(transport);
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain('create_media_buy');
      expect(tools).not.toContain('answer_operation');
      const bought = await client.callTool({ name: 'create_media_buy', arguments: { agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), idempotency_key: 'stdio-buy' } });
      const op = bought.structuredContent as { id: string; status: string; idempotency_key: string };
      expect(op.status).toBe('completed');

      await serve!.stop('SIGKILL');
      serve = await startServeProcess({ databaseUrl: database.url, port: serve!.port });
      // The same call again through the bridge: a new session behind it, the same operation, no second buy.
      const again = await client.callTool({ name: 'create_media_buy', arguments: { agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), idempotency_key: 'stdio-buy' } });
      expect((again.structuredContent as { id: string }).id).toBe(op.id);
      expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
      expect(stderr).toContain('opened a new one');
    } finally {
      await client.close();
    }
  });
});
