/**
 * One test per sandbox seller behaviour, over real HTTP on loopback: the
 * orchestrator's status path and the stored result or error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { mediaBuyRequest, statusPath } from '../helpers/media-buy.js';

describe('sandbox behaviours through the orchestrator (polling, no webhooks)', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;

  beforeAll(async () => {
    seller = await startSandboxSeller({ submittedDelayMs: 300, workingDelayMs: 300 });
    // No start-up reconciliation: its first run lands at a random moment in the first 5 s and,
    // when a task has just finished at the seller, rightly polls it at once ("missing_from_server"),
    // which made the working-timeout test below fail now and then.
    orch = await startOrchestrator({ env: { ADCP_ORCH_RECONCILE_INTERVAL_MS: '0' } });
    agentId = await orch.registerAgent({ url: seller.url });
  });
  afterAll(async () => {
    await orch?.close();
    await seller?.close();
  });

  const buy = async (productId: string) => {
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(productId), webhook: 'none' });
    expect(res.status).toBe(202);
    return res.body;
  };

  it('completed at once: the first answer already carries the media buy', async () => {
    const op = await buy('sandbox_instant');
    expect(op.status).toBe('completed');
    const full = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
    expect(statusPath(full)).toEqual(['requested', 'calling_adcp', 'completed']);
    expect(full.result.media_buy_id).toMatch(/^mb_/);
    expect(full.task_id).toBeNull();
    expect(full.next_check_at).toBeNull();
  });

  it('submitted, then completed by polling', async () => {
    const op = await buy('sandbox_submitted');
    expect(op.status).toBe('submitted');
    expect(op.task_id).toBeTruthy();
    const done = await waitForStatus(orch, op.id, ['completed']);
    expect(statusPath(done)).toEqual(['requested', 'calling_adcp', 'submitted', 'completed']);
    expect(done.events.at(-1).source).toBe('poll');
    expect(done.result.media_buy_id).toMatch(/^mb_/);
    expect(seller.stats().pollsByTask[op.task_id]).toBeGreaterThan(0);
  });

  it('working, left alone until the working timeout, then polled to completed', async () => {
    const op = await buy('sandbox_working');
    expect(op.status).toBe('working');
    const done = await waitForStatus(orch, op.id, ['completed']);
    expect(statusPath(done)).toEqual(['requested', 'calling_adcp', 'working', 'completed']);
    // No poll before the working timeout (1 s in tests) had passed.
    const polls = seller.stats().pollLog.filter((p) => p.task_id === op.task_id);
    const workingAt = Date.parse(done.events.find((e: any) => e.to === 'working').at);
    expect(polls.length).toBeGreaterThan(0);
    for (const p of polls) expect(Date.parse(p.at)).toBeGreaterThanOrEqual(workingAt + 1000);
  });

  it('input-required waits with needs_input set until the buyer answers, then completes', async () => {
    const op = await buy('sandbox_input_required');
    expect(op.status).toBe('input-required');
    expect(op.needs_input).toBe(true);
    expect(op.input_message).toBeTruthy();
    const listed = await orch.api('GET', '/v1/operations?needs_input=true');
    expect(listed.body.operations.map((o: any) => o.id)).toContain(op.id);
    // Still waiting a while later: nothing moves without the buyer.
    await new Promise((r) => setTimeout(r, 600));
    expect((await orch.api('GET', `/v1/operations/${op.id}`)).body.status).toBe('input-required');
    // The person answers through the seller's channel; the orchestrator notices.
    expect(seller.setTaskStatus(op.task_id, 'completed', { result: { media_buy_id: 'mb_answered', packages: [] } })).toBe(true);
    const done = await waitForStatus(orch, op.id, ['completed']);
    expect(done.needs_input).toBe(false);
    expect(statusPath(done)).toEqual(['requested', 'calling_adcp', 'input-required', 'completed']);
    expect(done.result.media_buy_id).toBe('mb_answered');
  });

  it('auth-required is kept as auth-required (not mapped to completed)', async () => {
    const op = await buy('sandbox_auth_required');
    expect(op.status).toBe('auth-required');
    expect(op.needs_input).toBe(true);
  });

  it('rejected is terminal and keeps the reason', async () => {
    const op = await buy('sandbox_rejected');
    expect(op.status).toBe('rejected');
    const full = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
    expect(statusPath(full)).toEqual(['requested', 'calling_adcp', 'rejected']);
    expect(full.error.message).toBeTruthy();
    expect(full.next_check_at).toBeNull();
  });

  it('failed with an AdCP error stores code and recovery', async () => {
    const op = await buy('sandbox_failed');
    expect(op.status).toBe('failed');
    expect(op.error).toMatchObject({ code: 'BUDGET_TOO_LOW', recovery: 'correctable' });
    const metrics = await (await fetch(`${orch.url}/metrics`)).text();
    expect(metrics).toMatch(/adcp_orch_agent_errors_total\{agent="seller",code="BUDGET_TOO_LOW"\} 1/);
  });

  it('sends the same idempotency_key it stored, and the seller creates one buy per key', async () => {
    const op = await buy('sandbox_instant');
    const full = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
    expect(full.request.idempotency_key).toBe(full.idempotency_key);
    expect(seller.stats().createCallsByKey[full.idempotency_key]).toBe(1);
  });

  it('a client retrying with its Idempotency-Key after we lost the answer reaches the same operation', async () => {
    const body = { agent_id: agentId, request: mediaBuyRequest('sandbox_submitted'), webhook: 'none' };
    const first = await orch.api('POST', '/v1/media-buys', body, { 'idempotency-key': 'client-retry-1' });
    // As if we had died before recording our answer to the client.
    await orch.app.store.db.kysely.deleteFrom('api_idempotency').execute();
    const again = await orch.api('POST', '/v1/media-buys', body, { 'idempotency-key': 'client-retry-1' });
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(seller.stats().createCallsByKey[first.body.idempotency_key]).toBe(1);
    const changed = await orch.api('POST', '/v1/media-buys', { ...body, request: mediaBuyRequest('sandbox_instant') }, { 'idempotency-key': 'client-retry-1' });
    expect(changed.status).toBe(409);
    await orch.app.store.db.kysely.deleteFrom('api_idempotency').execute();
    const changedAfterLoss = await orch.api('POST', '/v1/media-buys', { ...body, request: mediaBuyRequest('sandbox_instant') }, { 'idempotency-key': 'client-retry-1' });
    expect(changedAfterLoss.status).toBe(409);
    expect(changedAfterLoss.body.error.code).toBe('idempotency_conflict');
  });
});
