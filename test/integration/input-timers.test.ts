/**
 * Reminders and expiry of what waits for a person (docs/ARCHITECTURE.md, People in the loop), against the
 * real sandbox seller over loopback with short timings: reminders come again at a
 * slower pace, as notifications; an expiry rejects (nothing sent: the seller's log
 * proves it) or stalls (still answerable); the timers are rows, so a restart
 * between reminders loses nothing; bad settings change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { dialects } from '../helpers/databases.js';
import { openSse, type SseClient } from '../helpers/sse-client.js';

/** ADCP_ORCH_INPUT_REMINDER_MS for these tests: reminders at R, 3R, 7R … after the request. */
const R = 1000;

const at = (e: { at: string }) => Date.parse(e.at);
const remindersOf = (op: any) => op.events.filter((e: any) => e.kind === 'reminder');

describe('input timers', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;
  let approverKey: string;
  const streams: SseClient[] = [];

  beforeAll(async () => {
    seller = await startSandboxSeller({ submittedDelayMs: 300 });
    orch = await startOrchestrator({ env: { ADCP_ORCH_INPUT_REMINDER_MS: String(R) } });
    agentId = await orch.registerAgent({ url: seller.url, protocol: 'mcp' });
    approverKey = await orch.app.store.tenants.createApiKey(orch.tenantId, { name: 'alice', role: 'approver' });
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await orch?.close();
    await seller?.close();
  });

  const show = async (id: string) => (await orch.api('GET', `/v1/operations/${id}`)).body;
  const answer = (id: string, body: unknown) => orch.api('POST', `/v1/operations/${id}/input`, body, { authorization: `Bearer ${approverKey}` });
  const buy = async (productId: string, extra: Record<string, unknown> = {}) => {
    const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(productId), webhook: 'none', ...extra });
    expect(res.status).toBe(202);
    return res.body;
  };
  const settings = async (body: unknown) => {
    const res = await orch.api('PUT', '/v1/settings', body);
    expect(res.status).toBe(200);
    return res.body;
  };
  /** Every call the seller received with this operation's idempotency key (its own log). */
  const sellerCalls = (op: { idempotency_key: string }) => seller.stats().calls.filter((c) => c.idempotency_key === op.idempotency_key);
  const notified = async (id: string) =>
    (await orch.app.store.notifications.after(orch.tenantId, 0, 10_000)).filter((n) => n.operation_id === id).map((n) => JSON.parse(n.body));
  const events = async (query = '') => {
    const s = await openSse(`${orch.url}/v1/events${query}`, { authorization: `Bearer ${orch.apiKey}` });
    streams.push(s);
    return s;
  };
  const metric = async (pattern: RegExp) => Number((await (await fetch(`${orch.url}/metrics`)).text()).match(pattern)?.[1] ?? 0);

  it('a held spend approval is reminded, then again at a slower pace, each on GET /v1/events; the timer never sends it', async () => {
    const stream = await events('?types=operation.input_required');
    const op = await buy('sandbox_instant', { approval: 'required' });
    expect(op).toMatchObject({ status: 'requested', needs_input: true, input_request: { kind: 'spend_approval' } });
    expect(op.input_request.expires_at).toBeUndefined();
    const requestedAt = Date.parse(op.input_request.requested_at);
    // Its only timer is its request's clock: the first reminder.
    expect(Date.parse(op.next_check_at)).toBe(requestedAt + R);

    const reminders = await stream.waitFor((m) => m.data.data.operation.id === op.id && m.data.data.reminder === true, 2, 20_000);
    const [first, second] = reminders.map((m) => m.data);
    expect(reminders.map((m) => m.event)).toEqual(['operation.input_required', 'operation.input_required']);
    expect(first.data).toMatchObject({ reason: 'approval_required', message: op.input_request.message, operation: { id: op.id, status: 'requested', needs_input: true } });
    expect(first.data.event).toMatchObject({ kind: 'reminder', source: 'timer', detail: { kind: 'spend_approval', reminder: 1 } });
    expect(second.data.event).toMatchObject({ kind: 'reminder', source: 'timer', detail: { kind: 'spend_approval', reminder: 2 } });
    // How long it has waited, and the slower pace: R before the first, 2R between the first and the second.
    const [r1, r2] = [at(first.data.event), at(second.data.event)];
    expect(first.data.event.detail.waiting_ms).toBe(r1 - requestedAt);
    expect(r1 - requestedAt).toBeGreaterThanOrEqual(R);
    expect(second.data.event.detail.waiting_ms).toBe(r2 - requestedAt);
    expect(r2 - r1).toBeGreaterThanOrEqual(2 * R);
    expect(first.data.event.detail.next_reminder_at).toBe(new Date(r1 + 2 * R).toISOString());
    expect(second.data.event.detail.next_reminder_at).toBe(new Date(r2 + 4 * R).toISOString());

    // Nothing reached the seller, and the row's timer is the third reminder.
    expect(sellerCalls(op)).toEqual([]);
    const waiting = await show(op.id);
    expect(waiting).toMatchObject({ status: 'requested', needs_input: true });
    expect(Date.parse(waiting.next_check_at)).toBeGreaterThanOrEqual(r2 + 4 * R);
    expect(await metric(/adcp_orch_input_reminders_total\{kind="spend_approval"\} (\d+)/)).toBeGreaterThanOrEqual(2);

    // A person can still approve it: one buy.
    expect((await answer(op.id, { decision: 'approve' })).status).toBe(202);
    const done = await waitForStatus(orch, op.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(sellerCalls(op).filter((c) => c.tool === 'create_media_buy')).toHaveLength(1);
  });

  it('a seller question waiting for input is reminded too, at the same slowing pace, as notifications', async () => {
    const op = await buy('sandbox_input_required');
    expect(op).toMatchObject({ status: 'input-required', input_request: { kind: 'seller_input' } });
    const requestedAt = Date.parse(op.input_request.requested_at);
    const reminded = await eventually(async () => {
      const o = await show(op.id);
      return remindersOf(o).length >= 2 ? o : undefined;
    });
    const [r1, r2] = remindersOf(reminded);
    expect(r1).toMatchObject({ source: 'timer', from: 'input-required', to: 'input-required', detail: { kind: 'seller_input', reminder: 1 } });
    expect(at(r1) - requestedAt).toBeGreaterThanOrEqual(R);
    expect(at(r2) - at(r1)).toBeGreaterThanOrEqual(2 * R);
    expect(r2.detail.waiting_ms).toBe(at(r2) - requestedAt);
    const told = (await notified(op.id)).filter((n) => n.type === 'operation.input_required');
    expect(told.filter((n) => n.data.reminder === true).length).toBeGreaterThanOrEqual(2);
    expect(told[0].data.reminder).toBeUndefined();
    // Still polled between reminders, still waiting.
    expect(reminded.status).toBe('input-required');
    expect((await answer(op.id, { decision: 'reject' })).status).toBe(202);
  });

  it("expiry 'reject' ends a spend approval rejected by the timer, with nothing sent; an answer afterwards is 409 naming the expiry", async () => {
    await settings({ input_expiry: { spend_approval: { after_ms: 1500, then: 'reject' } } });
    try {
      const op = await buy('sandbox_instant', { approval: 'required' });
      const expiresAt = Date.parse(op.input_request.requested_at) + 1500;
      expect(op.input_request).toMatchObject({ expires_at: new Date(expiresAt).toISOString(), on_expiry: 'reject' });

      const ended = await waitForStatus(orch, op.id, ['rejected', 'completed', 'failed']);
      expect(ended).toMatchObject({ status: 'rejected', needs_input: false, input_request: null, next_check_at: null, error: { code: 'INPUT_EXPIRED' } });
      const rejected = ended.events.find((e: any) => e.kind === 'transition' && e.to === 'rejected');
      expect(rejected).toMatchObject({ source: 'timer', from: 'requested', actor: null, detail: { reason: 'expired', expires_at: op.input_request.expires_at } });
      expect(at(rejected)).toBeGreaterThanOrEqual(expiresAt);
      expect(ended.events.find((e: any) => e.kind === 'input_expired')).toMatchObject({ source: 'timer', detail: { kind: 'spend_approval', then: 'reject' } });
      // Held before sending: the seller never had it (its own log), so nobody needs telling.
      expect(ended.events.some((e: any) => e.kind === 'seller_not_told')).toBe(false);
      expect(sellerCalls(op)).toEqual([]);
      expect((await notified(op.id)).map((n) => n.type)).toContain('operation.rejected');

      for (const late of [{ decision: 'approve' }, { decision: 'reject', message: 'too late anyway' }]) {
        const res = await answer(op.id, late);
        expect(res.status).toBe(409);
        expect(res.body.error.code).toBe('not_waiting');
        expect(res.body.error.message).toMatch(/expired at .* unanswered and was rejected/);
        expect(res.body.error.details).toMatchObject({ status: 'rejected', expired_at: op.input_request.expires_at, answered: { actor: 'timer', decision: 'reject' } });
      }
      expect(sellerCalls(op)).toEqual([]);
      expect(await metric(/adcp_orch_input_expired_total\{kind="spend_approval",then="reject"\} (\d+)/)).toBeGreaterThanOrEqual(1);
    } finally {
      await settings({});
    }
  });

  it('an answer after the expiry is refused even before the timer has acted, and the timer then ends it', async () => {
    await settings({ input_expiry: { spend_approval: { after_ms: 1000, then: 'reject' } } });
    let stopped = false;
    try {
      const op = await buy('sandbox_instant', { approval: 'required' });
      await orch.app.scheduler.stop();
      stopped = true;
      // Time, not an event, is what passes here: the scheduler that would act on it is stopped.
      await eventually(async () => (Date.now() > Date.parse(op.input_request.expires_at) ? true : undefined));
      const res = await answer(op.id, { decision: 'approve' });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'not_waiting', details: { expired_at: op.input_request.expires_at, answered: null } });
      expect(await show(op.id)).toMatchObject({ status: 'requested', needs_input: true });
      orch.app.scheduler.start();
      stopped = false;
      expect((await waitForStatus(orch, op.id, ['rejected', 'completed'])).status).toBe('rejected');
      expect(sellerCalls(op)).toEqual([]);
    } finally {
      if (stopped) orch.app.scheduler.start();
      await settings({});
    }
  });

  it("expiry 'reject' of a seller's question ends it as a person's reject does: rejected, the seller not told, nothing bought", async () => {
    await settings({ input_expiry: { seller_input: { after_ms: 1500, then: 'reject' } } });
    try {
      const op = await buy('sandbox_input_required');
      expect(op.input_request).toMatchObject({ kind: 'seller_input', on_expiry: 'reject', expires_at: new Date(Date.parse(op.input_request.requested_at) + 1500).toISOString() });
      const ended = await waitForStatus(orch, op.id, ['rejected', 'completed', 'failed']);
      expect(ended.status).toBe('rejected');
      expect(ended.events.find((e: any) => e.to === 'rejected')).toMatchObject({ source: 'timer', from: 'input-required', detail: { reason: 'expired' } });
      expect(ended.events.at(-1)).toMatchObject({ kind: 'seller_not_told', source: 'timer' });
      expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key] ?? 0).toBe(0);
      expect(seller.getTask(op.task_id)?.status).toBe('input-required');
      expect((await answer(op.id, { decision: 'reject' })).status).toBe(409);
    } finally {
      await settings({});
    }
  });

  it("expiry 'stall' marks it stalled and tells people; it can still be answered, and approving sends it once", async () => {
    await settings({ input_expiry: { spend_approval: { after_ms: 1200, then: 'stall' } } });
    try {
      const stream = await events('?types=operation.stalled');
      const op = await buy('sandbox_instant', { approval: 'required' });
      expect(op.input_request).toMatchObject({ on_expiry: 'stall' });
      const [told] = await stream.waitFor((m) => m.data.data.operation.id === op.id, 1, 20_000);
      expect(told!.data.data.event).toMatchObject({ kind: 'stalled', source: 'timer', detail: { expired: true, kind: 'spend_approval', expires_at: op.input_request.expires_at } });
      expect(at(told!.data.data.event)).toBeGreaterThanOrEqual(Date.parse(op.input_request.expires_at));
      const stalled = await show(op.id);
      expect(stalled).toMatchObject({ status: 'requested', needs_input: true, stalled: true, input_request: { kind: 'spend_approval' } });
      expect(stalled.stalled_reason).toMatch(/expired at .* unanswered: a person should look/);
      expect((await orch.api('GET', '/v1/operations?stalled=true&needs_input=true')).body.operations.map((o: any) => o.id)).toContain(op.id);
      expect(sellerCalls(op)).toEqual([]);

      const res = await answer(op.id, { decision: 'approve', message: 'looked at it' });
      expect(res.status).toBe(202);
      const done = await waitForStatus(orch, op.id, ['completed', 'failed']);
      expect(done).toMatchObject({ status: 'completed', stalled: false });
      expect(sellerCalls(op).filter((c) => c.tool === 'create_media_buy')).toHaveLength(1);
      // Expired once: one stalled event, however often the clock was looked at.
      expect(done.events.filter((e: any) => e.kind === 'stalled')).toHaveLength(1);
    } finally {
      await settings({});
    }
  });

  it('settings: input_expiry is validated (bad values 400, nothing changed), shown, and replaced as a whole', async () => {
    const good = { approval_over: { amount: 5000, currency: 'USD' }, input_expiry: { spend_approval: { after_ms: 3_600_000, then: 'reject' }, seller_input: { after_ms: 86_400_000, then: 'stall' } } };
    const put = await settings(good);
    expect(put).toMatchObject(good);
    const before = (await orch.api('GET', '/v1/settings')).body;
    expect(before).toMatchObject({ ...good, updated_by: expect.any(String) });
    const rule = { after_ms: 60_000, then: 'reject' };
    const bad: unknown[] = [
      { input_expiry: { spend_approval: { ...rule, after_ms: 999 } } },
      { input_expiry: { spend_approval: { ...rule, after_ms: 400 * 86_400_000 } } },
      { input_expiry: { spend_approval: { ...rule, after_ms: 1500.5 } } },
      { input_expiry: { spend_approval: { ...rule, after_ms: '60000' } } },
      { input_expiry: { spend_approval: { ...rule, then: 'cancel' } } },
      { input_expiry: { spend_approval: { after_ms: 60_000 } } },
      { input_expiry: { spend_approval: { ...rule, extra: true } } },
      { input_expiry: { campaign_review: rule } },
      { input_expiry: 'one hour' },
      { input_expiry: [rule] },
    ];
    for (const body of bad) {
      const res = await orch.api('PUT', '/v1/settings', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', message: expect.any(String) });
      expect((await orch.api('GET', '/v1/settings')).body).toEqual(before);
    }
    const viewerKey = await orch.app.store.tenants.createApiKey(orch.tenantId, { name: 'vic', role: 'viewer' });
    expect((await orch.api('PUT', '/v1/settings', {}, { authorization: `Bearer ${viewerKey}` })).status).toBe(403);
    expect((await orch.api('GET', '/v1/settings')).body).toEqual(before);
    // A PUT replaces the document: what it leaves out is gone.
    expect(await settings({ approval_over: { amount: 5000, currency: 'USD' } })).toMatchObject({ input_expiry: null });
    expect(await settings({ input_expiry: {} })).toMatchObject({ approval_over: null, input_expiry: null });
  });
});

describe.each(dialects)('input timers across a restart on $name', ({ make }) => {
  it('reminders continue on schedule from the database: a new process sends the next one, at the slower pace', async () => {
    const seller = await startSandboxSeller();
    const env = { ADCP_ORCH_INPUT_REMINDER_MS: String(R) };
    let orch = await startOrchestrator({ env, database: await make(), keepDatabase: true });
    try {
      const agentId = await orch.registerAgent({ url: seller.url });
      const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), approval: 'required', webhook: 'none' });
      const op = created.body;
      const first = await eventually(async () => remindersOf((await orch.api('GET', `/v1/operations/${op.id}`)).body)[0]);
      // One serve per database file: the first process stops before the next starts.
      await orch.close();
      const restartedAt = Date.now();
      orch = await startOrchestrator({ env, database: orch.database });
      const running = Date.now();

      const after = await eventually(async () => {
        const o = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
        return remindersOf(o).length >= 2 ? o : undefined;
      });
      const [r1, r2] = remindersOf(after);
      // The first is the one the first process sent, not sent again.
      expect(r1).toEqual(first);
      expect(r1.detail.reminder).toBe(1);
      expect(r2.detail).toMatchObject({ kind: 'spend_approval', reminder: 2 });
      // The pace survived (not restarted from R, not lost) and it came on time: when owed, or at
      // once if the new process was not yet running then (plus a scheduler tick and a loaded machine).
      expect(at(r2) - at(r1)).toBeGreaterThanOrEqual(2 * R);
      expect(at(r2)).toBeGreaterThanOrEqual(restartedAt);
      expect(at(r2)).toBeLessThanOrEqual(Math.max(at(r1) + 2 * R, running) + 2000);
      expect(after).toMatchObject({ status: 'requested', needs_input: true });
      expect(seller.stats().calls.filter((c) => c.idempotency_key === op.idempotency_key)).toEqual([]);
    } finally {
      await orch.close();
      await orch.database.drop();
      await seller.close();
    }
  });
});
