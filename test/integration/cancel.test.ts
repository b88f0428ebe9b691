/**
 * POST /v1/operations/:id/cancel against the real sandbox seller over loopback:
 * a created media buy is canceled at the seller by a child update_media_buy; a
 * pending task is stopped here and the event says the seller was not told; an
 * ended operation has nothing to cancel; a viewer may not cancel. Each change
 * names who did it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';

describe('cancel', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;

  beforeAll(async () => {
    // A long review, so a submitted buy is still pending when the test cancels it.
    seller = await startSandboxSeller({ submittedDelayMs: 60_000, workingDelayMs: 300 });
    orch = await startOrchestrator();
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
  const actorName = async () => (await orch.app.store.tenants.listApiKeys(orch.tenantId))[0]!.name;

  it('a created media buy is canceled at the seller by its own child operation', async () => {
    const op = await buy('sandbox_instant');
    expect(op.status).toBe('completed');
    const mediaBuyId = op.result.media_buy_id;

    const res = await orch.api('POST', `/v1/operations/${op.id}/cancel`, { reason: 'campaign pulled' });
    expect(res.status).toBe(202);
    // The original stays completed: a terminal status never changes.
    expect(res.body.status).toBe('completed');
    const child = res.body.seller_cancel;
    expect(child).toMatchObject({ type: 'update_media_buy', parent_id: op.id });
    const done = await waitForStatus(orch, child.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.request).toMatchObject({ media_buy_id: mediaBuyId, canceled: true, cancellation_reason: 'campaign pulled', account: { account_id: 'acc_test' } });
    expect(done.events[0]).toMatchObject({ kind: 'created', actor: await actorName() });

    // The seller's own book shows the buy canceled.
    const booked = seller.mediaBuys().find((b) => b.media_buy_id === mediaBuyId);
    expect(booked).toMatchObject({ status: 'canceled', cancellation_reason: 'campaign pulled' });

    const original = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
    expect(original.status).toBe('completed');
    expect(original.events.at(-1)).toMatchObject({ kind: 'cancel_requested', source: 'user', actor: await actorName(), detail: { operation_id: child.id, media_buy_id: mediaBuyId } });

    // A second cancel names the first instead of canceling twice.
    const again = await orch.api('POST', `/v1/operations/${op.id}/cancel`, { reason: 'campaign pulled' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'already_canceling', details: { operation_id: child.id } });
  });

  it('a pending task is stopped here, and the event says the seller was not told', async () => {
    const op = await buy('sandbox_submitted');
    expect(op.status).toBe('submitted');
    const res = await orch.api('POST', `/v1/operations/${op.id}/cancel`, {});
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'canceled', next_check_at: null, needs_input: false });
    const shown = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
    const event = shown.events.at(-1);
    expect(event).toMatchObject({ kind: 'transition', source: 'user', from: 'submitted', to: 'canceled', actor: await actorName() });
    expect(event.detail.reason).toBe(`canceled by ${await actorName()}`);
    expect(event.detail.seller).toMatch(/seller was not told/);
    // No child: AdCP 3.0 has no call that cancels a pending task.
    expect(await orch.app.store.operations.childrenOf(op.id)).toEqual([]);
  });

  it('an operation that already ended otherwise has nothing to cancel: 409, nothing changes', async () => {
    const op = await buy('sandbox_rejected');
    expect(op.status).toBe('rejected');
    const before = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
    const res = await orch.api('POST', `/v1/operations/${op.id}/cancel`, { reason: 'x' });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'not_cancelable', details: { status: 'rejected' } });
    expect((await orch.api('GET', `/v1/operations/${op.id}`)).body).toEqual(before);
  });

  it('bad input and unknown ids are refused and change nothing', async () => {
    const op = await buy('sandbox_submitted');
    const empty = await orch.api('POST', `/v1/operations/${op.id}/cancel`, { reason: '' });
    expect(empty.status).toBe(400);
    const extra = await orch.api('POST', `/v1/operations/${op.id}/cancel`, { reason: 'ok', force: true });
    expect(extra.status).toBe(400);
    expect((await orch.api('GET', `/v1/operations/${op.id}`)).body.status).toBe('submitted');
    const unknown = await orch.api('POST', `/v1/operations/00000000-0000-4000-8000-000000000000/cancel`, {});
    expect(unknown.status).toBe(404);
  });

  it('a viewer may not cancel: 403, nothing changes', async () => {
    const op = await buy('sandbox_submitted');
    const viewerKey = await orch.app.store.tenants.createApiKey(orch.tenantId, { name: 'watcher', role: 'viewer' });
    const res = await orch.api('POST', `/v1/operations/${op.id}/cancel`, {}, { authorization: `Bearer ${viewerKey}` });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    const shown = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
    expect(shown.status).toBe('submitted');
    expect(shown.events.some((e: { actor: string | null }) => e.actor === 'watcher')).toBe(false);
  });
});
