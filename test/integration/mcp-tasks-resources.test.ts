/**
 * Operations as MCP tasks and resources, with the official MCP client: a task-augmented
 * call answers a task whose id is the operation's, tasks/get follows it to completed and
 * tasks/result gives the operation; tasks/cancel cancels the operation (operators only);
 * a resource subscription gets notifications/resources/updated when the operation
 * completes; wait_for_operation returns on a change; another tenant's key gets nothing.
 */
import { CallToolResultSchema, CreateTaskResultSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationUri } from '../../src/mcp/operation-resource.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { connectMcp, errorOf, type McpTestClient } from '../helpers/mcp-client.js';
import { startMcpStack, type McpStack } from '../helpers/mcp-stack.js';
import { eventually } from '../helpers/orchestrator.js';

describe('MCP tasks and resources', () => {
  let stack: McpStack;

  beforeAll(async () => {
    stack = await startMcpStack();
  });
  afterAll(async () => stack?.close());

  /** create_media_buy as a task: the CreateTaskResult. */
  const buyAsTask = (client: McpTestClient, extra: Record<string, unknown> = {}) =>
    client.client.request(
      { method: 'tools/call', params: { name: 'create_media_buy', arguments: { agent_id: stack.agentId, request: mediaBuyRequest('sandbox_submitted'), webhook: 'none', ...extra }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );

  it('a task-augmented call answers a task whose id is the operation’s; tasks/get follows it to completed', async () => {
    const operator = await stack.connect('operator');
    const { task } = await buyAsTask(operator, { idempotency_key: 'task-buy-1' });
    expect(task.status).toBe('working');
    const row = await stack.orch.app.store.operations.getForTenant(stack.orch.tenantId, task.taskId);
    expect(row?.type).toBe('create_media_buy');

    const seen = new Set<string>();
    const done = await eventually(async () => {
      const now = await operator.client.experimental.tasks.getTask(task.taskId);
      seen.add(now.status);
      return now.status === 'completed' ? now : undefined;
    });
    expect(done.taskId).toBe(task.taskId);
    expect([...seen].every((s) => s === 'working' || s === 'completed')).toBe(true);
    const result = await operator.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ id: task.taskId, status: 'completed', result: { media_buy_id: expect.stringMatching(/^mb_/) } });
    expect(stack.seller.stats().mediaBuysCreatedByKey[row!.idempotency_key]).toBe(1);

    // The same call again under its key is the same task: no second buy.
    const again = await buyAsTask(operator, { idempotency_key: 'task-buy-1' });
    expect(again.task.taskId).toBe(task.taskId);
    expect(again.task.status).toBe('completed');
    expect(stack.seller.stats().createCallsByKey[row!.idempotency_key]).toBe(1);
  });

  it('a held buy is an input_required task with the dashboard link; tasks/cancel cancels it (operators only)', async () => {
    const operator = await stack.connect('operator');
    const { task } = await buyAsTask(operator, { approval: 'required' });
    expect(task.status).toBe('input_required');
    expect(task.statusMessage).toContain(`${stack.orch.url}/operations/${task.taskId}`);

    const viewer = await stack.connect('viewer');
    expect((await viewer.client.experimental.tasks.getTask(task.taskId)).status).toBe('input_required');
    await expect(viewer.client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(/operator role/);
    expect((await viewer.client.experimental.tasks.getTask(task.taskId)).status).toBe('input_required');

    const canceled = await operator.client.experimental.tasks.cancelTask(task.taskId);
    expect(canceled.status).toBe('cancelled');
    const events = await stack.orch.app.store.operations.events(task.taskId);
    expect(events.find((e) => e.to_status === 'canceled')?.actor).toBe('operator-key');
  });

  it('a resource subscription is told when the operation changes, up to completed', async () => {
    const operator = await stack.connect('operator');
    const { task } = await buyAsTask(operator);
    const uri = operationUri(task.taskId);
    const updates: string[] = [];
    let heard: () => void = () => undefined;
    operator.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
      heard();
    });
    await operator.client.subscribeResource({ uri });
    const read = async () => JSON.parse(((await operator.client.readResource({ uri })).contents[0] as { text: string }).text);
    expect((await read()).id).toBe(task.taskId);
    // Each notification is followed by a read, as a client would; the last one it needs shows completed.
    let status = (await read()).status;
    while (status !== 'completed') {
      const count = updates.length;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no resource update within 20 s (status ${status})`)), 20_000);
        heard = () => {
          clearTimeout(timer);
          resolve();
        };
        if (updates.length > count) heard();
      });
      status = (await read()).status;
    }
    expect(updates.length).toBeGreaterThan(0);
    expect(updates.every((u) => u === uri)).toBe(true);
    await operator.client.unsubscribeResource({ uri });
    const templates = await operator.client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(['adcp-orchestrator://operations/{id}', 'adcp-orchestrator://media-buys/{id}']);
  });

  it('wait_for_operation returns when the operation changes, and at once when it has ended', async () => {
    const operator = await stack.connect('operator');
    const { task } = await buyAsTask(operator);
    let op = (await operator.call('get_operation', { id: task.taskId })).structuredContent as any;
    const statuses = [op.status];
    while (op.status !== 'completed') {
      const waited = await operator.call('wait_for_operation', { id: task.taskId, timeout_s: 30 });
      const next = waited.structuredContent as any;
      // Each return is a change (or the end), never the same state again.
      expect(next.status !== op.status || next.updated_at !== op.updated_at).toBe(true);
      op = next;
      statuses.push(op.status);
    }
    expect(statuses.at(-1)).toBe('completed');
    const ended = await operator.call('wait_for_operation', { id: task.taskId, timeout_s: 55 });
    expect((ended.structuredContent as any).status).toBe('completed');
  });

  it('another tenant’s key gets nothing of it', async () => {
    const operator = await stack.connect('operator');
    const { task } = await buyAsTask(operator, { approval: 'required' });
    const uri = operationUri(task.taskId);
    const other = await stack.orch.app.store.tenants.ensureTenant('other-tenant');
    const otherKey = await stack.orch.app.store.tenants.createApiKey(other.id, { name: 'other-approver', role: 'approver' });
    const stranger = await connectMcp(stack.orch.url, otherKey, 'stranger');
    try {
      for (const [tool, args] of [
        ['get_operation', { id: task.taskId }],
        ['wait_for_operation', { id: task.taskId, timeout_s: 1 }],
        ['answer_operation', { id: task.taskId, decision: 'approve' }],
        ['cancel_operation', { id: task.taskId }],
      ] as const) {
        const result = await stranger.call(tool, args);
        expect(result.isError, tool).toBe(true);
        expect(errorOf(result)?.code, tool).toMatch(/not_found$/);
      }
      expect((await stranger.call('list_operations')).structuredContent).toMatchObject({ operations: [] });
      expect((await stranger.call('list_inbox')).structuredContent).toMatchObject({ operations: [] });
      await expect(stranger.client.readResource({ uri })).rejects.toThrow(/not found/);
      await expect(stranger.client.subscribeResource({ uri })).rejects.toThrow(/not found/);
      await expect(stranger.client.experimental.tasks.getTask(task.taskId)).rejects.toThrow(/not found/i);
      await expect(stranger.client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(/not found/i);
      expect((await stranger.client.experimental.tasks.listTasks()).tasks).toEqual([]);
      // Nor may it use the first tenant's session.
      const res = await fetch(`${stack.orch.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${otherKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': operator.transport.sessionId! },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(404);
    } finally {
      await stranger.close();
    }
    const row = await stack.orch.app.store.operations.get(task.taskId);
    expect(row).toMatchObject({ status: 'requested', needs_input: 1 });
  });
});
