/**
 * The MCP server's tools with the official MCP client over Streamable HTTP, against a
 * real orchestrator and the sandbox seller: tools by role, a buy by tool, retries under
 * one idempotency_key, a buy held for a person and released by an approver's answer,
 * the actor of every change, and mcp_tool_calls_total.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { errorOf, textOf } from '../helpers/mcp-client.js';
import { startMcpStack, type McpStack } from '../helpers/mcp-stack.js';

const MUTATING = ['create_media_buy', 'run_task', 'answer_operation', 'cancel_operation', 'sync_plan', 'create_campaign'];

describe('MCP tools', () => {
  let stack: McpStack;

  beforeAll(async () => {
    stack = await startMcpStack();
  });
  afterAll(async () => stack?.close());

  const names = async (role: 'viewer' | 'operator' | 'approver') => (await (await stack.connect(role)).client.listTools()).tools;

  it('lists the tools a key’s role may use, and refuses the others if called anyway, storing nothing', async () => {
    const viewerTools = await names('viewer');
    expect(viewerTools.map((t) => t.name)).toEqual(expect.arrayContaining(['list_agents', 'get_operation', 'list_operations', 'wait_for_operation', 'list_inbox', 'get_plan', 'get_campaign']));
    expect(viewerTools.map((t) => t.name).filter((n) => MUTATING.includes(n))).toEqual([]);
    expect(viewerTools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);

    const operatorTools = (await names('operator')).map((t) => t.name);
    expect(operatorTools).toEqual(expect.arrayContaining(['create_media_buy', 'run_task', 'cancel_operation', 'sync_plan', 'create_campaign']));
    expect(operatorTools).not.toContain('answer_operation');
    const approverTools = await names('approver');
    expect(approverTools.map((t) => t.name)).toContain('answer_operation');
    // Tools that start an operation may run as MCP tasks; the others may not.
    const byName = new Map(approverTools.map((t) => [t.name, t]));
    expect(byName.get('create_media_buy')?.execution?.taskSupport).toBe('optional');
    expect(byName.get('get_operation')?.execution?.taskSupport).toBe('forbidden');
    expect(byName.get('create_media_buy')?.inputSchema.properties).toHaveProperty('idempotency_key');
    expect(byName.get('create_media_buy')?.outputSchema?.properties).toHaveProperty('status');

    const before = { operations: await stack.count('operations'), keys: await stack.count('api_idempotency'), calls: stack.seller.stats().mediaBuysCreated };
    const viewer = await stack.connect('viewer');
    const refused = await viewer.call('create_media_buy', { agent_id: stack.agentId, request: mediaBuyRequest('sandbox_instant'), idempotency_key: 'viewer-tries' });
    expect(refused.isError).toBe(true);
    expect(errorOf(refused)).toEqual({ code: 'forbidden', message: "this action needs the operator role; key 'viewer-key' has viewer" });
    expect(textOf(refused)).toContain('forbidden');
    const operator = await stack.connect('operator');
    const notAnApprover = await operator.call('answer_operation', { id: 'whatever', decision: 'approve' });
    expect(errorOf(notAnApprover)?.code).toBe('forbidden');
    expect({ operations: await stack.count('operations'), keys: await stack.count('api_idempotency'), calls: stack.seller.stats().mediaBuysCreated }).toEqual(before);
  });

  it('buys by tool: the buy completes, the seller sees one create, a retry under the same key buys nothing more', async () => {
    const operator = await stack.connect('operator');
    const args = { agent_id: stack.agentId, request: mediaBuyRequest('sandbox_instant'), idempotency_key: 'model-buy-1' };
    const first = await operator.call('create_media_buy', args);
    expect(first.isError).toBeFalsy();
    const op = first.structuredContent as any;
    expect(op.status).toBe('completed');
    expect(op.result.media_buy_id).toMatch(/^mb_/);
    expect(textOf(first)).toContain(`media buy ${op.result.media_buy_id} was created`);

    // The model lost our answer and calls again, in a new session: the same operation, nothing sent.
    const again = await (await stack.connect('operator')).call('create_media_buy', args);
    expect((again.structuredContent as any).id).toBe(op.id);
    expect(stack.seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
    expect(stack.seller.stats().createCallsByKey[op.idempotency_key]).toBe(1);

    const changed = await operator.call('create_media_buy', { ...args, request: mediaBuyRequest('sandbox_instant', { po_number: 'other' }) });
    expect(changed.isError).toBe(true);
    expect(errorOf(changed)?.code).toBe('idempotency_key_reused');

    const shown = await operator.call('get_operation', { id: op.id });
    const created = (shown.structuredContent as any).events.find((e: any) => e.kind === 'created');
    expect(created.actor).toBe('operator-key');

    const metrics = await (await fetch(`${stack.orch.url}/metrics`)).text();
    expect(metrics).toMatch(/adcp_orch_mcp_tool_calls_total\{tool="create_media_buy",outcome="ok"\} 2/);
    expect(metrics).toMatch(/adcp_orch_mcp_tool_calls_total\{tool="create_media_buy",outcome="error"\} 1/);
    expect(metrics).toMatch(/adcp_orch_mcp_tool_calls_total\{tool="create_media_buy",outcome="forbidden"\} 1/);
  });

  it('holds a buy for approval and says so with the dashboard link; an approver’s answer_operation releases it', async () => {
    const operator = await stack.connect('operator');
    const held = await operator.call('create_media_buy', { agent_id: stack.agentId, request: mediaBuyRequest('sandbox_instant'), approval: 'required', idempotency_key: 'held-1' });
    expect(held.isError).toBeFalsy();
    const op = held.structuredContent as any;
    expect(op).toMatchObject({ status: 'requested', needs_input: true, input_request: { kind: 'spend_approval' } });
    expect(textOf(held)).toContain('waits for a person');
    expect(textOf(held)).toContain(`${stack.orch.url}/operations/${op.id}`);
    expect(stack.seller.stats().createCallsByKey[op.idempotency_key]).toBeUndefined();

    // Waiting on it answers at once (not at the timeout): it needs a person, and the text says who and where.
    const began = Date.now();
    const waited = await operator.call('wait_for_operation', { id: op.id, timeout_s: 20 });
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(waited.isError).toBeFalsy();
    expect(waited.structuredContent).toMatchObject({ id: op.id, status: 'requested', needs_input: true, input_request: { kind: 'spend_approval' } });
    expect(textOf(waited)).toContain('A person must approve (or reject) it in the dashboard');
    expect(textOf(waited)).toContain(`${stack.orch.url}/operations/${op.id}`);

    const inbox = await operator.call('list_inbox');
    expect((inbox.structuredContent as any).operations.map((o: any) => o.id)).toContain(op.id);
    expect(textOf(inbox)).toContain(`${stack.orch.url}/inbox`);

    const approver = await stack.connect('approver');
    const answered = await approver.call('answer_operation', { id: op.id, decision: 'approve', message: 'within budget', idempotency_key: 'approve-held-1' });
    expect(answered.isError).toBeFalsy();
    let now = answered.structuredContent as any;
    while (now.status !== 'completed') {
      const waited = await operator.call('wait_for_operation', { id: op.id, timeout_s: 20 });
      expect(waited.isError).toBeFalsy();
      now = waited.structuredContent;
      expect(['requested', 'calling_adcp', 'completed']).toContain(now.status);
    }
    expect(stack.seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
    const history = (await operator.call('get_operation', { id: op.id })).structuredContent as any;
    const answeredEvent = history.events.find((e: any) => e.kind === 'answered');
    expect(answeredEvent).toMatchObject({ actor: 'approver-key', detail: expect.objectContaining({ decision: 'approve', message: 'within budget' }) });

    // The same answer again under its key is the first answer; answering again without one is refused.
    const replay = await approver.call('answer_operation', { id: op.id, decision: 'approve', message: 'within budget', idempotency_key: 'approve-held-1' });
    expect((replay.structuredContent as any).id).toBe((answered.structuredContent as any).id);
    const late = await approver.call('answer_operation', { id: op.id, decision: 'reject', message: 'changed my mind' });
    expect(errorOf(late)?.code).toBe('not_waiting');
    expect(stack.seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
  });

  it('cancels a held buy with the key’s name as actor; nothing reaches the seller', async () => {
    const operator = await stack.connect('operator');
    const held = (await operator.call('create_media_buy', { agent_id: stack.agentId, request: mediaBuyRequest('sandbox_instant'), approval: 'required' })).structuredContent as any;
    const canceled = await operator.call('cancel_operation', { id: held.id, reason: 'the model changed its plan' });
    expect(canceled.isError).toBeFalsy();
    expect((canceled.structuredContent as any).status).toBe('canceled');
    const shown = (await operator.call('get_operation', { id: held.id })).structuredContent as any;
    expect(shown.events.find((e: any) => e.to === 'canceled')?.actor).toBe('operator-key');
    expect(stack.seller.stats().createCallsByKey[held.idempotency_key]).toBeUndefined();
  });

  it('runs any task with run_task and lists operations and agents', async () => {
    const operator = await stack.connect('operator');
    const products = await operator.call('run_task', { agent_id: stack.agentId, task: 'get_products', params: { buying_mode: 'brief', brief: 'sports fans' }, webhook: 'none' });
    expect(products.isError).toBeFalsy();
    expect((products.structuredContent as any)).toMatchObject({ type: 'get_products', status: 'completed' });
    const listed = await operator.call('list_operations', { type: 'get_products', limit: 5 });
    expect((listed.structuredContent as any).operations[0].id).toBe((products.structuredContent as any).id);
    const agents = await operator.call('list_agents');
    expect((agents.structuredContent as any).agents.map((a: any) => a.id)).toContain(stack.agentId);
    expect(textOf(agents)).toContain(stack.agentId);
  });
});
