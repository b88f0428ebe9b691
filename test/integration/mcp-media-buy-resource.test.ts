/**
 * The media-buy resource `adcp-orchestrator://media-buys/{id}` with the official MCP
 * client over Streamable HTTP, against a real orchestrator and the sandbox seller (its
 * flight clock stopped; reports fired by its hooks): a subscription is told
 * (notifications/resources/updated) when a report arrives, a read shows the buy as the
 * API does; another tenant's key gets nothing of the buy, by tool or by resource.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaBuyUri } from '../../src/mcp/media-buy-resource.js';
import { buyWhen, sellerCalls, settledBuy } from '../helpers/live-buys.js';
import { connectMcp, errorOf } from '../helpers/mcp-client.js';
import { readJson, resourceUpdates, startMcpLiveBuyStack, type McpLiveBuyStack } from '../helpers/mcp-live-buys.js';

describe('MCP media-buy resource', () => {
  let stack: McpLiveBuyStack;

  beforeAll(async () => {
    stack = await startMcpLiveBuyStack();
  });
  afterAll(async () => stack?.close());

  it('a subscription to a buy is told when a report arrives; the read shows the report', async () => {
    const { orch, seller } = stack;
    const operator = await stack.connect('operator');
    const { buy } = await stack.buyByTool(operator);
    await seller.reporting.fireNow(buy.media_buy_id);
    // Nothing of the buy left to happen by itself: every update from here on is the next report's.
    await settledBuy(orch, buy.id);

    const viewer = await stack.connect('viewer');
    const templates = (await viewer.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    expect(templates).toEqual(['adcp-orchestrator://operations/{id}', 'adcp-orchestrator://media-buys/{id}']);
    const uri = mediaBuyUri(buy.id);
    expect((await viewer.client.listResources()).resources.map((r) => r.uri)).toContain(uri);
    const before = await readJson(viewer, uri);
    expect(before).toEqual((await orch.api('GET', `/v1/media-buys/${buy.id}`)).body);
    expect(before.reports.received).toBe(1);

    const updates = resourceUpdates(viewer);
    await viewer.client.subscribeResource({ uri });
    // A report that changes no status (the buy is active already) and so raises no notification: heard all the same.
    const notified = async () =>
      Number((await orch.app.store.db.kysely.selectFrom('notifications').select((eb) => eb.fn.countAll().as('n')).where('operation_id', '=', buy.id).executeTakeFirstOrThrow()).n);
    const notes = await notified();
    await seller.reporting.fireNow(buy.media_buy_id);
    await updates.next(uri, 0);
    const after = await buyWhen(orch, buy.id, (b) => b.reports.received === 2);
    expect(after.status).toBe(before.status);
    expect(await notified()).toBe(notes);
    const read = await readJson(viewer, uri);
    expect(read.reports.received).toBe(2);
    expect(read.delivery.spend).toBeGreaterThan(before.delivery.spend);
    expect(updates.heard.every((u) => u === uri)).toBe(true);

    // A pause by another session is heard too.
    const heard = updates.count(uri);
    const paused = await operator.call('pause_media_buy', { id: buy.id });
    expect(paused.isError).toBeFalsy();
    await updates.next(uri, heard);
    await buyWhen(orch, buy.id, (b) => b.status === 'paused');
    await viewer.client.unsubscribeResource({ uri });
  });

  it('another tenant’s key gets nothing of the buy: not found by tool or resource, and nothing is sent', async () => {
    const { orch, seller } = stack;
    const operator = await stack.connect('operator');
    const { buy } = await stack.buyByTool(operator);
    const uri = mediaBuyUri(buy.id);
    const other = await orch.app.store.tenants.ensureTenant('other-tenant');
    const otherKey = await orch.app.store.tenants.createApiKey(other.id, { name: 'other-admin', role: 'admin' });
    const stranger = await connectMcp(orch.url, otherKey, 'stranger');
    try {
      for (const tool of ['get_media_buy', 'get_delivery', 'pause_media_buy', 'resume_media_buy', 'refresh_media_buy']) {
        const result = await stranger.call(tool, { id: buy.id });
        expect(result.isError, tool).toBe(true);
        expect(errorOf(result)?.code, tool).toBe('media_buy_not_found');
      }
      expect((await stranger.call('list_media_buys')).structuredContent).toEqual({ media_buys: [], next_cursor: null });
      await expect(stranger.client.readResource({ uri })).rejects.toThrow(/not found/);
      await expect(stranger.client.subscribeResource({ uri })).rejects.toThrow(/not found/);
      expect((await stranger.client.listResources()).resources.map((r) => r.uri)).not.toContain(uri);
    } finally {
      await stranger.close();
    }
    expect(sellerCalls(seller, 'update_media_buy', buy.media_buy_id)).toEqual([]);
    expect(sellerCalls(seller, 'get_media_buy_delivery', buy.media_buy_id)).toEqual([]);
    expect((await orch.app.store.mediaBuys.events(buy.id)).filter((e) => e.actor !== null)).toEqual([]);
  });
});
