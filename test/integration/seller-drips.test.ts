/**
 * A seller that drips its replies, through the whole orchestrator over real HTTP on
 * loopback, over MCP and A2A: every call given up at the call timeout is hung up on
 * (the seller sees its socket close), and however many operations are sent (resends
 * included), the seller never holds more of our connections than the agent's bulkhead
 * allows. Calls the bulkhead refuses are not lost: they stay due and are sent later.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mostAtOnce, startHostileSeller, type HostileSeller } from '../helpers/hostile-seller.js';
import { eventually, startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';

const CALL_TIMEOUT_MS = 800;
const BOUND = 2;
const OPERATIONS = 8;
/** How soon after a call's deadline the seller must see its socket close. */
const HANG_UP_SLACK_MS = 1_000;

let seller: HostileSeller | undefined;
let orch: TestOrchestrator | undefined;
afterEach(async () => {
  await orch?.close();
  await seller?.close();
  orch = seller = undefined;
});

describe.each(['mcp', 'a2a'] as const)('a dripping seller over %s', (protocol) => {
  it('is hung up on at each timeout, and holds at most the bulkhead bound of our connections', async () => {
    seller = await startHostileSeller({ dripEveryMs: 50 });
    seller.set('get_products', 'drip');
    orch = await startOrchestrator({
      env: {
        ADCP_ORCH_CALL_TIMEOUT_MS: String(CALL_TIMEOUT_MS),
        ADCP_ORCH_AGENT_MAX_CONCURRENT_CALLS: String(BOUND),
        ADCP_ORCH_AGENT_MAX_QUEUED_CALLS: '1',
        ADCP_ORCH_SYNC_WAIT_MS: '0',
        // Timeouts are the seller's failures; here they must neither end the operations nor stop the calls.
        ADCP_ORCH_RETRY_ATTEMPTS: '20',
        ADCP_ORCH_BREAKER_THRESHOLD: '1000',
      },
    });
    const agentId = await orch.registerAgent({ url: protocol === 'mcp' ? seller.mcpUrl : seller.a2aUrl, protocol });

    const ids: string[] = [];
    for (let i = 0; i < OPERATIONS; i++) {
      const res = await orch.api('POST', '/v1/operations', { agent_id: agentId, task: 'get_products', params: { buying_mode: 'brief', brief: `brief ${i}` }, webhook: 'none' });
      expect(res.status).toBe(202);
      ids.push(res.body.id);
    }
    // Every operation reaches the seller, those refused by the full bulkhead later on, and
    // the timed-out ones are sent again: more calls than the bound, over and over.
    const s = seller;
    await eventually(async () => (new Set(s.calls.map((c) => c.args.brief)).size === OPERATIONS ? true : undefined), 30_000);
    await s.waitForClosedDrips(OPERATIONS + BOUND);

    // Each call was hung up on at its deadline, not left to drip (the seller sees the close a
    // moment later: it reads it in a later turn of the event loop, slower on a loaded machine).
    for (const drip of s.closedDrips) expect(drip.openMs).toBeLessThan(CALL_TIMEOUT_MS + HANG_UP_SLACK_MS);
    expect(s.calls.length).toBeGreaterThan(OPERATIONS);
    // The bound is reached, never more calls run at once (the bulkhead's own test shows that
    // exactly), and the seller never holds more of our sockets than that: the bound, plus for
    // each slot the socket of the call just given up on if the seller has not yet read its
    // close when the next call arrives (it reads it in a later turn of its event loop, later
    // still on a loaded machine), plus the idle keep-alive ones of the handshake (MCP:
    // initialize, then the session's GET beside the first call; A2A: the agent card).
    // Without the bulkhead all the operations drip at once; without hanging up, ever more.
    expect(mostAtOnce(s.dripSpans)).toBeGreaterThanOrEqual(BOUND);
    expect(mostAtOnce(s.dripSpans)).toBeLessThanOrEqual(2 * BOUND);
    expect(mostAtOnce(s.socketSpans)).toBeLessThanOrEqual(2 * BOUND + 2);
    expect(s.dripping()).toBeLessThanOrEqual(2 * BOUND);

    // Nothing lost: every operation still waits to be sent again, on its durable timer.
    for (const id of ids) {
      const op = (await orch.api('GET', `/v1/operations/${id}`)).body;
      expect(op.status).toBe('calling_adcp');
      expect(op.next_check_at).not.toBeNull();
    }
    // A refusal is not the seller's failure: every failure counted is a timeout.
    const metrics = await (await fetch(`${orch.url}/metrics`)).text();
    expect(metrics).not.toMatch(/agent_errors_total\{[^}]*code="(?!timeout")/);
  });
});
