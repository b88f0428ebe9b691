/**
 * Two orchestrators on one PostgreSQL database: an MCP session on instance B that
 * subscribes to a live media buy is told (notifications/resources/updated) when a
 * delivery report for it arrives at instance A, whose address the seller reports to —
 * carried by NOTIFY alone (the feed's fallback poll is off).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaBuyUri } from '../../src/mcp/media-buy-resource.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';
import { buyLive, buyWhen, LIVE_BUY_ENV, settledBuy } from '../helpers/live-buys.js';
import { connectMcp, type McpTestClient } from '../helpers/mcp-client.js';
import { readJson, resourceUpdates } from '../helpers/mcp-live-buys.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';

const suite = postgresAdminUrl ? describe : describe.skip;

suite('MCP media-buy resource across two instances on PostgreSQL', () => {
  let database: TestDatabase;
  let seller: SandboxSeller;
  let a: TestOrchestrator;
  let b: TestOrchestrator;
  let agentId: string;
  let client: McpTestClient | undefined;

  beforeAll(async () => {
    database = await tempPostgres();
    seller = await startSandboxSeller({ reportClock: false, statusStepMs: 0, flightPeriods: 8 });
    const env = { ...LIVE_BUY_ENV, ADCP_ORCH_SSE_FALLBACK_POLL_MS: '0' };
    a = await startOrchestrator({ database, keepDatabase: true, env });
    b = await startOrchestrator({ database, keepDatabase: true, env });
    agentId = await a.registerAgent({ url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await a?.close();
    await b?.close();
    await seller?.close();
    await database?.drop();
  });

  it('a session on B hears of the reports A takes for the buy it subscribed to', async () => {
    const buy = await buyLive(a, agentId);
    await seller.reporting.fireNow(buy.media_buy_id);
    await settledBuy(a, buy.id);

    client = await connectMcp(b.url, b.apiKey);
    const uri = mediaBuyUri(buy.id);
    const updates = resourceUpdates(client);
    await client.client.subscribeResource({ uri });
    expect((await readJson(client, uri)).reports.received).toBe(1);

    // The seller reports to A (the buy's reporting webhook is A's address).
    const fire = await seller.reporting.fireNow(buy.media_buy_id);
    expect(fire?.url.startsWith(a.url)).toBe(true);
    await updates.next(uri, 0);
    await buyWhen(b, buy.id, (x) => x.reports.received === 2);
    expect((await readJson(client, uri)).reports.received).toBe(2);
    expect(updates.heard.every((u) => u === uri)).toBe(true);
  });
});
