/**
 * Retries, the circuit breaker and deadlines, against the sandbox seller over
 * loopback: what is retried (transient), what is not (correctable), how long
 * it waits (never before retry_after), and that waiting is not failing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller, type SandboxSellerOptions } from '../../src/sandbox/seller.js';
import { mediaBuyRequest, statusPath } from '../helpers/media-buy.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { freePort } from '../helpers/ports.js';

let seller: SandboxSeller | undefined;
let orch: TestOrchestrator | undefined;
afterEach(async () => {
  await orch?.close();
  await seller?.close();
  orch = seller = undefined;
});

async function setUp(sellerOpts: SandboxSellerOptions = {}, env: Record<string, string> = {}) {
  seller = await startSandboxSeller(sellerOpts);
  orch = await startOrchestrator({ env });
  const agentId = await orch.registerAgent({ url: seller.url });
  return { seller, orch, agentId };
}

const buy = (o: TestOrchestrator, agentId: string, product: string) =>
  o.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(product), webhook: 'none' }).then((r) => r.body);

const metric = async (o: TestOrchestrator, pattern: RegExp) => {
  const m = pattern.exec(await (await fetch(`${o.url}/metrics`)).text());
  return m ? Number(m[1]) : undefined;
};

describe('retries', () => {
  it('RATE_LIMITED with retry_after is retried with the same key, never before retry_after', async () => {
    const { seller, orch, agentId } = await setUp({ flakyFailures: 2 });
    const op = await buy(orch, agentId, 'sandbox_flaky_429');
    const done = await waitForStatus(orch, op.id, ['completed']);
    expect(seller.stats().createCallsByKey[done.idempotency_key]).toBe(3);
    expect(seller.stats().mediaBuysCreatedByKey[done.idempotency_key]).toBe(1);
    const failures = done.events.filter((e: any) => e.kind === 'send_failed');
    expect(failures).toHaveLength(2);
    for (const f of failures) {
      expect(f.detail.error.code).toBe('RATE_LIMITED');
      expect(f.detail.retry_in_ms).toBeGreaterThanOrEqual(1000);
    }
    // The resend after each failure came at least retry_after (1 s) later.
    const resends = done.events.filter((e: any) => e.kind === 'resend');
    expect(resends).toHaveLength(2);
    expect(Date.parse(resends[0].at) - Date.parse(failures[0].at)).toBeGreaterThanOrEqual(1000);
    expect(Date.parse(resends[1].at) - Date.parse(failures[1].at)).toBeGreaterThanOrEqual(1000);
    expect(done.result.media_buy_id).toMatch(/^mb_/);
  });

  it('HTTP 5xx is retried with identical bytes until it succeeds', async () => {
    const { seller, orch, agentId } = await setUp({ flakyFailures: 2 });
    const op = await buy(orch, agentId, 'sandbox_flaky_500');
    const done = await waitForStatus(orch, op.id, ['completed']);
    expect(done.events.filter((e: any) => e.kind === 'send_failed')).toHaveLength(2);
    expect(seller.stats().mediaBuysCreatedByKey[done.idempotency_key]).toBe(1);
    expect(statusPath(done)).toEqual(['requested', 'calling_adcp', 'completed']);
  });

  it('a correctable error is not retried', async () => {
    const { seller, orch, agentId } = await setUp();
    const op = await buy(orch, agentId, 'sandbox_failed');
    expect(op.status).toBe('failed');
    expect(op.error.recovery).toBe('correctable');
    await new Promise((r) => setTimeout(r, 500));
    const after = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
    expect(after.events.some((e: any) => e.kind === 'send_failed' || e.kind === 'resend')).toBe(false);
    expect(seller.stats().createCallsByKey[op.idempotency_key]).toBe(1);
  });

  it('when the retry budget is spent the send is unknown and stalled, not failed', async () => {
    const { orch, agentId } = await setUp({ flakyFailures: 50 }, { ADCP_ORCH_RETRY_ATTEMPTS: '2' });
    const op = await buy(orch, agentId, 'sandbox_flaky_500');
    const stalled = await eventually(async () => {
      const o = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
      return o.stalled ? o : undefined;
    });
    expect(stalled.status).toBe('unknown');
    expect(stalled.stalled_reason).toMatch(/no progress after 2 attempts/);
    expect(stalled.events.filter((e: any) => e.kind === 'send_failed')).toHaveLength(2);
    // Still scheduled: reconciled slowly, not given up.
    expect(stalled.next_check_at).not.toBeNull();
    expect((await orch.api('GET', '/v1/operations?stalled=true')).body.operations.map((o: any) => o.id)).toContain(op.id);
  });
});

describe('ambiguous sends past the replay window', () => {
  const stalledOp = (o: TestOrchestrator, id: string) =>
    eventually(async () => {
      const op = (await o.api('GET', `/v1/operations/${id}`)).body;
      return op.stalled ? op : undefined;
    });

  it('a buy the seller did make is found by natural key and never bought twice', async () => {
    // lost_reply: the seller creates the buy, then answers 500.
    const { seller, orch, agentId } = await setUp({}, { ADCP_ORCH_REPLAY_WINDOW_MS: '300' });
    const op = await buy(orch, agentId, 'sandbox_lost_reply');
    const stalled = await stalledOp(orch, op.id);
    expect(stalled.status).toBe('unknown');
    const created = Object.keys(seller.stats().mediaBuysCreatedByKey);
    expect(created).toEqual([stalled.idempotency_key]);
    expect(stalled.stalled_reason).toMatch(/may be this one \(mb_/);
    expect(stalled.next_check_at).toBeNull();
    expect(seller.stats().createCallsByKey[stalled.idempotency_key]).toBe(1);
  });

  it('when the seller has no such buy, the resend goes ahead and completes', async () => {
    // flaky_500 with one failure: nothing executed before the 500.
    const { seller, orch, agentId } = await setUp({ flakyFailures: 1 }, { ADCP_ORCH_REPLAY_WINDOW_MS: '300' });
    const op = await buy(orch, agentId, 'sandbox_flaky_500');
    const done = await waitForStatus(orch, op.id, ['completed']);
    const resend = done.events.find((e: any) => e.kind === 'resend');
    expect(resend.detail.lookup).toMatch(/no matching media buy/);
    expect(seller.stats().mediaBuysCreatedByKey[done.idempotency_key]).toBe(1);
  });
});

describe('circuit breaker', () => {
  it('opens after consecutive failures, makes work wait instead of failing, and closes after a good probe', async () => {
    const port = await freePort();
    orch = await startOrchestrator({ env: { ADCP_ORCH_BREAKER_THRESHOLD: '2', ADCP_ORCH_BREAKER_HALF_OPEN_MS: '3000', ADCP_ORCH_RETRY_ATTEMPTS: '20' } });
    const agentId = await orch.registerAgent({ name: 'down-seller', url: `http://127.0.0.1:${port}/mcp` });
    const ops = await Promise.all([1, 2, 3].map(() => buy(orch!, agentId, 'sandbox_instant')));
    const open = /adcp_orch_circuit_state\{agent="down-seller"\} (\d+)/;
    await eventually(async () => ((await metric(orch!, open)) === 2 ? true : undefined));
    for (const op of ops) {
      const o = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
      expect(['calling_adcp', 'requested']).toContain(o.status);
    }
    // While open, calls stop: the number of failures recorded stays put.
    const countFailures = async () => {
      let n = 0;
      for (const op of ops) n += (await orch!.api('GET', `/v1/operations/${op.id}`)).body.events.filter((e: any) => e.kind === 'send_failed').length;
      return n;
    };
    const whileOpen = await countFailures();
    await new Promise((r) => setTimeout(r, 700));
    expect(await countFailures()).toBe(whileOpen);

    // The seller comes up on that port; the half-open probe succeeds and everything completes.
    seller = await startSandboxSeller({ port });
    for (const op of ops) await waitForStatus(orch, op.id, ['completed'], 30_000);
    expect(await metric(orch, open)).toBe(0);
  });
});

describe('deadlines and reminders', () => {
  it('a passed deadline marks the operation stalled, counts a timeout, and invents no seller failure', async () => {
    const { orch, agentId } = await setUp({}, { ADCP_ORCH_DEADLINES_MS: '{"create_media_buy":1500}', ADCP_ORCH_BACKUP_POLL_AFTER_MS: '60000' });
    const op = await buy(orch, agentId, 'sandbox_input_required');
    expect(op.status).toBe('input-required');
    const stalled = await eventually(async () => {
      const o = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
      return o.stalled ? o : undefined;
    });
    expect(stalled.status).toBe('input-required');
    expect(stalled.stalled_reason).toMatch(/deadline passed/);
    expect(stalled.events.filter((e: any) => e.kind === 'deadline_passed')).toHaveLength(1);
    expect(Date.parse(stalled.events.find((e: any) => e.kind === 'deadline_passed').at)).toBeGreaterThanOrEqual(Date.parse(op.created_at) + 1500);
    expect(await metric(orch, /adcp_orch_operations_timed_out_total\{type="create_media_buy"\} (\d+)/)).toBe(1);
  });

  it('reminds when input-required has waited past the reminder time, then again only after twice as long', async () => {
    const { orch, agentId } = await setUp({}, { ADCP_ORCH_INPUT_REMINDER_MS: '600' });
    const op = await buy(orch, agentId, 'sandbox_input_required');
    const reminded = await eventually(async () => {
      const o = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
      return o.events.some((e: any) => e.kind === 'reminder') ? o : undefined;
    });
    const first = reminded.events.find((e: any) => e.kind === 'reminder');
    const later = await eventually(async () => {
      const o = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
      return o.events.filter((e: any) => e.kind === 'reminder').length >= 2 ? o : undefined;
    });
    const second = later.events.filter((e: any) => e.kind === 'reminder')[1];
    expect(Date.parse(second.at) - Date.parse(first.at)).toBeGreaterThanOrEqual(1200);
    expect(reminded.status).toBe('input-required');
  });

  it('rejects a bad deadline configuration with a clear message', async () => {
    const { loadConfig, ConfigError } = await import('../../src/config.js');
    expect(() => loadConfig({ ADCP_ORCH_DEADLINES_MS: '{"create_media_buy": -5}' })).toThrow(ConfigError);
    expect(() => loadConfig({ ADCP_ORCH_DEADLINES_MS: 'nope' })).toThrow(/ADCP_ORCH_DEADLINES_MS: must be a JSON object/);
    expect(() => loadConfig({ ADCP_ORCH_POLL_INTERVAL_MS: 'soon' })).toThrow(/ADCP_ORCH_POLL_INTERVAL_MS/);
  });
});
