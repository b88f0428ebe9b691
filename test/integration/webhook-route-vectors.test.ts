/**
 * Every vector of webhook-hmac-sha256.json, webhook-receiver-envelope.json and
 * webhook-payload-extraction.json POSTed over loopback HTTP to the real route
 * (POST /webhooks/adcp/:token), against operations created directly in the
 * store, with an injected clock so each vector's fixed timestamp is "now".
 *
 * For each: the HTTP status and error code a sender would see, and what the
 * buyer would see on GET /v1/operations/:id — unchanged for a refused
 * delivery (and no webhook_deliveries row), applied for an accepted one.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { insertWebhookOperation, type WebhookMode } from '../helpers/webhook-operation.js';
import { publicJwk, signWebhook, TEST_KEYS } from '../unit/webhooks/signing-helpers.js';
import { readVectorFile } from '../unit/webhooks/vectors.js';

interface HmacVector {
  id: string;
  timestamp: number | string;
  raw_body: string;
  expected_signature?: string;
  expected_verifier_action?: string;
  rfc9421_error_code?: string;
  signature?: string | null;
  current_time?: number;
}
const hmacFile = readVectorFile<{
  secret: string;
  vectors: HmacVector[];
  rejection_vectors: HmacVector[];
  secret_rejection_vectors: Array<{ description: string; secret: string }>;
}>('webhook-hmac-sha256.json');
const envelopeFile = readVectorFile<{
  positive: Array<{ id: string; payload: Record<string, any>; same_event_as?: string }>;
  negative: Array<{ id: string; payload: Record<string, any>; expected_error: string }>;
}>('webhook-receiver-envelope.json');
const extractionFile = readVectorFile<{
  vectors: Array<{ id: string; format: 'mcp' | 'a2a'; payload: Record<string, any>; expected_data: unknown }>;
}>('webhook-payload-extraction.json');

type Mode = WebhookMode;

// ---------------------------------------------------------------- helpers

function mutableClock(startMs: number) {
  const clock = { ms: startMs, now: () => clock.ms, random: () => 0.5 };
  return clock;
}

/** Inserts an operation as the engine would have left it after a `submitted` reply. */
async function createOperation(
  orch: TestOrchestrator,
  agentId: string,
  opts: { id?: string; mode: Mode; secret?: string; taskId?: string | null; status?: string; type?: string },
): Promise<{ id: string; token: string }> {
  const id = opts.id ?? `op-${randomBytes(6).toString('hex')}`;
  const token = randomBytes(24).toString('base64url');
  await insertWebhookOperation(orch, agentId, { id, mode: opts.mode, token, secret: opts.secret, taskId: opts.taskId ?? null, status: opts.status, type: opts.type });
  return { id, token };
}

/** What a buyer sees (the operation with its events) plus the delivery rows stored for it. */
async function snapshot(orch: TestOrchestrator, opId: string) {
  const view = await orch.api('GET', `/v1/operations/${encodeURIComponent(opId)}`);
  expect(view.status).toBe(200);
  const deliveries = await orch.app.store.db.kysely.selectFrom('webhook_deliveries').selectAll().where('operation_id', '=', opId).execute();
  return { operation: view.body, deliveries };
}

async function postWebhook(orch: TestOrchestrator, token: string, body: string, headers: Record<string, string>) {
  const res = await fetch(`${orch.url}/webhooks/adcp/${token}`, { method: 'POST', headers, body });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* keep text */
  }
  return { status: res.status, body: parsed, wwwAuthenticate: res.headers.get('www-authenticate') };
}

function hmacSignature(secret: string, timestamp: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

/** Headers authenticating `body` in `mode` at the clock's current time. */
function authHeaders(orch: TestOrchestrator, mode: Mode, secret: string, token: string, body: string, nowMs: number): Record<string, string> {
  const ts = String(Math.floor(nowMs / 1000));
  switch (mode) {
    case 'hmac':
      return { 'content-type': 'application/json', 'x-adcp-timestamp': ts, 'x-adcp-signature': hmacSignature(secret, ts, body) };
    case 'bearer':
      return { 'content-type': 'application/json', authorization: `Bearer ${secret}` };
    case 'rfc9421':
      return signWebhook({ url: `${orch.config.ADCP_ORCH_PUBLIC_URL}/webhooks/adcp/${token}`, body: Buffer.from(body), createdSeconds: Number(ts) });
  }
}

function expectRefusedUnchanged(before: Awaited<ReturnType<typeof snapshot>>, after: Awaited<ReturnType<typeof snapshot>>) {
  expect(after.operation).toEqual(before.operation);
  expect(after.deliveries).toEqual([]);
}

// ---------------------------------------------------------------- HMAC vectors

describe('webhook-hmac-sha256.json over the route', () => {
  let orch: TestOrchestrator;
  let agentId: string;
  const clock = mutableClock(1_700_000_000_000);

  beforeAll(async () => {
    orch = await startOrchestrator({ clock });
    agentId = await orch.registerAgent({ url: 'http://127.0.0.1:9/mcp' });
  });
  afterAll(async () => orch?.close());

  /**
   * The MAC of every positive vector is valid, so the route gets past
   * authentication; none of their bodies is an AdCP envelope, so each is then
   * refused as a body, never as a signature (and a 401 here would tell a
   * sender to stop for the wrong reason).
   */
  const positiveExpected: Record<string, string> = {
    'compact-js-style': 'missing_envelope_fields',
    'spaced-python-default': 'missing_envelope_fields',
    'empty-object': 'missing_envelope_fields',
    nested: 'missing_envelope_fields',
    'unicode-utf8': 'missing_envelope_fields',
    'pretty-printed': 'missing_envelope_fields',
    'scalars-mixed': 'missing_envelope_fields',
    'empty-body': 'webhook_body_malformed',
    'timestamp-zero': 'missing_envelope_fields',
    'timestamp-2040': 'missing_envelope_fields',
    // A literal NUL inside a JSON string is not JSON.
    'null-bytes': 'webhook_body_malformed',
    'trailing-newline': 'missing_envelope_fields',
    'compact-whitespace-keys': 'missing_envelope_fields',
    'unicode-ascii-escaped': 'missing_envelope_fields',
    // reject-malformed, with the vector's own code.
    'duplicate-keys-conflicting-values': 'webhook_body_malformed',
  };

  it('has an expectation for every positive vector', () => {
    expect(Object.keys(positiveExpected).sort()).toEqual(hmacFile.vectors.map((v) => v.id).sort());
  });

  it.each(hmacFile.vectors.map((v) => [v.id, v] as const))('%s: authenticated, then refused as a body with 400', async (id, v) => {
    clock.ms = Number(v.timestamp) * 1000;
    const op = await createOperation(orch, agentId, { mode: 'hmac', secret: hmacFile.secret });
    const before = await snapshot(orch, op.id);
    const headers = { 'content-type': 'application/json', 'x-adcp-timestamp': String(v.timestamp), 'x-adcp-signature': v.expected_signature! };
    const res = await postWebhook(orch, op.token, v.raw_body, headers);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(positiveExpected[id]);
    if (v.rfc9421_error_code) expect(res.body.error.code).toBe(v.rfc9421_error_code);
    expect(res.wwwAuthenticate).toBeNull();
    expectRefusedUnchanged(before, await snapshot(orch, op.id));

    // The same bytes with one hex digit of the MAC changed are refused as a signature:
    // the 400 above was reached only because the MAC verified.
    const sig = v.expected_signature!;
    const flipped = sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0');
    const forged = await postWebhook(orch, op.token, v.raw_body, { ...headers, 'x-adcp-signature': flipped });
    expect(forged.status).toBe(401);
    expect(forged.wwwAuthenticate).toBe('Signature error="webhook_signature_invalid"');
    expectRefusedUnchanged(before, await snapshot(orch, op.id));
  });

  const rejectionExpected: Record<string, string> = {
    'truncated-signature': 'webhook_signature_header_malformed',
    'wrong-algorithm-prefix': 'webhook_signature_header_malformed',
    'empty-signature': 'webhook_signature_header_malformed',
    'missing-signature': 'webhook_signature_header_malformed',
    'timestamp-too-old': 'webhook_signature_window_invalid',
    'timestamp-too-future': 'webhook_signature_window_invalid',
    'non-numeric-timestamp': 'webhook_signature_header_malformed',
    'body-tampered': 'webhook_signature_invalid',
    'double-prefix': 'webhook_signature_header_malformed',
    'signer-spaced-wire-compact': 'webhook_signature_invalid',
  };

  it('has an expectation for every rejection vector', () => {
    expect(Object.keys(rejectionExpected).sort()).toEqual(hmacFile.rejection_vectors.map((v) => v.id).sort());
  });

  it.each(hmacFile.rejection_vectors.map((v) => [v.id, v] as const))('%s: 401 with its code, nothing stored', async (id, v) => {
    clock.ms = (v.current_time ?? (typeof v.timestamp === 'number' ? v.timestamp : 1_700_000_000)) * 1000;
    const op = await createOperation(orch, agentId, { mode: 'hmac', secret: hmacFile.secret });
    const before = await snapshot(orch, op.id);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-adcp-timestamp': String(v.timestamp) };
    if (v.signature !== null && v.signature !== undefined) headers['x-adcp-signature'] = v.signature;
    const res = await postWebhook(orch, op.token, v.raw_body, headers);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe(rejectionExpected[id]);
    expect(res.wwwAuthenticate).toBe(`Signature error="${rejectionExpected[id]}"`);
    expectRefusedUnchanged(before, await snapshot(orch, op.id));
  });

  /**
   * Secrets below the bar are refused at configuration time (the engine only
   * ever generates 32 random bytes). At the route, an operation that somehow
   * holds one must not authenticate anything with it: a correctly MACed,
   * otherwise acceptable delivery is refused and changes nothing.
   */
  it.each(hmacFile.secret_rejection_vectors.map((v) => [v.description, v] as const))(
    'weak secret (%s): a delivery MACed with it is refused, nothing changes',
    async (_d, v) => {
      clock.ms = 1_700_000_000_000;
      const taskId = `task-weak-${randomBytes(4).toString('hex')}`;
      const op = await createOperation(orch, agentId, { mode: 'hmac', secret: v.secret, taskId });
      const before = await snapshot(orch, op.id);
      const body = JSON.stringify({
        idempotency_key: `whk_weak_secret_${randomBytes(8).toString('hex')}`,
        task_id: taskId,
        task_type: 'create_media_buy',
        status: 'completed',
        timestamp: new Date(clock.ms).toISOString(),
        result: { media_buy_id: 'mb_weak' },
      });
      const ts = '1700000000';
      const res = await postWebhook(orch, op.token, body, { 'content-type': 'application/json', 'x-adcp-timestamp': ts, 'x-adcp-signature': hmacSignature(v.secret, ts, body) });
      expect(res.status).toBe(401);
      expect(res.wwwAuthenticate).toMatch(/^Signature error="webhook_signature_[a-z_]+"$/);
      expectRefusedUnchanged(before, await snapshot(orch, op.id));
    },
  );

  it('the vectors secret itself authenticates an acceptable delivery end to end', async () => {
    clock.ms = 1_700_000_000_000;
    const op = await createOperation(orch, agentId, { mode: 'hmac', secret: hmacFile.secret, taskId: 'task-strong' });
    const body = JSON.stringify({
      idempotency_key: 'whk_vectors_secret_accept_0001',
      task_id: 'task-strong',
      task_type: 'create_media_buy',
      status: 'completed',
      timestamp: new Date(clock.ms).toISOString(),
      result: { media_buy_id: 'mb_strong', packages: [] },
    });
    const res = await postWebhook(orch, op.token, body, { 'content-type': 'application/json', 'x-adcp-timestamp': '1700000000', 'x-adcp-signature': hmacSignature(hmacFile.secret, '1700000000', body) });
    expect(res.status).toBe(200);
    const after = await snapshot(orch, op.id);
    expect(after.operation.status).toBe('completed');
    expect(after.operation.result).toEqual({ media_buy_id: 'mb_strong', packages: [] });
    expect(after.deliveries.map((d) => d.state)).toEqual(['applied']);
  });
});

// ---------------------------------------------------------------- envelope and extraction vectors, in each mode

interface Accepted {
  status: string;
  /** The AdCP task id the operation is bound to before (and must still be after). */
  boundTaskId: string | null;
  result: unknown;
  errorCode?: string;
  inputMessage?: string;
  /**
   * A create_media_buy said completed with no media_buy_id: applied as a conflict, not the
   * end (src/engine/unresolved-completion.ts), so the operation keeps `status` (submitted).
   */
  unresolvedCompletion?: true;
}

/**
 * What the route must do with each extraction vector. MCP bodies must be
 * complete envelopes (the idempotency_key is the dedupe key), so the three
 * minimal MCP examples are refused at the envelope step even though their
 * data extracts. A2A bodies are native Tasks/status events: their `id` is the
 * A2A Task id, which AdCP spec, roles, transports, identifiers forbids using as the AdCP task_id — so it
 * is neither compared with the bound task_id (no 409) nor bound; the delivery
 * is correlated by the authenticated per-operation URL and applied.
 *
 * Each vector is posted to an operation of the task its body names (`task_type`;
 * create_media_buy for the A2A bodies, which name none): task_type is a bound
 * identity, so the same bodies on an operation of another task are correlation
 * conflicts (tested below with the delivery-report envelope, on create_media_buy).
 */
const extractionExpected: Record<string, { refused: string } | Accepted> = {
  'mcp-completed': { status: 'completed', boundTaskId: 'task_001', result: 'expected_data' },
  'mcp-failed-adcp-error': { status: 'failed', boundTaskId: 'task_002', result: 'expected_data', errorCode: 'RATE_LIMITED' },
  'mcp-working': { status: 'working', boundTaskId: 'task_003', result: null },
  'mcp-input-required': { status: 'input-required', boundTaskId: 'task_004', result: null, inputMessage: 'Budget exceeds auto-approval limit' },
  'a2a-completed-artifacts': { status: 'completed', boundTaskId: 'adcp-task-bound-005', result: 'expected_data' },
  'a2a-failed-adcp-error': { status: 'failed', boundTaskId: null, result: 'expected_data', errorCode: 'RATE_LIMITED' },
  'a2a-working-event': { status: 'working', boundTaskId: 'adcp-task-bound-007', result: null },
  'mcp-missing-result': { refused: 'missing_envelope_fields' },
  'mcp-null-result': { refused: 'missing_envelope_fields' },
  // The vector extracts no data; on a create_media_buy that is a completion without its media_buy_id.
  'a2a-completed-no-datapart': { status: 'submitted', boundTaskId: null, result: null, unresolvedCompletion: true },
  'mcp-canceled': { refused: 'missing_envelope_fields' },
  'a2a-input-required-event': { status: 'input-required', boundTaskId: 'adcp-task-bound-012', result: null, inputMessage: 'Approval needed for budget over $100K.' },
};

const MODES: Mode[] = ['hmac', 'bearer', 'rfc9421'];

describe.each(MODES)('envelope and extraction vectors over the route, %s mode', (mode) => {
  let orch: TestOrchestrator;
  let agentId: string;
  const clock = mutableClock(1_700_000_000_000);
  // HMAC: the vectors secret; Bearer: a fresh credential of the required length.
  const secret = mode === 'bearer' ? randomBytes(32).toString('base64url') : hmacFile.secret;

  beforeAll(async () => {
    orch = await startOrchestrator({ clock });
    agentId = await orch.registerAgent({
      url: 'http://127.0.0.1:9/mcp',
      ...(mode === 'rfc9421' ? { webhook_signing: { jwks: { keys: TEST_KEYS.map(publicJwk) } } } : {}),
    });
  });
  afterAll(async () => orch?.close());

  const create = (opts: { id?: string; taskId?: string | null; type?: string }) =>
    createOperation(orch, agentId, { mode, secret: mode === 'rfc9421' ? undefined : secret, ...opts });
  const send = (token: string, payload: unknown) => {
    const body = JSON.stringify(payload);
    return postWebhook(orch, token, body, authHeaders(orch, mode, secret, token, body, clock.ms));
  };

  it('envelope positives: the delivery is applied once; its retry (same key, fresh signature) is a 200 duplicate', async () => {
    const [first, retry] = envelopeFile.positive;
    expect(retry.same_event_as).toBe(first.id);
    const op = await create({ id: first.payload.operation_id, taskId: first.payload.task_id, type: first.payload.task_type });

    const res = await send(op.token, first.payload);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'accepted', outcome: 'transition' });
    const afterFirst = await snapshot(orch, op.id);
    expect(afterFirst.operation.status).toBe('completed');
    expect(afterFirst.operation.result).toEqual(first.payload.result);
    expect(afterFirst.deliveries).toHaveLength(1);
    expect(afterFirst.deliveries[0]).toMatchObject({ state: 'applied', idempotency_key: first.payload.idempotency_key });

    const again = await send(op.token, retry.payload);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ status: 'duplicate' });
    const afterRetry = await snapshot(orch, op.id);
    expect(afterRetry).toEqual(afterFirst);
    expect(afterRetry.operation.events.filter((e: any) => e.kind === 'transition')).toHaveLength(1);
  });

  it('the envelope positive on a create_media_buy operation: 409 webhook_task_type_conflict, a conflict event, nothing applied or stored', async () => {
    const [first] = envelopeFile.positive;
    expect(first.payload.task_type).toBe('media_buy_delivery');
    // Its own ids (the positive above owns the vector's operation and task), the vector's body otherwise.
    const taskId = `${first.payload.task_id}-cmb`;
    const op = await create({ id: `${first.payload.operation_id}-cmb`, taskId, type: 'create_media_buy' });
    const before = await snapshot(orch, op.id);
    const res = await send(op.token, { ...first.payload, operation_id: op.id, task_id: taskId });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('webhook_task_type_conflict');
    const after = await snapshot(orch, op.id);
    const { events: beforeEvents, updated_at: _u1, ...beforeRest } = before.operation;
    const { events: afterEvents, updated_at: _u2, ...afterRest } = after.operation;
    expect(afterRest).toEqual(beforeRest);
    expect(after.deliveries).toEqual([]);
    expect(afterEvents.slice(beforeEvents.length)).toEqual([
      expect.objectContaining({ kind: 'conflict', source: 'webhook', from: 'submitted', to: 'completed', detail: expect.objectContaining({ reason: 'task_type_mismatch', bound_task_type: 'create_media_buy', observed_task_type: 'media_buy_delivery' }) }),
    ]);
  });

  it.each(envelopeFile.negative.map((v) => [v.id, v] as const))('envelope negative %s: 400 with its expected_error, nothing stored', async (_id, v) => {
    // Not the body's operation_id (the positives own that one): the envelope check comes
    // before correlation, so these must be 400s whatever operation the URL names.
    const op = await create({ id: `neg-${v.id}`, taskId: null });
    const before = await snapshot(orch, op.id);
    const res = await send(op.token, v.payload);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(v.expected_error);
    expectRefusedUnchanged(before, await snapshot(orch, op.id));
  });

  it('has an expectation for every extraction vector', () => {
    expect(Object.keys(extractionExpected).sort()).toEqual(extractionFile.vectors.map((v) => v.id).sort());
  });

  it.each(extractionFile.vectors.map((v) => [v.id, v] as const))('extraction %s', async (id, v) => {
    const expected = extractionExpected[id];
    const opId = v.payload.operation_id ?? `${id}-${mode}`;
    const type = v.payload.task_type;
    if ('refused' in expected) {
      const op = await create({ id: opId, taskId: v.payload.task_id, type });
      const before = await snapshot(orch, op.id);
      const res = await send(op.token, v.payload);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(expected.refused);
      expectRefusedUnchanged(before, await snapshot(orch, op.id));
      return;
    }
    const op = await create({ id: opId, taskId: expected.boundTaskId, type });
    const res = await send(op.token, v.payload);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('accepted');
    const after = await snapshot(orch, op.id);
    expect(after.operation.status).toBe(expected.status);
    expect(after.operation.task_id).toBe(expected.boundTaskId);
    expect(after.operation.result).toEqual(expected.result === 'expected_data' ? v.expected_data : null);
    if (expected.errorCode) expect(after.operation.error).toMatchObject({ code: expected.errorCode });
    else expect(after.operation.error).toBeNull();
    expect(after.operation.needs_input).toBe(expected.status === 'input-required');
    if (expected.inputMessage) expect(after.operation.input_message).toBe(expected.inputMessage);
    const transitions = after.operation.events.filter((e: any) => e.kind === 'transition');
    if (expected.unresolvedCompletion) {
      expect(transitions).toEqual([]);
      const conflicts = after.operation.events.filter((e: any) => e.kind === 'conflict');
      expect(conflicts).toEqual([expect.objectContaining({ source: 'webhook', from: 'submitted', to: 'completed', detail: expect.objectContaining({ reason: 'completed_without_media_buy_id' }) })]);
    } else {
      expect(transitions).toEqual([expect.objectContaining({ source: 'webhook', from: 'submitted', to: expected.status })]);
    }
    expect(after.deliveries).toHaveLength(1);
    expect(after.deliveries[0].state).toBe('applied');
    // MCP deliveries are keyed by their idempotency_key; A2A bodies without one by content.
    if (v.format === 'mcp') expect(after.deliveries[0].idempotency_key).toBe(v.payload.idempotency_key);
    else expect(after.deliveries[0].idempotency_key).toMatch(/^content:/);
  });
});
