/**
 * Thousands of calls through createAdcpClient against the real sandbox seller
 * leave no AbortSignal with a growing number of `abort` listeners.
 *
 * The MCP client transport hands one session-wide signal to every fetch, and
 * Node's fetch adds a listener to it per request that it only removes at
 * garbage collection: a long run of polls piled up thousands of them and
 * printed MaxListenersExceededWarning on every call. Every AbortController the
 * code under test creates is recorded (ours, the MCP SDK's, undici's), so the
 * test watches the long-lived signals wherever they live, without reaching
 * into private fields.
 */
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdcpClient } from '../../src/adcp/client.js';
import type { AdcpClient, AgentEndpoint } from '../../src/adcp/types.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';

const created: AbortSignal[] = [];
const NativeAbortController = globalThis.AbortController;
class RecordingAbortController extends NativeAbortController {
  constructor() {
    super();
    created.push(this.signal);
  }
}

/** Most `abort` listeners on any live (not aborted) signal created since `from`. */
function mostListeners(from = 0): number {
  let most = 0;
  for (const signal of created.slice(from)) if (!signal.aborted) most = Math.max(most, getEventListeners(signal, 'abort').length);
  return most;
}

const BOUND = 10;
let seller: SandboxSeller;
let client: AdcpClient;

beforeAll(async () => {
  globalThis.AbortController = RecordingAbortController;
  seller = await startSandboxSeller({ submittedDelayMs: 600_000, workingDelayMs: 600_000 });
  client = createAdcpClient({ callTimeoutMs: 20_000, pollTimeoutMs: 20_000 });
});

afterAll(async () => {
  globalThis.AbortController = NativeAbortController;
  await client?.close();
  await seller?.close();
});

/**
 * `polls` getTask + listTasks pairs and `calls` get_products calls one after another,
 * then `rounds` of 32 polls at once (what the scheduler's concurrency does).
 */
async function drive(agent: AgentEndpoint, polls: number, calls: number, rounds: number): Promise<void> {
  const first = await client.callTask(agent, 'get_products', { brief: 'listener bound', buying_mode: 'brief' });
  expect(first.status).toBe('completed');
  for (let i = 0; i < polls; i++) {
    await expect(client.getTask(agent, `tsk_unknown_${i}`)).rejects.toThrow(/REFERENCE_NOT_FOUND|not found/i);
    const page = await client.listTasks(agent, { maxResults: 5 });
    expect(Array.isArray(page.tasks)).toBe(true);
  }
  for (let i = 0; i < calls; i++) {
    const reply = await client.callTask(agent, 'get_products', { brief: `call ${i}`, buying_mode: 'brief' });
    expect(reply.status).toBe('completed');
  }
  for (let r = 0; r < rounds; r++) {
    const replies = await Promise.allSettled(Array.from({ length: 32 }, (_, i) => client.getTask(agent, `tsk_round_${r}_${i}`)));
    // Each is the seller's "not found" (not a transport failure).
    for (const reply of replies) expect(reply.status === 'rejected' && /REFERENCE_NOT_FOUND|not found/i.test(String(reply.reason))).toBe(true);
  }
}

describe('abort listeners stay bounded over many calls', () => {
  it('MCP: 2,000 polls and lists and 100 calls on one cached session, some 32 at once', async () => {
    const agent: AgentEndpoint = { url: seller.url, protocol: 'mcp' };
    await drive(agent, 600, 100, 25);
    expect(created.length).toBeGreaterThan(2_000); // the recorder saw the calls' signals
    expect(mostListeners()).toBeLessThanOrEqual(BOUND);
  }, 180_000);

  it('A2A: 460 polls and lists and 50 calls, some 32 at once', async () => {
    const agent: AgentEndpoint = { url: seller.a2aUrl!, protocol: 'a2a' };
    const from = created.length;
    await drive(agent, 150, 50, 5);
    expect(mostListeners(from)).toBeLessThanOrEqual(BOUND);
  }, 180_000);
});
