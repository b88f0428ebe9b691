/**
 * Two orchestrators on one PostgreSQL database: an MCP session on instance A hears of a
 * change made on instance B — its resource subscription gets
 * notifications/resources/updated, and its wait_for_operation returns — carried by the
 * notifications feed and NOTIFY alone (the feed's fallback poll is off). While the buy
 * waits for a person, wait_for_operation answers at once; once approved, it follows the
 * send, which the seller holds until the test lets it go.
 */
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationUri } from '../../src/mcp/operation-resource.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { connectMcp, type McpTestClient } from '../helpers/mcp-client.js';
import { eventually, startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';

const suite = postgresAdminUrl ? describe : describe.skip;

suite('MCP sessions across two instances on PostgreSQL', () => {
  let database: TestDatabase;
  let seller: SandboxSeller;
  let a: TestOrchestrator;
  let b: TestOrchestrator;
  let agentId: string;
  let client: McpTestClient | undefined;

  beforeAll(async () => {
    database = await tempPostgres();
    seller = await startSandboxSeller();
    const env = { ADCP_ORCH_SSE_FALLBACK_POLL_MS: '0' };
    a = await startOrchestrator({ database, keepDatabase: true, env });
    // B's answer returns at once, its send still waiting on the seller.
    b = await startOrchestrator({ database, keepDatabase: true, env: { ...env, ADCP_ORCH_SYNC_WAIT_MS: '0' } });
    agentId = await a.registerAgent({ url: seller.url });
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await a?.close();
    await b?.close();
    await seller?.close();
    await database?.drop();
  });

  it('a session on A is told of a buy B releases and completes', async () => {
    const held = await b.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_held_reply'), approval: 'required', webhook: 'none' });
    expect(held.status).toBe(202);
    const id = held.body.id as string;
    const uri = operationUri(id);

    client = await connectMcp(a.url, a.apiKey);
    const updates: string[] = [];
    let heard: () => void = () => undefined;
    client.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
      heard();
    });
    await client.client.subscribeResource({ uri });
    // It waits for a person: answered at once, not at the timeout.
    const asked = (await client.call('wait_for_operation', { id, timeout_s: 30 })).structuredContent as { needs_input: boolean };
    expect(asked.needs_input).toBe(true);

    const answered = await b.api('POST', `/v1/operations/${id}/input`, { decision: 'approve' });
    expect(answered.status).toBe(202);
    const waiting = client.call('wait_for_operation', { id, timeout_s: 30 });
    await eventually(async () => (seller.heldReplies() === 1 ? true : undefined));
    expect(seller.releaseHeldReplies()).toBe(1);

    const waited = (await waiting).structuredContent as { status: string; needs_input: boolean };
    expect(waited.needs_input).toBe(false);
    // Each update is followed by a read, as a client does, until the read shows the buy made.
    const read = async () => JSON.parse(((await client!.client.readResource({ uri })).contents[0] as { text: string }).text) as { status: string };
    let status = (await read()).status;
    while (status !== 'completed') {
      const count = updates.length;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no update from B within 15 s (status ${status})`)), 15_000);
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
    // B sent it (its answer drove the send): the change reached A by NOTIFY.
    const events = await a.app.store.operations.events(id);
    expect(events.some((e) => e.kind === 'answered')).toBe(true);
    expect(seller.stats().mediaBuysCreated).toBe(1);
  });
});
