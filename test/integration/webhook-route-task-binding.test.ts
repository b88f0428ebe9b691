/**
 * A webhook must be about the operation's task (task_type is a bound identity) and a
 * terminal result must be that task's response (its response schema), over real HTTP
 * on loopback with correctly signed deliveries: what the sender gets back, what the
 * buyer sees on GET /v1/operations/:id, the live change stream and /metrics.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationChange } from '../../src/engine/change-bus.js';
import { webhookFingerprint } from '../../src/webhooks/fingerprint.js';
import { createLogger } from '../../src/logger.js';
import { applyPendingDeliveries } from '../../src/webhooks/recovery.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { createWebhookOperation, type WebhookMode, type WebhookOperation } from '../helpers/webhook-operation.js';
import { publicJwk, signWebhook, TEST_KEYS } from '../unit/webhooks/signing-helpers.js';

/** A delivery report, as the spec's envelope vector carries it (valid reporting content, not a media buy). */
const DELIVERY_REPORT = {
  notification_type: 'scheduled',
  sequence_number: 31,
  reporting_period: { start: '2026-05-25T00:00:00Z', end: '2026-05-25T23:59:00Z' },
  currency: 'USD',
  media_buy_deliveries: [{ media_buy_id: 'mb_001', status: 'active', totals: { impressions: 125000, spend: 5625, clicks: 250 }, by_package: [] }],
};

describe('webhook route: task type binding and result schema', () => {
  let orch: TestOrchestrator;
  let agentId: string;
  const changes: OperationChange[] = [];

  beforeAll(async () => {
    orch = await startOrchestrator();
    agentId = await orch.registerAgent({ url: 'http://127.0.0.1:9/mcp', webhook_signing: { jwks: { keys: TEST_KEYS.map(publicJwk) } } });
    orch.app.bus.subscribe((c) => changes.push(c));
  });
  afterAll(async () => orch?.close());

  const createOperation = (mode: WebhookMode = 'rfc9421') => createWebhookOperation(orch, agentId, mode);

  function envelope(op: WebhookOperation, fields: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      idempotency_key: `whk_${randomBytes(12).toString('hex')}`,
      operation_id: op.id,
      task_id: op.taskId,
      task_type: 'create_media_buy',
      status: 'completed',
      timestamp: new Date().toISOString(),
      ...fields,
    };
  }

  /** Posts `payload` with fresh credentials in the operation's mode (a new nonce each time). */
  async function deliver(op: WebhookOperation, payload: unknown) {
    const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
    let headers: Record<string, string>;
    if (op.mode === 'hmac') {
      const ts = Math.floor(Date.now() / 1000);
      const mac = createHmac('sha256', op.secret).update(`${ts}.`).update(body).digest('hex');
      headers = { 'content-type': 'application/json', 'x-adcp-timestamp': String(ts), 'x-adcp-signature': `sha256=${mac}` };
    } else {
      headers = signWebhook({ url: `${orch.config.ADCP_ORCH_PUBLIC_URL}/webhooks/adcp/${op.token}`, body: Buffer.from(body), createdSeconds: Math.floor(Date.now() / 1000) });
    }
    const res = await fetch(`${orch.url}/webhooks/adcp/${op.token}`, { method: 'POST', headers, body });
    return { status: res.status, body: (await res.json()) as any };
  }

  async function snapshot(opId: string) {
    const view = await orch.api('GET', `/v1/operations/${opId}`);
    expect(view.status).toBe(200);
    const deliveries = await orch.app.store.db.kysely.selectFrom('webhook_deliveries').selectAll().where('operation_id', '=', opId).orderBy('received_at').execute();
    return { operation: view.body, deliveries };
  }

  /** The operation without what every recorded event bumps (its events and updated_at). */
  const state = (operation: any) => {
    const { events: _e, updated_at: _u, ...rest } = operation;
    return rest;
  };
  const newEvents = (before: any, after: any) => after.operation.events.slice(before.operation.events.length);

  async function metric(name: string, labels: string): Promise<number> {
    const text = await (await fetch(`${orch.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
    return line ? Number(line.split(' ').pop()) : 0;
  }
  const received = (outcome: string) => metric('adcp_orch_webhooks_received_total', `outcome="${outcome}"`);
  const terminalConflicts = () => metric('adcp_orch_terminal_conflicts_total', 'type="create_media_buy"');

  // ------------------------------------------------------------ task_type is bound

  it('a correctly signed media_buy_delivery webhook on a create_media_buy operation: 409, operation unchanged, a conflict event, the metric', async () => {
    const op = await createOperation();
    const before = await snapshot(op.id);
    const [alarmsBefore, terminalBefore] = [await received('webhook_task_type_conflict'), await terminalConflicts()];
    const published = changes.length;

    const payload = envelope(op, { task_type: 'media_buy_delivery', message: 'Scheduled media buy delivery report available', result: DELIVERY_REPORT });
    const res = await deliver(op, payload);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('webhook_task_type_conflict');

    const after = await snapshot(op.id);
    expect(state(after.operation)).toEqual(state(before.operation));
    expect(after.operation.status).toBe('submitted');
    expect(after.operation.result).toBeNull();
    expect(after.deliveries).toEqual([]);
    expect(newEvents(before, after)).toEqual([
      expect.objectContaining({
        kind: 'conflict',
        source: 'webhook',
        from: 'submitted',
        to: 'completed',
        detail: { reason: 'task_type_mismatch', bound_task_type: 'create_media_buy', observed_task_type: 'media_buy_delivery', idempotency_key: payload.idempotency_key },
      }),
    ]);
    // Live streams hear of it at once, not only on their next database read.
    expect(changes.slice(published).flatMap((c) => c.events.map((e) => [c.operation.id, e.kind]))).toEqual([[op.id, 'conflict']]);
    expect(await received('webhook_task_type_conflict')).toBe(alarmsBefore + 1);
    // An alarm of its own, not a second terminal.
    expect(await terminalConflicts()).toBe(terminalBefore);

    // The operation still takes its own task's result afterwards.
    const done = await deliver(op, envelope(op, { result: { media_buy_id: 'mb_after_conflict', packages: [] } }));
    expect(done.status).toBe(200);
    expect((await snapshot(op.id)).operation).toMatchObject({ status: 'completed', result: { media_buy_id: 'mb_after_conflict' } });
  });

  it('an A2A body naming another task type in its DataPart is refused the same way', async () => {
    const op = await createOperation('hmac');
    const before = await snapshot(op.id);
    const res = await deliver(op, {
      id: `a2a-${randomUUID()}`,
      status: { state: 'completed', timestamp: new Date().toISOString() },
      artifacts: [{ artifactId: 'result', parts: [{ kind: 'data', data: { task_id: op.taskId, task_type: 'update_media_buy', media_buy_id: 'mb_1', packages: [] } }] }],
    });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('webhook_task_type_conflict');
    const after = await snapshot(op.id);
    expect(state(after.operation)).toEqual(state(before.operation));
    expect(newEvents(before, after)).toEqual([expect.objectContaining({ kind: 'conflict', detail: expect.objectContaining({ reason: 'task_type_mismatch', observed_task_type: 'update_media_buy' }) })]);
  });

  // ------------------------------------------------------------ the result must be the task's response

  it('a completed create_media_buy whose result fails the response schema: 409, not the result, kept as a conflict for a person; its retry changes nothing', async () => {
    const op = await createOperation();
    const before = await snapshot(op.id);
    const [alarmsBefore, terminalBefore] = [await received('webhook_result_invalid'), await terminalConflicts()];
    const published = changes.length;

    // The conformance finding's body, but claiming to be create_media_buy: a delivery report is no media buy.
    const payload = envelope(op, { result: DELIVERY_REPORT });
    const res = await deliver(op, payload);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('webhook_result_invalid');
    expect(res.body.error.details.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: '/media_buy_id' }), expect.objectContaining({ path: '/packages' })]));

    const after = await snapshot(op.id);
    expect(state(after.operation)).toEqual(state(before.operation));
    expect(after.operation).toMatchObject({ status: 'submitted', result: null, error: null, task_id: op.taskId });
    const [conflict] = newEvents(before, after);
    expect(newEvents(before, after)).toHaveLength(1);
    expect(conflict).toMatchObject({
      kind: 'conflict',
      source: 'webhook',
      from: 'submitted',
      to: 'completed',
      detail: {
        reason: 'result_invalid',
        task_type: 'create_media_buy',
        idempotency_key: payload.idempotency_key,
        result_keys: Object.keys(DELIVERY_REPORT),
        result_excerpt: JSON.stringify(DELIVERY_REPORT),
      },
    });
    expect(conflict.detail.issues).toEqual(res.body.error.details.issues);
    // The delivery itself is kept (stored, settled as refused), so a person can read all of it.
    expect(after.deliveries.map((d) => [d.state, d.outcome, d.idempotency_key])).toEqual([['applied', 'result_invalid', payload.idempotency_key]]);
    expect(JSON.parse(after.deliveries[0].payload)).toEqual(payload);
    expect(changes.slice(published).flatMap((c) => c.events.map((e) => [c.operation.id, e.kind]))).toEqual([[op.id, 'conflict']]);
    expect(await received('webhook_result_invalid')).toBe(alarmsBefore + 1);
    expect(await terminalConflicts()).toBe(terminalBefore);

    // The sender's retry (same key and bytes, fresh signature) gets the same refusal and adds nothing.
    const retry = await deliver(op, payload);
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('webhook_result_invalid');
    expect(await snapshot(op.id)).toEqual(after);
  });

  it('a valid completion still completes the operation with its media_buy_id (a MediaBuyStatus in the result is the 3.0 success shape)', async () => {
    const op = await createOperation();
    const result = { media_buy_id: 'mb_valid_1', status: 'active', confirmed_at: '2026-05-01T10:00:00Z', packages: [{ package_id: 'pkg_1', status: 'active' }] };
    const res = await deliver(op, envelope(op, { result }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'accepted', outcome: 'transition' });
    const after = await snapshot(op.id);
    expect(after.operation).toMatchObject({ status: 'completed', result, error: null });
    expect(after.operation.events.filter((e: any) => e.kind === 'conflict')).toEqual([]);
    expect(after.deliveries.map((d) => [d.state, d.outcome])).toEqual([['applied', 'transition']]);
  });

  it('a result missing only packages is refused; the same media buy with them is then accepted', async () => {
    const op = await createOperation('hmac');
    const bad = await deliver(op, envelope(op, { result: { media_buy_id: 'mb_2' } }));
    expect(bad.status).toBe(409);
    expect(bad.body.error.details.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: '/packages' })]));
    expect((await snapshot(op.id)).operation.status).toBe('submitted');
    const good = await deliver(op, envelope(op, { result: { media_buy_id: 'mb_2', packages: [] } }));
    expect(good.status).toBe(200);
    expect((await snapshot(op.id)).operation).toMatchObject({ status: 'completed', result: { media_buy_id: 'mb_2' } });
  });

  it('failed: the task error shape (errors[]) and a core adcp_error are accepted; anything else is refused', async () => {
    const withErrors = await createOperation();
    const a = await deliver(withErrors, envelope(withErrors, { status: 'failed', result: { errors: [{ code: 'BUDGET_TOO_LOW', message: 'budget below the floor' }] } }));
    expect(a.status).toBe(200);
    expect((await snapshot(withErrors.id)).operation).toMatchObject({ status: 'failed', error: { code: 'BUDGET_TOO_LOW' } });

    const withAdcpError = await createOperation();
    const b = await deliver(withAdcpError, envelope(withAdcpError, { status: 'failed', result: { adcp_error: { code: 'RATE_LIMITED', message: 'slow down', recovery: 'transient' } } }));
    expect(b.status).toBe(200);
    expect((await snapshot(withAdcpError.id)).operation).toMatchObject({ status: 'failed', error: { code: 'RATE_LIMITED' } });

    const garbled = await createOperation();
    const c = await deliver(garbled, envelope(garbled, { status: 'failed', result: { adcp_error: { code: 'NO_MESSAGE' }, reason: 'whatever' } }));
    expect(c.status).toBe(409);
    expect(c.body.error.code).toBe('webhook_result_invalid');
    expect(c.body.error.details.issues[0]).toEqual({ path: '/adcp_error', message: expect.any(String) });
    expect((await snapshot(garbled.id)).operation).toMatchObject({ status: 'submitted', error: null, result: null });
  });

  it('after completion, an invalid terminal with a new key is a conflict too (never taken for a duplicate), the first result kept', async () => {
    const op = await createOperation();
    expect((await deliver(op, envelope(op, { result: { media_buy_id: 'mb_kept', packages: [] } }))).status).toBe(200);
    const before = await snapshot(op.id);
    const res = await deliver(op, envelope(op, { result: { media_buy_id: 'mb_kept' } }));
    expect(res.status).toBe(409);
    const after = await snapshot(op.id);
    expect(state(after.operation)).toEqual(state(before.operation));
    expect(after.operation.result).toEqual({ media_buy_id: 'mb_kept', packages: [] });
    expect(newEvents(before, after)).toEqual([expect.objectContaining({ kind: 'conflict', from: 'completed', to: 'completed', detail: expect.objectContaining({ reason: 'result_invalid' }) })]);
  });

  it('interim data is not held to the terminal schema (a working update with progress data moves on)', async () => {
    const op = await createOperation();
    const res = await deliver(op, envelope(op, { status: 'working', result: { percentage: 40, current_step: 'trafficking' } }));
    expect(res.status).toBe(200);
    expect((await snapshot(op.id)).operation.status).toBe('working');
  });

  it('a stored but unapplied invalid delivery (a crash in between) is settled by the recovery sweep as a conflict, never as the result', async () => {
    const op = await createOperation();
    const payload = envelope(op, { result: { media_buy_id: 'mb_recovered_bad' } });
    const body = JSON.stringify(payload);
    // As the receiver stores it just before applying (the process then died).
    await orch.app.store.db.kysely
      .insertInto('webhook_deliveries')
      .values({
        id: randomUUID(),
        sender: agentId,
        idempotency_key: payload.idempotency_key as string,
        fingerprint: webhookFingerprint(payload),
        operation_id: op.id,
        state: 'received',
        outcome: null,
        payload: body,
        received_at: Date.now() - 60_000,
        applied_at: null,
      })
      .execute();
    const before = await snapshot(op.id);
    expect(await applyPendingDeliveries(orch.app.webhookIngest, createLogger('silent'), Date.now(), 0)).toBeGreaterThanOrEqual(1);
    const after = await snapshot(op.id);
    expect(after.operation).toMatchObject({ status: 'submitted', result: null });
    expect(newEvents(before, after)).toEqual([expect.objectContaining({ kind: 'conflict', detail: expect.objectContaining({ reason: 'result_invalid' }) })]);
    expect(after.deliveries.map((d) => [d.state, d.outcome])).toEqual([['applied', 'result_invalid']]);
    // The sender's retry meets the settled refusal.
    const retry = await deliver(op, payload);
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('webhook_result_invalid');
  });
});
