/**
 * People answering what an operation waits for (POST /v1/operations/:id/input),
 * against the real sandbox seller over loopback, on MCP and on A2A. The seller's
 * own log and book prove what was, and was not, bought; every answer is an event
 * naming the person (the key's name).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { dialects } from '../helpers/databases.js';

describe('answering input requests', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let mcpAgent: string;
  let a2aAgent: string;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    seller = await startSandboxSeller({ submittedDelayMs: 300, workingDelayMs: 300 });
    orch = await startOrchestrator();
    mcpAgent = await orch.registerAgent({ name: 'seller-mcp', url: seller.url, protocol: 'mcp' });
    a2aAgent = await orch.registerAgent({ name: 'seller-a2a', url: seller.a2aUrl!, protocol: 'a2a' });
    for (const [name, role] of [['alice', 'approver'], ['bob', 'approver'], ['vera', 'viewer'], ['otto', 'operator']] as const) {
      keys[name] = await orch.app.store.tenants.createApiKey(orch.tenantId, { name, role });
    }
  });
  afterAll(async () => {
    await orch?.close();
    await seller?.close();
  });

  const as = (who: string) => (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    orch.api(method, path, body, { authorization: `Bearer ${keys[who]}`, ...headers });
  const answer = (who: string, id: string, body: unknown, headers?: Record<string, string>) => as(who)('POST', `/v1/operations/${id}/input`, body, headers);
  const show = async (id: string) => (await orch.api('GET', `/v1/operations/${id}`)).body;
  /** What an answer could change (the timer of a waiting task moves as it is polled, so it is left out). */
  const essence = async (id: string) => {
    const { status, needs_input, input_request, events, result, error, request, idempotency_key } = await show(id);
    return { status, needs_input, input_request, events, result, error, request, idempotency_key };
  };
  const buy = async (agentId: string, productId: string, extra: Record<string, unknown> = {}) => {
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(productId), webhook: 'none', ...extra });
    expect(res.status).toBe(202);
    return res.body;
  };
  /** The notifications raised for an operation, as their types and bodies. */
  const notified = async (id: string) =>
    (await orch.app.store.notifications.after(orch.tenantId, 0, 10_000)).filter((n) => n.operation_id === id).map((n) => JSON.parse(n.body));
  const boughtWith = (idempotencyKey: string) => seller.stats().mediaBuysCreatedByKey[idempotencyKey] ?? 0;
  const createCalls = (idempotencyKey: string) => seller.stats().calls.filter((c) => c.tool === 'create_media_buy' && c.idempotency_key === idempotencyKey).length;

  describe('seller input over A2A (a verified continuation)', () => {
    it('shows the request with approve allowed, and approving on the continuation completes the buy', async () => {
      const op = await buy(a2aAgent, 'sandbox_input_required');
      expect(op).toMatchObject({ status: 'input-required', needs_input: true });
      expect(op.input_request).toMatchObject({ kind: 'seller_input', reason: 'input-required', allowed: ['approve', 'reject', 'respond'] });
      expect(op.input_request.message).toMatch(/insertion order/);
      expect(Date.parse(op.input_request.requested_at)).toBeGreaterThan(0);
      const waiting = (await orch.api('GET', '/v1/operations?needs_input=true')).body.operations.map((o: any) => o.id);
      expect(waiting).toContain(op.id);

      const res = await answer('alice', op.id, { decision: 'approve', message: 'IO signed' });
      expect(res.status).toBe(202);
      const done = await waitForStatus(orch, op.id, ['completed', 'failed', 'rejected']);
      expect(done.status).toBe('completed');
      expect(done.needs_input).toBe(false);
      expect(done.input_request).toBeNull();
      expect(done.result.media_buy_id).toMatch(/^mb_/);

      const answered = done.events.find((e: any) => e.kind === 'answered');
      expect(answered).toMatchObject({ source: 'user', actor: 'alice', detail: { kind: 'seller_input', decision: 'approve', message: 'IO signed' } });
      expect(done.events.find((e: any) => e.kind === 'answer_sent')).toBeTruthy();
      expect(done.events.at(-1)).toMatchObject({ kind: 'transition', from: 'input-required', to: 'completed', source: 'call' });

      // The seller took one answer on its task, made one buy for this key and was never sent the buy twice.
      const continuations = seller.stats().continuations.filter((c) => c.task_id === op.task_id);
      expect(continuations.map((c) => c.outcome)).toEqual(['completed']);
      expect(continuations[0]!.idempotency_key).toBe(op.idempotency_key);
      expect(boughtWith(op.idempotency_key)).toBe(1);
      expect(createCalls(op.idempotency_key)).toBe(1);
      expect(seller.mediaBuys().map((b) => b.media_buy_id)).toContain(done.result.media_buy_id);
    });

    it('respond sends the full corrected input on the continuation; the seller buys what the answer says, via submitted', async () => {
      const op = await buy(a2aAgent, 'sandbox_input_required');
      const params = {
        packages: [{ product_id: 'sandbox_input_required', pricing_option_id: 'cpm_std', budget: 12345 }],
        ext: { sandbox: { then: 'submitted' } },
      };
      const res = await answer('bob', op.id, { decision: 'respond', params });
      expect(res.status).toBe(202);
      const done = await waitForStatus(orch, op.id, ['completed', 'failed', 'rejected']);
      expect(done.status).toBe('completed');
      const path = done.events.filter((e: any) => e.kind === 'transition').map((e: any) => e.to);
      expect(path).toEqual(['calling_adcp', 'input-required', 'submitted', 'completed']);
      expect(done.events.find((e: any) => e.kind === 'answered')).toMatchObject({ actor: 'bob', detail: { decision: 'respond', params } });
      const booked = seller.mediaBuys().find((b) => b.media_buy_id === done.result.media_buy_id);
      expect(booked?.total_budget).toBe(12345);
      expect(boughtWith(op.idempotency_key)).toBe(1);
    });

    it('reject ends it rejected without a purchase, and says the seller was not told', async () => {
      const op = await buy(a2aAgent, 'sandbox_input_required');
      const booksBefore = seller.mediaBuys().length;
      const res = await answer('alice', op.id, { decision: 'reject', message: 'wrong flight dates' });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ status: 'rejected', needs_input: false, input_request: null, next_check_at: null });
      const shown = await show(op.id);
      expect(shown.events.find((e: any) => e.kind === 'answered')).toMatchObject({ actor: 'alice', detail: { decision: 'reject', message: 'wrong flight dates' } });
      expect(shown.events.find((e: any) => e.kind === 'transition' && e.to === 'rejected')).toMatchObject({ source: 'user', actor: 'alice' });
      expect(shown.events.at(-1)).toMatchObject({ kind: 'seller_not_told' });
      expect(shown.error).toMatchObject({ code: 'REJECTED_BY_BUYER', message: 'wrong flight dates' });
      // Nothing was bought, and no answer went to the seller's task.
      expect(boughtWith(op.idempotency_key)).toBe(0);
      expect(seller.mediaBuys().length).toBe(booksBefore);
      expect(seller.stats().continuations.filter((c) => c.task_id === op.task_id)).toEqual([]);
      expect(seller.getTask(op.task_id)?.status).toBe('input-required');
    });
  });

  describe('seller input over MCP (no continuation)', () => {
    it('offers reject and respond only; approve is 409 no_continuation and changes nothing', async () => {
      const op = await buy(mcpAgent, 'sandbox_input_required');
      expect(op.input_request).toMatchObject({ kind: 'seller_input', allowed: ['reject', 'respond'] });
      const before = await essence(op.id);
      const res = await answer('alice', op.id, { decision: 'approve' });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('no_continuation');
      expect(await essence(op.id)).toEqual(before);
    });

    it('respond with corrected params creates a child with a new idempotency_key that completes; the original ends canceled, superseded', async () => {
      const op = await buy(mcpAgent, 'sandbox_input_required');
      const params = { packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_std', budget: 777 }] };
      const res = await answer('alice', op.id, { decision: 'respond', message: 'use the instant product', params });
      expect(res.status).toBe(202);
      const child = res.body;
      expect(child.id).not.toBe(op.id);
      expect(child.parent_id).toBe(op.id);
      expect(child.idempotency_key).not.toBe(op.idempotency_key);
      expect(child.request.packages).toEqual(params.packages);
      expect(child.request.brand).toEqual(op.request.brand);
      expect(child.request.context.orchestrator_operation_id).toBe(child.id);
      const childDone = await waitForStatus(orch, child.id, ['completed', 'failed']);
      expect(childDone.status).toBe('completed');
      expect(childDone.events[0]).toMatchObject({ kind: 'created', actor: 'alice', detail: { parent_id: op.id } });

      const original = await show(op.id);
      expect(original).toMatchObject({ status: 'canceled', needs_input: false, input_request: null, next_check_at: null });
      expect(original.events.find((e: any) => e.kind === 'answered')).toMatchObject({ actor: 'alice', detail: { decision: 'respond', params } });
      expect(original.events.find((e: any) => e.kind === 'transition' && e.to === 'canceled')).toMatchObject({
        source: 'user',
        actor: 'alice',
        detail: { reason: 'superseded', superseded_by: child.id },
      });
      // One buy, under the child's key; the original request was never bought.
      expect(boughtWith(child.idempotency_key)).toBe(1);
      expect(boughtWith(op.idempotency_key)).toBe(0);
      expect(createCalls(op.idempotency_key)).toBe(1);

      // The same answer again by the same person is the same answer: the child again, nothing new.
      const again = await answer('alice', op.id, { decision: 'respond', message: 'use the instant product', params });
      expect(again.status).toBe(202);
      expect(again.body.id).toBe(child.id);
      expect(await orch.app.store.operations.childrenOf(op.id)).toHaveLength(1);
    });
  });

  describe('one answer per request', () => {
    it('a second, different answer is 409 not_waiting naming the first (who, what, when)', async () => {
      const op = await buy(a2aAgent, 'sandbox_input_required');
      const first = await answer('alice', op.id, { decision: 'reject', message: 'over budget' });
      expect(first.status).toBe(202);
      const second = await answer('bob', op.id, { decision: 'approve' });
      expect(second.status).toBe(409);
      expect(second.body.error.code).toBe('not_waiting');
      expect(second.body.error.message).toMatch(/alice already answered reject/);
      expect(second.body.error.details).toMatchObject({ status: 'rejected', answered: { actor: 'alice', decision: 'reject', message: 'over budget' } });
      expect(Date.parse(second.body.error.details.answered.at)).toBeGreaterThan(0);
      // Even the same words from someone else are a second answer.
      expect((await answer('bob', op.id, { decision: 'reject', message: 'over budget' })).status).toBe(409);
      expect((await show(op.id)).events.filter((e: any) => e.kind === 'answered')).toHaveLength(1);
    });

    it('an answer to an operation that never waited is 409 not_waiting', async () => {
      const op = await buy(mcpAgent, 'sandbox_instant');
      const res = await answer('alice', op.id, { decision: 'approve' });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'not_waiting', details: { status: 'completed', answered: null } });
    });

    it('is idempotent under Idempotency-Key: the replay returns the first answer', async () => {
      const op = await buy(mcpAgent, 'sandbox_input_required');
      const body = { decision: 'reject', message: 'duplicate order' };
      const first = await answer('alice', op.id, body, { 'idempotency-key': `answer-${op.id}` });
      const replay = await answer('alice', op.id, body, { 'idempotency-key': `answer-${op.id}` });
      expect(replay.status).toBe(202);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(first.body);
      const changed = await answer('alice', op.id, { decision: 'respond', params: { po_number: 'x' } }, { 'idempotency-key': `answer-${op.id}` });
      expect(changed.status).toBe(409);
    });

    it('a viewer or operator key may not answer: 403, and nothing changes', async () => {
      const op = await buy(mcpAgent, 'sandbox_input_required');
      const before = await essence(op.id);
      for (const who of ['vera', 'otto']) {
        const res = await answer(who, op.id, { decision: 'reject', message: 'no' });
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('forbidden');
        expect(res.body.error.message).toContain('approver');
      }
      expect(await essence(op.id)).toEqual(before);
    });

    it('bad input is 400 with a clear code and changes nothing', async () => {
      const held = await buy(mcpAgent, 'sandbox_instant', { approval: 'required' });
      const asked = await buy(mcpAgent, 'sandbox_input_required');
      const cases: Array<[string, unknown, string]> = [
        [held.id, { decision: 'maybe' }, 'invalid_request'],
        [held.id, { decision: 'approve', params: 'not an object' }, 'invalid_request'],
        [held.id, { decision: 'approve', params: [1, 2] }, 'invalid_request'],
        [held.id, { decision: 'approve', surprise: true }, 'invalid_request'],
        [held.id, '{"decision": ', 'invalid_json'],
        [held.id, { decision: 'reject' }, 'message_required'],
        [held.id, { decision: 'reject', message: '   ' }, 'invalid_request'],
        [held.id, { decision: 'approve', params: { budget: 1 } }, 'params_not_allowed'],
        [asked.id, { decision: 'respond' }, 'params_required'],
        [asked.id, { decision: 'respond', params: {} }, 'params_required'],
        [asked.id, { decision: 'respond', params: { idempotency_key: 'a'.repeat(20) } }, 'reserved_params'],
        [asked.id, { decision: 'reject', params: { x: 1 } }, 'params_not_allowed'],
      ];
      const before = { held: await essence(held.id), asked: await essence(asked.id) };
      for (const [id, body, code] of cases) {
        const res = await answer('alice', id, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error.code, JSON.stringify(body)).toBe(code);
        expect(res.body.error.message).toBeTruthy();
      }
      expect(await essence(held.id)).toEqual(before.held);
      expect(await essence(asked.id)).toEqual(before.asked);
      expect((await answer('alice', '00000000-0000-0000-0000-000000000000', { decision: 'approve' })).status).toBe(404);
      expect(createCalls(held.idempotency_key)).toBe(0);
    });
  });

  describe('spend approval', () => {
    it('holds a buy before anything is sent; approving sends exactly one', async () => {
      const op = await buy(mcpAgent, 'sandbox_instant', { approval: 'required' });
      expect(op).toMatchObject({ status: 'requested', needs_input: true });
      expect(op.input_request).toMatchObject({ kind: 'spend_approval', reason: 'approval_required', allowed: ['approve', 'reject'] });
      // Its only timer is the request's clock (the first reminder, ADCP_ORCH_INPUT_REMINDER_MS), which never sends.
      expect(Date.parse(op.next_check_at)).toBe(Date.parse(op.input_request.requested_at) + orch.config.ADCP_ORCH_INPUT_REMINDER_MS);
      const listed = (await orch.api('GET', '/v1/operations?needs_input=true')).body.operations.map((o: any) => o.id);
      expect(listed).toContain(op.id);
      // Many scheduler ticks later (100 ms each here) nothing has reached the seller.
      orch.app.scheduler.wake();
      await new Promise((r) => setTimeout(r, 600));
      expect(seller.stats().calls.filter((c) => c.idempotency_key === op.idempotency_key)).toEqual([]);
      expect((await show(op.id)).status).toBe('requested');

      const asked = (await notified(op.id)).find((n) => n.type === 'operation.input_required');
      expect(asked?.data).toMatchObject({ reason: 'approval_required', operation: { id: op.id, input_request: { kind: 'spend_approval' } } });

      const res = await answer('bob', op.id, { decision: 'approve', message: 'within plan' });
      expect(res.status).toBe(202);
      const done = await waitForStatus(orch, op.id, ['completed', 'failed']);
      const told = await notified(op.id);
      expect(told.map((n) => n.type)).toEqual(['operation.created', 'operation.input_required', 'operation.answered', 'operation.completed']);
      expect(told[2].data.event).toMatchObject({ kind: 'answered', actor: 'bob' });
      expect(done.status).toBe('completed');
      expect(done.events.map((e: any) => e.kind)).toEqual(['created', 'input_requested', 'answered', 'transition', 'transition']);
      expect(done.events[2]).toMatchObject({ actor: 'bob', detail: { kind: 'spend_approval', decision: 'approve', message: 'within plan' } });
      expect(createCalls(op.idempotency_key)).toBe(1);
      expect(boughtWith(op.idempotency_key)).toBe(1);
    });

    it('rejecting ends it rejected with no call to the seller', async () => {
      const op = await buy(mcpAgent, 'sandbox_instant', { approval: 'required' });
      const res = await answer('alice', op.id, { decision: 'reject', message: 'not this quarter' });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ status: 'rejected', needs_input: false, next_check_at: null });
      const shown = await show(op.id);
      expect(shown.events.find((e: any) => e.to === 'rejected')).toMatchObject({ source: 'user', actor: 'alice', from: 'requested' });
      expect(shown.events.some((e: any) => e.kind === 'seller_not_told')).toBe(false);
      orch.app.scheduler.wake();
      await new Promise((r) => setTimeout(r, 300));
      expect(seller.stats().calls.filter((c) => c.idempotency_key === op.idempotency_key)).toEqual([]);
    });

    it('the tenant threshold approval_over holds buys over it, whichever route starts them', async () => {
      expect((await as('vera')('PUT', '/v1/settings', { approval_over: { amount: 1000, currency: 'USD' } })).status).toBe(403);
      expect((await orch.api('PUT', '/v1/settings', { approval_over: { amount: -1, currency: 'USD' } })).status).toBe(400);
      expect((await orch.api('PUT', '/v1/settings', { approval_over: { amount: 1000, currency: 'usd' } })).status).toBe(400);
      const put = await orch.api('PUT', '/v1/settings', { approval_over: { amount: 1000, currency: 'USD' } });
      expect(put.status).toBe(200);
      expect(put.body.approval_over).toEqual({ amount: 1000, currency: 'USD' });
      expect((await as('vera')('GET', '/v1/settings')).body).toMatchObject({ approval_over: { amount: 1000, currency: 'USD' }, updated_by: expect.any(String) });
      try {
        const big = await buy(mcpAgent, 'sandbox_instant');
        expect(big).toMatchObject({ status: 'requested', needs_input: true, input_request: { kind: 'spend_approval', reason: 'approval_over' } });
        expect(big.input_request.message).toMatch(/40000 USD, over the approval threshold of 1000 USD/);
        const viaOperations = await orch.api('POST', '/v1/operations', { agent_id: mcpAgent, task: 'create_media_buy', params: mediaBuyRequest('sandbox_instant'), webhook: 'none' });
        expect(viaOperations.body).toMatchObject({ status: 'requested', needs_input: true });
        const small = await orch.api('POST', '/v1/media-buys', {
          agent_id: mcpAgent,
          request: { ...mediaBuyRequest('sandbox_instant'), packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_std', budget: 600 }] },
          webhook: 'none',
        });
        expect(small.body).toMatchObject({ status: 'completed', needs_input: false, input_request: null });
        const euros = await orch.api('POST', '/v1/operations', {
          agent_id: mcpAgent,
          task: 'create_media_buy',
          params: { ...mediaBuyRequest('sandbox_instant'), packages: undefined, total_budget: { amount: 10, currency: 'EUR' } },
          webhook: 'none',
        });
        // Another currency cannot be compared: held rather than let through unchecked.
        expect(euros.body).toMatchObject({ status: 'requested', input_request: { kind: 'spend_approval' } });
        expect(createCalls(big.idempotency_key) + createCalls(viaOperations.body.idempotency_key)).toBe(0);
      } finally {
        expect((await orch.api('PUT', '/v1/settings', {})).body.approval_over).toBeNull();
      }
    });
  });
});

describe.each(dialects)('spend approval on $name', ({ make }) => {
  it('still waits after a restart and is answered by the new process: one buy', async () => {
    const seller = await startSandboxSeller();
    let orch = await startOrchestrator({ database: await make(), keepDatabase: true });
    try {
      const agentId = await orch.registerAgent({ url: seller.url });
      const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), approval: 'required', webhook: 'none' });
      expect(created.body).toMatchObject({ status: 'requested', needs_input: true });
      const id = created.body.id;
      await orch.close();
      orch = await startOrchestrator({ database: orch.database });

      const after = (await orch.api('GET', `/v1/operations/${id}`)).body;
      expect(after).toMatchObject({ status: 'requested', needs_input: true, next_check_at: created.body.next_check_at, input_request: { kind: 'spend_approval', allowed: ['approve', 'reject'] } });
      expect(seller.stats().calls.filter((c) => c.tool === 'create_media_buy')).toEqual([]);

      const res = await orch.api('POST', `/v1/operations/${id}/input`, { decision: 'approve' });
      expect(res.status).toBe(202);
      const done = await waitForStatus(orch, id, ['completed', 'failed']);
      expect(done.status).toBe('completed');
      expect(seller.stats().mediaBuysCreated).toBe(1);
      expect(seller.stats().createCallsByKey[done.idempotency_key]).toBe(1);
    } finally {
      await orch.close();
      await seller.close();
    }
  });

  it('two people answering at once: one answer is taken, the other is 409 naming it', async () => {
    const seller = await startSandboxSeller();
    const orch = await startOrchestrator({ database: await make() });
    try {
      const agentId = await orch.registerAgent({ url: seller.url });
      const keyOf = async (name: string) => orch.app.store.tenants.createApiKey(orch.tenantId, { name, role: 'approver' });
      const [ann, ben] = [await keyOf('ann'), await keyOf('ben')];
      for (let round = 0; round < 3; round++) {
        const op = (await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), approval: 'required', webhook: 'none' })).body;
        const [a, b] = await Promise.all([
          orch.api('POST', `/v1/operations/${op.id}/input`, { decision: 'approve' }, { authorization: `Bearer ${ann}` }),
          orch.api('POST', `/v1/operations/${op.id}/input`, { decision: 'reject', message: 'no' }, { authorization: `Bearer ${ben}` }),
        ]);
        expect([a.status, b.status].sort()).toEqual([202, 409]);
        const loser = a.status === 409 ? a : b;
        const winner = a.status === 409 ? 'ben' : 'ann';
        expect(loser.body.error).toMatchObject({ code: 'not_waiting', details: { answered: { actor: winner } } });
        const done = await waitForStatus(orch, op.id, ['completed', 'rejected', 'failed']);
        expect(done.status).toBe(winner === 'ann' ? 'completed' : 'rejected');
        expect(done.events.filter((e: any) => e.kind === 'answered').map((e: any) => e.actor)).toEqual([winner]);
        expect(seller.stats().createCallsByKey[op.idempotency_key] ?? 0).toBe(winner === 'ann' ? 1 : 0);
      }
    } finally {
      await orch.close();
      await seller.close();
    }
  });
});
