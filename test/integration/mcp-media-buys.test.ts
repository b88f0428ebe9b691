/**
 * The media-buy tools with the official MCP client over Streamable HTTP, against a real
 * orchestrator and the sandbox seller (its flight clock stopped; reports fired by its
 * hooks): a buy bought by tool shows in list_media_buys and get_media_buy as the API
 * shows it; get_delivery shows the periods the seller reported; pause and resume reach
 * the seller as update_media_buy, once per idempotency_key however often the call is
 * retried, and run as MCP tasks; a viewer sees and may use none of them.
 */
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buyWhen, sellerCalls, settledBuy } from '../helpers/live-buys.js';
import { errorOf, textOf } from '../helpers/mcp-client.js';
import { startMcpLiveBuyStack, type McpLiveBuyStack } from '../helpers/mcp-live-buys.js';
import { eventually } from '../helpers/orchestrator.js';

const BUY_TOOLS = ['list_media_buys', 'get_media_buy', 'get_delivery'];
const BUY_ACTIONS = ['pause_media_buy', 'resume_media_buy', 'refresh_media_buy'];

describe('MCP media-buy tools', () => {
  let stack: McpLiveBuyStack;

  beforeAll(async () => {
    stack = await startMcpLiveBuyStack();
  });
  afterAll(async () => stack?.close());

  it('a buy bought by tool is in list_media_buys and get_media_buy as the API shows it; get_delivery shows the periods reported', async () => {
    const { orch, seller } = stack;
    const operator = await stack.connect('operator');
    const viewer = await stack.connect('viewer');
    const { buy, operation } = await stack.buyByTool(operator, { idempotency_key: 'mcp-live-buy-1' });
    expect(buy).toMatchObject({ agent_id: stack.agentId, media_buy_id: operation.result.media_buy_id, budget: { amount: 4000 }, reports: { frequency: 'hourly' } });

    await seller.reporting.fireNow(buy.media_buy_id);
    await seller.reporting.fireNow(buy.media_buy_id);
    await buyWhen(orch, buy.id, (b) => b.reports.received === 2);
    const settled = await settledBuy(orch, buy.id);

    const shown = await viewer.call('get_media_buy', { id: buy.id });
    expect(shown.isError).toBeFalsy();
    expect(shown.structuredContent).toEqual(settled);
    const text = textOf(shown);
    expect(text).toContain(`Media buy ${buy.id}`);
    expect(text).toContain(`is ${settled.status}`);
    expect(text).toContain('of 4,000 USD');
    expect(text).toContain(`Pacing: `);
    expect(text).toContain('2 received');
    expect(text).toContain('pause_media_buy');
    expect(text).toContain(`${orch.url}/media-buys/${buy.id}`);

    // The listing and its filters are the API's.
    const listed = (await viewer.call('list_media_buys', { status: settled.status, agent_id: stack.agentId })).structuredContent as any;
    const api = (await orch.api('GET', `/v1/media-buys?status=${settled.status}&agent_id=${stack.agentId}`)).body;
    expect(listed.media_buys.map((b: any) => b.id)).toEqual(api.media_buys.map((b: any) => b.id));
    expect(listed.media_buys.map((b: any) => b.id)).toContain(buy.id);
    expect(((await viewer.call('list_media_buys', { status: 'completed' })).structuredContent as any).media_buys).toEqual([]);
    const bad = await viewer.call('list_media_buys', { pacing: 'sideways' });
    expect(errorOf(bad)?.code).toBe('invalid_request');

    const delivery = await viewer.call('get_delivery', { id: buy.id });
    expect(delivery.structuredContent).toEqual((await orch.api('GET', `/v1/media-buys/${buy.id}/delivery`)).body);
    const reports = (delivery.structuredContent as any).reports;
    const fired = seller.reporting.fires(buy.media_buy_id).map((f) => f.reporting_period);
    expect(reports.map((r: any) => [Date.parse(r.period.start), Date.parse(r.period.end)])).toEqual(fired.map((p) => [Date.parse(p.start), Date.parse(p.end)]));
    expect(reports.map((r: any) => [r.sequence_number, r.source])).toEqual([
      [1, 'webhook'],
      [2, 'webhook'],
    ]);
    expect((delivery.structuredContent as any).totals).toMatchObject({ periods: 2, spend: settled.delivery.spend, currency: 'USD' });
    expect(textOf(delivery)).toContain('2 report(s) covering 2 period(s)');
    expect(textOf(delivery)).toContain(`${orch.url}/media-buys/${buy.id}`);
  });

  it('pause and resume reach the seller as update_media_buy, once per idempotency_key however often retried; resume runs as an MCP task', async () => {
    const { orch, seller } = stack;
    const operator = await stack.connect('operator');
    const { buy } = await stack.buyByTool(operator);
    await seller.reporting.fireNow(buy.media_buy_id);
    await buyWhen(orch, buy.id, (b) => b.status === 'active');

    // Two calls at once under one key, as a model retrying over a dropped connection might: one update at the seller.
    const pause = { id: buy.id, idempotency_key: 'pause-it-1' };
    const both = await Promise.all([operator.call('pause_media_buy', pause), operator.call('pause_media_buy', pause)]);
    const done = both.filter((r) => !r.isError).map((r) => r.structuredContent as any);
    expect(done.length).toBeGreaterThan(0);
    for (const r of both.filter((x) => x.isError)) expect(errorOf(r)?.code).toBe('idempotency_key_in_progress');
    const op = done[0];
    expect(op).toMatchObject({ type: 'update_media_buy', parent_id: buy.operation_id, request: { media_buy_id: buy.media_buy_id, paused: true } });
    expect(new Set(done.map((o) => o.id)).size).toBe(1);
    expect(textOf(both.find((r) => !r.isError)!)).toContain(`${orch.url}/media-buys/${buy.id}`);
    // And again afterwards: the first answer, nothing more sent.
    const retried = await operator.call('pause_media_buy', pause);
    expect((retried.structuredContent as any).id).toBe(op.id);
    await eventually(async () => ((await orch.app.store.operations.get(op.id))?.status === 'completed' ? true : undefined));
    expect(sellerCalls(seller, 'update_media_buy', buy.media_buy_id).map((a) => a.paused)).toEqual([true]);
    await buyWhen(orch, buy.id, (b) => b.status === 'paused');

    // The same key for another call is refused; a new pause of a paused buy is refused; nothing is sent.
    expect(errorOf(await operator.call('resume_media_buy', { id: buy.id, idempotency_key: 'pause-it-1' }))?.code).toBe('idempotency_key_reused');
    expect(errorOf(await operator.call('pause_media_buy', { id: buy.id }))?.code).toBe('already_paused');
    expect(errorOf(await operator.call('get_media_buy', { id: 'buy_nope' }))?.code).toBe('media_buy_not_found');
    expect(sellerCalls(seller, 'update_media_buy', buy.media_buy_id)).toHaveLength(1);
    expect(textOf(await operator.call('get_media_buy', { id: buy.id }))).toContain('resume_media_buy');

    // Resume as a task: its id is the update operation's, followed to completed.
    const resumeAsTask = () =>
      operator.client.request(
        { method: 'tools/call', params: { name: 'resume_media_buy', arguments: { id: buy.id, idempotency_key: 'resume-it-1' }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
    const { task } = await resumeAsTask();
    const row = await orch.app.store.operations.getForTenant(orch.tenantId, task.taskId);
    expect(row).toMatchObject({ type: 'update_media_buy', parent_id: buy.operation_id });
    await eventually(async () => ((await operator.client.experimental.tasks.getTask(task.taskId)).status === 'completed' ? true : undefined));
    expect((await resumeAsTask()).task.taskId).toBe(task.taskId);
    expect(sellerCalls(seller, 'update_media_buy', buy.media_buy_id).map((a) => a.paused)).toEqual([true, false]);
    const after = await buyWhen(orch, buy.id, (b) => b.status === 'active');
    expect(after.events.filter((e: any) => e.kind.endsWith('_requested')).map((e: any) => [e.kind, e.actor])).toEqual([
      ['pause_requested', 'operator-key'],
      ['resume_requested', 'operator-key'],
    ]);
  });

  it('refresh_media_buy reads the buy from the seller now, as two operations', async () => {
    const { orch, seller } = stack;
    const operator = await stack.connect('operator');
    const { buy } = await stack.buyByTool(operator);
    await seller.reporting.fireNow(buy.media_buy_id);
    const refreshed = await operator.call('refresh_media_buy', { id: buy.id, idempotency_key: 'refresh-1' });
    const ops = (refreshed.structuredContent as any).operations;
    expect(ops.map((o: any) => o.type)).toEqual(['get_media_buys', 'get_media_buy_delivery']);
    expect(textOf(refreshed)).toContain('get_media_buy');
    expect(((await operator.call('refresh_media_buy', { id: buy.id, idempotency_key: 'refresh-1' })).structuredContent as any).operations.map((o: any) => o.id)).toEqual(
      ops.map((o: any) => o.id),
    );
    const after = await buyWhen(orch, buy.id, (b) => b.delivery.source === 'poll');
    expect(after.events.find((e: any) => e.kind === 'refresh_requested')?.actor).toBe('operator-key');
    expect(sellerCalls(seller, 'get_media_buy_delivery', buy.media_buy_id)).toHaveLength(1);
  });

  it('a viewer sees the reading tools and none of the actions, and is refused them if it calls anyway', async () => {
    const viewerTools = (await (await stack.connect('viewer')).client.listTools()).tools;
    const names = viewerTools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(BUY_TOOLS));
    expect(names.filter((n) => BUY_ACTIONS.includes(n))).toEqual([]);
    const operatorTools = (await (await stack.connect('operator')).client.listTools()).tools;
    const byName = new Map(operatorTools.map((t) => [t.name, t]));
    expect([...byName.keys()]).toEqual(expect.arrayContaining([...BUY_TOOLS, ...BUY_ACTIONS]));
    expect(byName.get('pause_media_buy')?.execution?.taskSupport).toBe('optional');
    expect(byName.get('resume_media_buy')?.inputSchema.properties).toHaveProperty('idempotency_key');
    expect(byName.get('get_media_buy')?.execution?.taskSupport).toBe('forbidden');
    expect(byName.get('get_media_buy')?.outputSchema?.properties).toHaveProperty('delivery');

    const operator = await stack.connect('operator');
    const { buy } = await stack.buyByTool(operator);
    const viewer = await stack.connect('viewer');
    for (const tool of BUY_ACTIONS) {
      const refused = await viewer.call(tool, { id: buy.id, idempotency_key: `viewer-${tool}` });
      expect(errorOf(refused), tool).toEqual({ code: 'forbidden', message: "this action needs the operator role; key 'viewer-key' has viewer" });
    }
    expect(sellerCalls(stack.seller, 'update_media_buy', buy.media_buy_id)).toEqual([]);
    expect(sellerCalls(stack.seller, 'get_media_buy_delivery', buy.media_buy_id)).toEqual([]);
  });
});
