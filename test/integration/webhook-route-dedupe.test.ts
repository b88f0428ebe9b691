/**
 * Dedupe, ordering, correlation and the early refusals of the webhook route
 * (AdCP spec, webhooks), over real HTTP on loopback: what the sender gets back, and
 * what the buyer then sees on GET /v1/operations/:id.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookFingerprint } from '../../src/webhooks/fingerprint.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { createWebhookOperation, type WebhookMode, type WebhookOperation } from '../helpers/webhook-operation.js';
import { publicJwk, signWebhook, TEST_KEYS } from '../unit/webhooks/signing-helpers.js';

type Mode = WebhookMode;

describe('webhook route: dedupe, ordering, correlation, refusals', () => {
  let orch: TestOrchestrator;
  let agentId: string;

  beforeAll(async () => {
    orch = await startOrchestrator();
    agentId = await orch.registerAgent({ url: 'http://127.0.0.1:9/mcp', webhook_signing: { jwks: { keys: TEST_KEYS.map(publicJwk) } } });
  });
  afterAll(async () => orch?.close());

  // ------------------------------------------------------------ helpers

  type Op = WebhookOperation;
  const createOperation = (mode: Mode): Promise<Op> => createWebhookOperation(orch, agentId, mode);

  function envelope(op: Op, fields: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      idempotency_key: `whk_${randomBytes(12).toString('hex')}`,
      operation_id: op.id,
      task_id: op.taskId,
      task_type: 'create_media_buy',
      status: 'completed',
      timestamp: new Date().toISOString(),
      // A create_media_buy success as its response schema has it (media_buy_id and packages).
      result: { media_buy_id: 'mb_1', packages: [] },
      ...fields,
    };
  }

  /** Fresh credentials for `body` in the operation's mode (a new nonce / timestamp each call). */
  function credentials(op: Op, body: string, mode: Mode = op.mode, tsSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
    switch (mode) {
      case 'hmac': {
        const mac = createHmac('sha256', op.secret).update(`${tsSeconds}.`).update(body).digest('hex');
        return { 'content-type': 'application/json', 'x-adcp-timestamp': String(tsSeconds), 'x-adcp-signature': `sha256=${mac}` };
      }
      case 'bearer':
        return { 'content-type': 'application/json', authorization: `Bearer ${op.secret}` };
      case 'rfc9421':
        return signWebhook({ url: `${orch.config.ADCP_ORCH_PUBLIC_URL}/webhooks/adcp/${op.token}`, body: Buffer.from(body), createdSeconds: tsSeconds });
    }
  }

  async function post(token: string, body: string, headers: Record<string, string>) {
    const res = await fetch(`${orch.url}/webhooks/adcp/${token}`, { method: 'POST', headers, body });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* keep text */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  const deliver = (op: Op, payload: unknown, tsSeconds?: number) => {
    const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
    return post(op.token, body, credentials(op, body, op.mode, tsSeconds));
  };

  async function snapshot(opId: string) {
    const view = await orch.api('GET', `/v1/operations/${opId}`);
    expect(view.status).toBe(200);
    const deliveries = await orch.app.store.db.kysely.selectFrom('webhook_deliveries').selectAll().where('operation_id', '=', opId).orderBy('received_at').execute();
    return { operation: view.body, deliveries };
  }
  const kinds = (events: any[]) => events.map((e) => e.kind);

  // ------------------------------------------------------------ dedupe

  it.each<Mode>(['rfc9421', 'hmac', 'bearer'])('%s: a retry (same key, same body, fresh credentials) is a 2xx duplicate, applied once', async (mode) => {
    const op = await createOperation(mode);
    const payload = envelope(op);
    const first = await deliver(op, payload, Math.floor(Date.now() / 1000) - 10);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'accepted' });
    const afterFirst = await snapshot(op.id);

    // Fresh signature (new nonce / timestamp); and once more re-serialised with other key order and spacing.
    const retry = await deliver(op, payload);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ status: 'duplicate' });
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(payload).reverse()), null, 2);
    const retry2 = await deliver(op, reordered);
    expect(retry2.status).toBe(200);
    expect(retry2.body).toEqual({ status: 'duplicate' });

    const after = await snapshot(op.id);
    expect(after).toEqual(afterFirst);
    expect(after.operation.status).toBe('completed');
    expect(after.operation.events.filter((e: any) => e.kind === 'transition')).toHaveLength(1);
    expect(after.deliveries).toHaveLength(1);
    expect(after.deliveries[0]).toMatchObject({ state: 'applied', idempotency_key: payload.idempotency_key });
  });

  it('same idempotency_key with a different payload: 409 webhook_idempotency_conflict, nothing changes', async () => {
    const op = await createOperation('rfc9421');
    const payload = envelope(op, { status: 'working', result: { percentage: 10 } });
    expect((await deliver(op, payload)).status).toBe(200);
    const before = await snapshot(op.id);
    expect(before.operation.status).toBe('working');

    const changed = await deliver(op, { ...payload, status: 'completed', result: { media_buy_id: 'mb_changed' } });
    expect(changed.status).toBe(409);
    expect(changed.body.error.code).toBe('webhook_idempotency_conflict');
    expect(await snapshot(op.id)).toEqual(before);
  });

  it('a delivery still in flight (stored, not yet applied): 503 with Retry-After, nothing applied', async () => {
    const op = await createOperation('hmac');
    const payload = envelope(op);
    const body = JSON.stringify(payload);
    // As the receiver stores it just before applying.
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
        received_at: Date.now(),
        applied_at: null,
      })
      .execute();
    const before = await snapshot(op.id);

    const res = await deliver(op, body);
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('webhook_in_flight');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const after = await snapshot(op.id);
    expect(after).toEqual(before);
    expect(after.operation.status).toBe('submitted');
    expect(after.deliveries.map((d) => d.state)).toEqual(['received']);
  });

  // ------------------------------------------------------------ ordering and convergence

  it('a non-terminal update older than the last one applied: 2xx, ignored', async () => {
    const op = await createOperation('rfc9421');
    const t = Date.now();
    const newer = await deliver(op, envelope(op, { status: 'working', timestamp: new Date(t).toISOString(), result: { percentage: 50 } }));
    expect(newer.status).toBe(200);
    const before = await snapshot(op.id);
    expect(before.operation.status).toBe('working');

    const older = await deliver(op, envelope(op, { status: 'input-required', timestamp: new Date(t - 60_000).toISOString(), message: 'old question' }));
    expect(older.status).toBe(200);
    expect(older.body).toEqual({ status: 'accepted', outcome: 'stale' });
    const after = await snapshot(op.id);
    expect(after.operation).toEqual(before.operation);
    expect(after.operation.needs_input).toBe(false);
    // Stored (so its retries are duplicates), marked applied with the outcome it had.
    expect(after.deliveries.map((d) => [d.state, d.outcome])).toEqual([
      ['applied', 'transition'],
      ['applied', 'stale'],
    ]);
  });

  it('a terminal, then a different terminal: the first is kept and a conflict event recorded', async () => {
    const op = await createOperation('hmac');
    const done = await deliver(op, envelope(op, { status: 'completed', result: { media_buy_id: 'mb_first', packages: [] } }));
    expect(done.status).toBe(200);
    const failed = await deliver(op, envelope(op, { status: 'failed', result: { adcp_error: { code: 'LATE_FAILURE', message: 'nope' } } }));
    expect(failed.status).toBe(200);
    expect(failed.body).toEqual({ status: 'accepted', outcome: 'conflict' });

    const after = await snapshot(op.id);
    expect(after.operation.status).toBe('completed');
    expect(after.operation.result).toEqual({ media_buy_id: 'mb_first', packages: [] });
    expect(after.operation.error).toBeNull();
    expect(kinds(after.operation.events)).toEqual(['created', 'transition', 'conflict']);
    expect(after.operation.events[2]).toMatchObject({ source: 'webhook', from: 'completed', to: 'failed' });
  });

  it('a task_id other than the bound one: 409 webhook_task_conflict, status and result unchanged, no delivery stored', async () => {
    const op = await createOperation('rfc9421');
    const before = await snapshot(op.id);
    const res = await deliver(op, envelope(op, { task_id: 'someone-elses-task' }));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('webhook_task_conflict');
    const after = await snapshot(op.id);
    const { events: beforeEvents, updated_at: _u1, ...beforeRest } = before.operation;
    const { events: afterEvents, updated_at: _u2, ...afterRest } = after.operation;
    expect(afterRest).toEqual(beforeRest);
    expect(after.operation.task_id).toBe(op.taskId);
    expect(after.deliveries).toEqual([]);
    // The only trace is the audit record of the conflict.
    expect(afterEvents.slice(0, beforeEvents.length)).toEqual(beforeEvents);
    expect(afterEvents.slice(beforeEvents.length)).toEqual([
      expect.objectContaining({ kind: 'task_conflict', source: 'webhook', detail: expect.objectContaining({ bound_task_id: op.taskId, observed_task_id: 'someone-elses-task' }) }),
    ]);
  });

  it('an operation_id naming another operation: 409 webhook_task_conflict, nothing applied', async () => {
    const op = await createOperation('hmac');
    const res = await deliver(op, envelope(op, { operation_id: randomUUID() }));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('webhook_task_conflict');
    const after = await snapshot(op.id);
    expect(after.operation.status).toBe('submitted');
    expect(after.operation.result).toBeNull();
    expect(after.deliveries).toEqual([]);
  });

  // ------------------------------------------------------------ mode is a switch

  it('registered HMAC, delivered with RFC 9421 headers only: 401 webhook_mode_mismatch, nothing changes', async () => {
    const op = await createOperation('hmac');
    const before = await snapshot(op.id);
    const body = JSON.stringify(envelope(op));
    const res = await post(op.token, body, credentials(op, body, 'rfc9421'));
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('webhook_mode_mismatch');
    expect(res.headers.get('www-authenticate')).toBe('Signature error="webhook_mode_mismatch"');
    expect(await snapshot(op.id)).toEqual(before);
  });

  it('registered RFC 9421, delivered with X-ADCP-Signature only (valid for the body): 401 webhook_mode_mismatch, nothing changes', async () => {
    const op = await createOperation('rfc9421');
    const before = await snapshot(op.id);
    const body = JSON.stringify(envelope(op));
    const res = await post(op.token, body, credentials(op, body, 'hmac'));
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('webhook_mode_mismatch');
    expect(res.headers.get('www-authenticate')).toBe('Signature error="webhook_mode_mismatch"');
    expect(await snapshot(op.id)).toEqual(before);
  });

  it('registered Bearer, delivered with an HMAC signature only: 401 webhook_mode_mismatch, nothing changes', async () => {
    const op = await createOperation('bearer');
    const before = await snapshot(op.id);
    const body = JSON.stringify(envelope(op));
    const res = await post(op.token, body, credentials(op, body, 'hmac'));
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('webhook_mode_mismatch');
    expect(await snapshot(op.id)).toEqual(before);
  });

  // ------------------------------------------------------------ early refusals

  it('an unknown token: 404 webhook_target_unknown', async () => {
    const op = await createOperation('hmac');
    const body = JSON.stringify(envelope(op));
    const res = await post(randomBytes(24).toString('base64url'), body, credentials(op, body));
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('webhook_target_unknown');
    expect((await snapshot(op.id)).operation.status).toBe('submitted');
  });

  it('a content type other than application/json: 415, nothing changes', async () => {
    const op = await createOperation('hmac');
    const before = await snapshot(op.id);
    const body = JSON.stringify(envelope(op));
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx']) {
      const res = await post(op.token, body, { ...credentials(op, body), 'content-type': contentType });
      expect(res.status).toBe(415);
      expect(res.body.error.code).toBe('webhook_content_type_invalid');
    }
    // Parameters on the right type are fine.
    const ok = await post(op.token, body, { ...credentials(op, body), 'content-type': 'application/json; charset=utf-8' });
    expect(ok.status).toBe(200);
    expect((await snapshot(op.id)).operation.status).toBe('completed');
    expect(before.operation.status).toBe('submitted');
  });

  it('a body over 1 MB: 413 (signed or not), nothing changes', async () => {
    const op = await createOperation('hmac');
    const before = await snapshot(op.id);
    const padded = JSON.stringify(envelope(op, { result: { media_buy_id: 'mb_big', pad: 'x'.repeat(1024 * 1024) } }));
    expect(Buffer.byteLength(padded)).toBeGreaterThan(1024 * 1024);
    const signed = await post(op.token, padded, credentials(op, padded));
    expect(signed.status).toBe(413);
    expect(signed.body.error.code).toBe('webhook_body_too_large');
    // Far over (beyond what the route buffers at all): still a 413, not a 5xx.
    const huge = 'y'.repeat(3 * 1024 * 1024);
    const far = await post(op.token, huge, { 'content-type': 'application/json' });
    expect(far.status).toBe(413);
    expect(await snapshot(op.id)).toEqual(before);
  });

  // ------------------------------------------------------------ metrics

  it('GET /metrics counts webhooks by outcome', async () => {
    const res = await fetch(`${orch.url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const count = (outcome: string) => {
      const m = new RegExp(`^adcp_orch_webhooks_received_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text);
      return m ? Number(m[1]) : 0;
    };
    // At least as many as the tests above produced.
    expect(count('accepted')).toBeGreaterThanOrEqual(6);
    expect(count('duplicate')).toBeGreaterThanOrEqual(6);
    expect(count('stale')).toBeGreaterThanOrEqual(1);
    expect(count('conflict')).toBeGreaterThanOrEqual(1);
    expect(count('webhook_idempotency_conflict')).toBeGreaterThanOrEqual(1);
    expect(count('webhook_in_flight')).toBeGreaterThanOrEqual(1);
    expect(count('webhook_task_conflict')).toBeGreaterThanOrEqual(2);
    expect(count('webhook_mode_mismatch')).toBeGreaterThanOrEqual(3);
    expect(count('webhook_target_unknown')).toBeGreaterThanOrEqual(1);
    expect(count('webhook_content_type_invalid')).toBeGreaterThanOrEqual(3);
    expect(count('webhook_body_too_large')).toBeGreaterThanOrEqual(1);
  });
});
