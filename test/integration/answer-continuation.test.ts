/**
 * A person's answer on the seller's A2A continuation, when the send goes wrong:
 * the reply is lost after the seller acted (ambiguous: look, do not resend), the
 * message never arrived (look, then resend the same message), the seller no
 * longer takes answers on the task (wait for a person again); and `auth-required`
 * retried after the agent's credentials are updated. The sandbox seller's own
 * records prove each answer was taken exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { startContinuationFaultProxy, type ContinuationFaultProxy } from '../helpers/continuation-fault-proxy.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';

const FRESH = 'fresh-token-0123456789';

describe('answers on the A2A continuation', () => {
  let seller: SandboxSeller;
  let proxy: ContinuationFaultProxy;
  let orch: TestOrchestrator;
  let a2aAgent: string;
  let mcpAgent: string;
  let adminName: string;

  beforeAll(async () => {
    seller = await startSandboxSeller({ submittedDelayMs: 300, freshToken: FRESH });
    proxy = await startContinuationFaultProxy(seller.origin);
    // Slow polling: nothing but the answer's own sender looks at these tasks during a test.
    orch = await startOrchestrator({ env: { ADCP_ORCH_POLL_INTERVAL_MS: '60000' } });
    a2aAgent = await orch.registerAgent({ name: 'a2a-via-proxy', url: `${proxy.origin}/a2a`, protocol: 'a2a' });
    mcpAgent = await orch.registerAgent({ name: 'mcp', url: seller.url, protocol: 'mcp' });
    adminName = (await orch.app.store.tenants.listApiKeys(orch.tenantId))[0]!.name;
  });
  afterAll(async () => {
    await orch?.close();
    await proxy?.close();
    await seller?.close();
  });

  const buy = async (agentId: string, productId: string) => {
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(productId), webhook: 'none' });
    expect(res.status).toBe(202);
    return res.body;
  };
  const kinds = (op: any) => op.events.map((e: any) => e.kind);
  const takenBySeller = (taskId: string) => seller.stats().continuations.filter((c) => c.task_id === taskId).map((c) => c.outcome);
  const sentThroughProxy = (a2aTaskId: string) => proxy.seen.filter((s) => s.taskId === a2aTaskId);

  it('a lost reply is ambiguous: the task is looked at before anything is resent, and the answer is taken once', async () => {
    const op = await buy(a2aAgent, 'sandbox_input_required');
    expect(op.input_request.allowed).toContain('approve');
    proxy.spoilNext('lose-reply');
    const res = await orch.api('POST', `/v1/operations/${op.id}/input`, { decision: 'approve' });
    expect(res.status).toBe(202);
    const done = await waitForStatus(orch, op.id, ['completed', 'failed', 'rejected']);
    expect(done.status).toBe('completed');
    expect(kinds(done)).toEqual(['created', 'transition', 'transition', 'answered', 'answer_sent', 'answer_send_failed', 'transition']);
    // What moved it on is the look (a poll of the AdCP task), not a second answer.
    expect(done.events.at(-1)).toMatchObject({ source: 'poll', from: 'input-required', to: 'completed' });
    // The continuation is forgotten once the task no longer waits: nothing can be sent on it again.
    expect((await orch.app.store.operations.get(op.id))!.continuation).toBeNull();
    expect(takenBySeller(op.task_id)).toEqual(['completed']);
    expect(proxy.seen.filter((s) => s.fault === 'lose-reply')).toHaveLength(1);
    const sends = proxy.seen.filter((s) => s.messageId === done.events.find((e: any) => e.kind === 'answer_sent').detail.message_id);
    expect(sends).toHaveLength(1);
    expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
  });

  it('a message that never arrived is resent as the same message after looking', async () => {
    const op = await buy(a2aAgent, 'sandbox_input_required');
    proxy.spoilNext('drop-request');
    const res = await orch.api('POST', `/v1/operations/${op.id}/input`, { decision: 'respond', params: { po_number: 'PO-42' } });
    expect(res.status).toBe(202);
    const done = await waitForStatus(orch, op.id, ['completed', 'failed', 'rejected']);
    expect(done.status).toBe('completed');
    expect(kinds(done)).toEqual(['created', 'transition', 'transition', 'answered', 'answer_sent', 'answer_send_failed', 'answer_resent', 'transition']);
    const sent = done.events.find((e: any) => e.kind === 'answer_sent').detail;
    const resent = done.events.find((e: any) => e.kind === 'answer_resent').detail;
    expect(resent.message_id).toBe(sent.message_id);
    const sends = sentThroughProxy(sent.a2a_task_id);
    expect(sends.map((s) => [s.messageId, s.fault])).toEqual([
      [sent.message_id, 'drop-request'],
      [sent.message_id, 'passed'],
    ]);
    expect(takenBySeller(op.task_id)).toEqual(['completed']);
    expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
  });

  it('a continuation the seller refuses (the task no longer waits) leaves the operation waiting for a person, without one', async () => {
    const op = await buy(a2aAgent, 'sandbox_input_required');
    // Answered out of band first, on the seller's own channel: its task ends, the A2A task is stale.
    expect(seller.setTaskStatus(op.task_id, 'working', { message: 'answered elsewhere' })).toBe(true);
    const res = await orch.api('POST', `/v1/operations/${op.id}/input`, { decision: 'approve' });
    expect(res.status).toBe(202);
    const waiting = await eventually(async () => {
      const shown = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
      return shown.needs_input ? shown : undefined;
    });
    expect(waiting.status).toBe('input-required');
    expect(waiting.input_request).toMatchObject({ kind: 'seller_input', allowed: ['reject', 'respond'] });
    expect(waiting.events.at(-1)).toMatchObject({ kind: 'continuation_refused', detail: { error: { code: 'JSONRPC_-32600' } } });
    expect(takenBySeller(op.task_id)).toEqual(['refused']);
    // Only respond (a new request) or reject remain; approve has no continuation to go on.
    expect((await orch.api('POST', `/v1/operations/${op.id}/input`, { decision: 'approve' })).body.error.code).toBe('no_continuation');
  });

  describe('auth-required', () => {
    it('is answered by new credentials: PATCH the agent (admin only) and the A2A task is resumed on its continuation', async () => {
      const op = await buy(a2aAgent, 'sandbox_auth_required');
      expect(op).toMatchObject({ status: 'auth-required', needs_input: true, input_request: { kind: 'seller_input', reason: 'auth-required', allowed: ['reject'] } });
      const approve = await orch.api('POST', `/v1/operations/${op.id}/input`, { decision: 'approve' });
      expect(approve.status).toBe(409);
      expect(approve.body.error).toMatchObject({ code: 'decision_not_allowed' });
      expect(approve.body.error.message).toMatch(/PATCH \/v1\/agents/);

      const viewer = await orch.app.store.tenants.createApiKey(orch.tenantId, { name: 'auth-viewer', role: 'viewer' });
      const forbidden = await orch.api('PATCH', `/v1/agents/${a2aAgent}`, { auth: { scheme: 'bearer', token: FRESH } }, { authorization: `Bearer ${viewer}` });
      expect(forbidden.status).toBe(403);
      expect((await orch.api('PATCH', `/v1/agents/${a2aAgent}`, { auth: { scheme: 'basic', token: FRESH } })).status).toBe(400);

      const patched = await orch.api('PATCH', `/v1/agents/${a2aAgent}`, { auth: { scheme: 'bearer', token: FRESH } });
      expect(patched.status).toBe(200);
      expect(patched.body.auth).toEqual({ scheme: 'bearer', token_set: true });
      expect(JSON.stringify(patched.body)).not.toContain(FRESH);
      expect(patched.body.retried_operations).toEqual([op.id]);
      const stored = await orch.app.store.agents.get(a2aAgent);
      expect(stored!.auth_token_enc).not.toContain(FRESH);

      const done = await waitForStatus(orch, op.id, ['completed', 'failed', 'rejected', 'canceled']);
      expect(done.status).toBe('completed');
      expect(done.events.find((e: any) => e.kind === 'answered')).toMatchObject({ actor: adminName, detail: { decision: 'approve' } });
      expect(takenBySeller(op.task_id)).toEqual(['completed']);
      expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
    });

    it('over MCP (no continuation) the permitted new attempt is a new operation with a new key; the original is superseded', async () => {
      const op = await buy(mcpAgent, 'sandbox_auth_required');
      expect(op.status).toBe('auth-required');
      const patched = await orch.api('PATCH', `/v1/agents/${mcpAgent}`, { auth: { scheme: 'bearer', token: FRESH } });
      expect(patched.status).toBe(200);
      const [childId] = patched.body.retried_operations;
      expect(childId).not.toBe(op.id);
      const child = await waitForStatus(orch, childId, ['completed', 'failed', 'auth-required']);
      expect(child).toMatchObject({ status: 'completed', parent_id: op.id });
      expect(child.idempotency_key).not.toBe(op.idempotency_key);
      const original = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
      expect(original.status).toBe('canceled');
      expect(original.events.find((e: any) => e.to === 'canceled')).toMatchObject({ actor: adminName, detail: { reason: 'superseded', superseded_by: childId } });
      expect(seller.stats().mediaBuysCreatedByKey[child.idempotency_key]).toBe(1);
      expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBeUndefined();
    });
  });
});
