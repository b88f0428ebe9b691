/**
 * An MCP seller that answers `input-required` with no `task_id` (the sandbox product
 * sandbox_input_required_untracked), over real HTTP on loopback. There is nothing to poll
 * and a resend would only ask again, so the operation is sent once and waits for its
 * person: across many backup-poll and poll intervals (100 ms here) the seller's call log
 * shows one create_media_buy for the key, while the request's own clock (reminders every
 * 200 ms, then doubling) keeps running. The seller's reason and message are what the
 * person is shown, and their answer is taken.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { UNTRACKED_INPUT_MESSAGE } from '../../src/sandbox/behaviours.js';
import { INPUT_TIMER_CHECK } from '../../src/engine/input-timers.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';

const PRODUCT = 'sandbox_input_required_untracked';

describe('an MCP input-required reply without a task id', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;
  let approver: string;

  beforeAll(async () => {
    seller = await startSandboxSeller({ port: 0 });
    orch = await startOrchestrator({
      env: { ADCP_ORCH_POLL_INTERVAL_MS: '100', ADCP_ORCH_BACKUP_POLL_AFTER_MS: '100', ADCP_ORCH_INPUT_REMINDER_MS: '200' },
    });
    agentId = await orch.registerAgent({ name: 'seller-mcp', url: seller.url, protocol: 'mcp' });
    approver = await orch.app.store.tenants.createApiKey(orch.tenantId, { name: 'alice', role: 'approver' });
  });
  afterAll(async () => {
    await orch?.close();
    await seller?.close();
  });

  const show = async (id: string) => (await orch.api('GET', `/v1/operations/${id}`)).body;
  const answer = (id: string, body: unknown) => orch.api('POST', `/v1/operations/${id}/input`, body, { authorization: `Bearer ${approver}` });
  const createCalls = (key: string) => seller.stats().calls.filter((c) => c.tool === 'create_media_buy' && c.idempotency_key === key).length;

  /** A buy that the seller answers with a question and no task id, once it has been reminded about `reminders` times. */
  async function askedAndWaited(webhook: 'rfc9421' | 'none', reminders: number) {
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(PRODUCT), webhook });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const op = res.body;
    expect(op).toMatchObject({ status: 'input-required', needs_input: true, task_id: null });
    // What the seller said is what the person is shown: its reason code and its message.
    expect(op.input_request).toMatchObject({
      kind: 'seller_input',
      reason: 'APPROVAL_REQUIRED',
      seller_status: 'input-required',
      message: UNTRACKED_INPUT_MESSAGE,
      allowed: ['reject', 'respond'],
    });
    // The request's clock runs (reminders at 200, 600, 1400 ms…): many poll intervals pass meanwhile.
    const waited = await eventually(async () => {
      const now = await show(op.id);
      return now.events.filter((e: any) => e.kind === 'reminder').length >= reminders ? now : undefined;
    }, 20_000);
    return { op, waited };
  }

  /** Sent once, still asking the very same question (same id, same requested_at), its timer the request's clock alone. */
  async function expectSentOnceAndWaiting(op: any, waited: any) {
    expect(createCalls(op.idempotency_key)).toBe(1);
    expect(waited.events.filter((e: any) => e.kind === 'resend' || e.to === 'calling_adcp').map((e: any) => e.kind)).toEqual(['transition']);
    expect(waited.status).toBe('input-required');
    expect(waited.input_request).toEqual(op.input_request);
    const row = await orch.app.store.operations.get(op.id);
    expect(row?.check_kind).toBe(INPUT_TIMER_CHECK);
    // Nothing was ever polled for it, either.
    expect(seller.stats().calls.filter((c) => c.tool !== 'create_media_buy' && c.idempotency_key === op.idempotency_key)).toEqual([]);
  }

  it('is sent once and waits for the person (backup poll every 100 ms); a reject is taken and nothing is bought', async () => {
    const { op, waited } = await askedAndWaited('rfc9421', 3);
    await expectSentOnceAndWaiting(op, waited);

    const res = await answer(op.id, { decision: 'reject', message: 'not this quarter', question_id: op.input_request.id });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ status: 'rejected', needs_input: false, input_request: null, next_check_at: null });
    const done = await show(op.id);
    expect(done.events.find((e: any) => e.kind === 'answered')).toMatchObject({
      actor: 'alice',
      detail: { decision: 'reject', message: 'not this quarter', question_id: op.input_request.id },
    });
    expect(done.error).toMatchObject({ code: 'REJECTED_BY_BUYER' });
    expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key] ?? 0).toBe(0);
    expect(createCalls(op.idempotency_key)).toBe(1);
  });

  it('is sent once and waits for the person (polling every 100 ms); approve has no continuation, and respond is taken: one corrected buy', async () => {
    const { op, waited } = await askedAndWaited('none', 2);
    await expectSentOnceAndWaiting(op, waited);

    // Over MCP there is no task to approve on: refused, and nothing changes.
    const approve = await answer(op.id, { decision: 'approve', question_id: op.input_request.id });
    expect(approve.status).toBe(409);
    expect(approve.body.error.code).toBe('no_continuation');
    expect((await show(op.id)).input_request).toEqual(op.input_request);

    // The person approves it the way MCP allows: the request again, corrected, under a new key.
    const params = { packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_std', budget: 4321 }] };
    const res = await answer(op.id, { decision: 'respond', message: 'IO signed; book it', params, question_id: op.input_request.id });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const child = await waitForStatus(orch, res.body.id, ['completed', 'failed']);
    expect(child).toMatchObject({ status: 'completed', parent_id: op.id });
    expect(child.idempotency_key).not.toBe(op.idempotency_key);
    const original = await show(op.id);
    expect(original).toMatchObject({ status: 'canceled', needs_input: false });
    expect(original.events.find((e: any) => e.kind === 'answered')).toMatchObject({ actor: 'alice', detail: { decision: 'respond', question_id: op.input_request.id } });
    // One buy, under the child's key; the question's own key was sent once and bought nothing.
    expect(seller.stats().mediaBuysCreatedByKey[child.idempotency_key]).toBe(1);
    expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key] ?? 0).toBe(0);
    expect(createCalls(op.idempotency_key)).toBe(1);
  });
});
