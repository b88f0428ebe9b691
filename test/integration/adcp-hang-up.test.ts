/**
 * The AdCP adapter against a hostile seller over real HTTP on loopback: a call given
 * up at its deadline closes its connection (the seller sees its socket close), on
 * every path a call takes (MCP tools/call, the MCP handshake, the lean MCP poll, A2A
 * message/send, A2A card discovery); and a reply past the cap on reply size ends the
 * call `reply_too_large` with the connection closed before the reply was all sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAdcpClient } from '../../src/adcp/client.js';
import { AdcpTransportError, type AdcpClient, type AgentEndpoint } from '../../src/adcp/types.js';
import { startHostileSeller, type HostileSeller } from '../helpers/hostile-seller.js';

const TIMEOUT_MS = 600;
/** How soon after the deadline the seller must see the socket close. */
const HANG_UP_SLACK_MS = 1_000;

let seller: HostileSeller | undefined;
let client: AdcpClient | undefined;
afterEach(async () => {
  await client?.close();
  await seller?.close();
  seller = client = undefined;
});

async function setUp(maxReplyBytes?: number) {
  seller = await startHostileSeller({ dripEveryMs: 50 });
  client = createAdcpClient({ callTimeoutMs: TIMEOUT_MS, pollTimeoutMs: TIMEOUT_MS, ...(maxReplyBytes ? { maxReplyBytes } : {}) });
  const mcp: AgentEndpoint = { url: seller.mcpUrl, protocol: 'mcp' };
  const a2a: AgentEndpoint = { url: seller.a2aUrl, protocol: 'a2a' };
  return { seller, client, mcp, a2a };
}

async function expectHungUp(s: HostileSeller, call: () => Promise<unknown>, drips = 1) {
  const started = Date.now();
  const err = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AdcpTransportError);
  expect((err as AdcpTransportError).kind).toBe('timeout');
  await s.waitForClosedDrips(drips);
  // Closed by us at the deadline, not left to drip (the seller would go on for ever).
  expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + HANG_UP_SLACK_MS);
  expect(s.dripping()).toBe(0);
}

describe('a call given up at its deadline is hung up on', () => {
  it('MCP tools/call', async () => {
    const { seller, client, mcp } = await setUp();
    seller.set('get_products', 'drip');
    await expectHungUp(seller, () => client.callTask(mcp, 'get_products', { buying_mode: 'brief', brief: 'x' }));
    expect(seller.closedDrips[0]!.tool).toBe('get_products');
  });

  it('the MCP handshake, shared by the calls waiting on it, once the last of them gives up', async () => {
    const { seller, client, mcp } = await setUp();
    seller.set('initialize', 'drip');
    await expectHungUp(seller, () => Promise.all([client.callTask(mcp, 'get_products', { buying_mode: 'wholesale' }), client.callTask(mcp, 'get_products', { buying_mode: 'wholesale' }, { timeoutMs: TIMEOUT_MS / 2 })]));
    expect(seller.closedDrips.map((d) => d.tool)).toEqual(['initialize']);
    // The handshake was aborted, not cached: the next call connects afresh.
    seller.set('initialize', 'ok');
    expect((await client.callTask(mcp, 'get_products', { buying_mode: 'wholesale' })).status).toBe('completed');
  });

  it('the lean MCP poll', async () => {
    const { seller, client, mcp } = await setUp();
    seller.set('tasks/get', 'drip');
    await expectHungUp(seller, () => client.getTask(mcp, 'task_1'));
    expect(seller.calls.filter((c) => c.tool === 'tasks/get')).toHaveLength(1); // not sent again through the SDK client
  });

  it('A2A message/send', async () => {
    const { seller, client, a2a } = await setUp();
    seller.set('get_products', 'drip');
    await expectHungUp(seller, () => client.callTask(a2a, 'get_products', { buying_mode: 'brief', brief: 'x' }));
  });

  it('A2A agent card discovery', async () => {
    const { seller, client, a2a } = await setUp();
    seller.set('agent-card', 'drip');
    await expectHungUp(seller, () => client.callTask(a2a, 'get_products', { buying_mode: 'brief', brief: 'x' }));
    expect(seller.closedDrips.map((d) => d.tool)).toEqual(['agent-card']);
  });
});

describe('a reply past the cap on reply size', () => {
  const CAP = 256 * 1024;
  const HUGE = { bytes: 8_000_000 };

  async function expectTooLarge(s: HostileSeller, tool: string, call: () => Promise<unknown>) {
    const err = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AdcpTransportError);
    expect((err as AdcpTransportError).kind).toBe('reply_too_large');
    expect((err as Error).message).toMatch(/larger than 262144 bytes/);
    // Reading stopped at the cap and the connection was closed: the rest was never sent.
    await expect.poll(() => s.cutReplies.filter((r) => r.tool === tool).length).toBe(1);
    const cut = s.cutReplies.find((r) => r.tool === tool)!;
    expect(cut.sentBytes).toBeLessThan(cut.totalBytes / 2);
  }

  it('ends an MCP call, an MCP poll and an A2A call with reply_too_large', async () => {
    const { seller, client, mcp, a2a } = await setUp(CAP);
    seller.set('get_products', HUGE);
    seller.set('tasks/get', HUGE);
    await expectTooLarge(seller, 'get_products', () => client.callTask(mcp, 'get_products', { buying_mode: 'wholesale' }));
    await expectTooLarge(seller, 'tasks/get', () => client.getTask(mcp, 'task_1'));
    expect(seller.calls.filter((c) => c.tool === 'tasks/get')).toHaveLength(1); // the lean path's answer stands
    seller.cutReplies.length = 0;
    await expectTooLarge(seller, 'get_products', () => client.callTask(a2a, 'get_products', { buying_mode: 'wholesale' }));
  });

  it('is read whole below the cap', async () => {
    const { seller, client, mcp, a2a } = await setUp(16 * 1024 * 1024);
    seller.set('get_products', HUGE);
    for (const agent of [mcp, a2a]) {
      const reply = await client.callTask(agent, 'get_products', { buying_mode: 'wholesale' }, { timeoutMs: 30_000 });
      expect(reply.status).toBe('completed');
      expect((reply.data.products as unknown[]).length).toBeGreaterThan(10_000);
      // A large reply carries its data's JSON, made once, for storing.
      expect(reply.dataJson).toBe(JSON.stringify(reply.data));
    }
    expect(seller.cutReplies).toEqual([]);
  });
});
