/**
 * Fuzzing the real webhook route over loopback HTTP with fast-check.
 *
 *  1. Garbled, missing or near-valid-but-wrong credentials (X-ADCP-Signature,
 *     X-ADCP-Timestamp, Signature-Input, Signature, Content-Digest,
 *     Content-Type, Authorization) on hostile bodies, against an HMAC-mode and
 *     an RFC 9421-mode operation: never a 5xx, and the operation (row and
 *     events, as GET /v1/operations/:id shows them) and its stored deliveries
 *     never change.
 *  2. Hostile bodies *correctly signed* (random JSON, random text and bytes,
 *     near-valid envelopes with mutated fields, duplicate keys): never a 5xx;
 *     a refusal changes nothing; an acceptance is stored and applied.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { createWebhookOperation, type WebhookOperation } from '../helpers/webhook-operation.js';
import { publicJwk, signWebhook, TEST_KEYS } from '../unit/webhooks/signing-helpers.js';

type Mode = 'hmac' | 'rfc9421';
const NUM_RUNS = 150;

describe('webhook route fuzz', () => {
  let orch: TestOrchestrator;
  let agentId: string;

  beforeAll(async () => {
    orch = await startOrchestrator();
    agentId = await orch.registerAgent({ url: 'http://127.0.0.1:9/mcp', webhook_signing: { jwks: { keys: TEST_KEYS.map(publicJwk) } } });
  });
  afterAll(async () => orch?.close());

  // ------------------------------------------------------------ helpers

  type Op = WebhookOperation & { mode: Mode };
  const createOperation = (mode: Mode): Promise<Op> => createWebhookOperation(orch, agentId, mode);

  async function snapshot(opId: string) {
    const view = await orch.api('GET', `/v1/operations/${opId}`);
    expect(view.status).toBe(200);
    const deliveries = await orch.app.store.db.kysely.selectFrom('webhook_deliveries').selectAll().where('operation_id', '=', opId).execute();
    return { operation: view.body, deliveries };
  }

  async function post(token: string, body: Buffer, headers: Record<string, string>) {
    const res = await fetch(`${orch.url}/webhooks/adcp/${token}`, { method: 'POST', headers, body: new Uint8Array(body) });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* keep text */
    }
    return { status: res.status, body: parsed };
  }

  const hmacHeaders = (secret: string, ts: string, body: Buffer) => ({
    'content-type': 'application/json',
    'x-adcp-timestamp': ts,
    'x-adcp-signature': `sha256=${createHmac('sha256', secret).update(`${ts}.`).update(body).digest('hex')}`,
  });
  const rfcHeaders = (op: Op, body: Buffer, createdSeconds = Math.floor(Date.now() / 1000)) =>
    signWebhook({ url: `${orch.config.ADCP_ORCH_PUBLIC_URL}/webhooks/adcp/${op.token}`, body, createdSeconds });
  const nowSeconds = () => Math.floor(Date.now() / 1000);

  // ------------------------------------------------------------ bodies

  const STATUSES = ['submitted', 'working', 'input-required', 'auth-required', 'completed', 'failed', 'canceled', 'rejected', 'active', 'unknown', ''];

  /** A valid envelope for `op`, then zero to three mutations of its fields. */
  const nearEnvelope = (op: Op) =>
    fc
      .tuple(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('delete' as const), field: fc.constantFrom('idempotency_key', 'task_id', 'task_type', 'status', 'timestamp', 'operation_id', 'result') }),
            fc.record({
              kind: fc.constant('set' as const),
              field: fc.constantFrom('idempotency_key', 'task_id', 'task_type', 'status', 'timestamp', 'operation_id', 'result', 'message', 'context', 'context_id', 'protocol', 'signature', '__proto__'),
              value: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(...STATUSES), fc.string()),
            }),
          ),
          { maxLength: 3 },
        ),
        fc.constantFrom(...STATUSES.slice(0, 8)),
      )
      .map(([mutations, status]) => {
        const env: Record<string, unknown> = {
          idempotency_key: `whk_${randomBytes(10).toString('hex')}`,
          operation_id: op.id,
          task_id: op.taskId,
          task_type: 'create_media_buy',
          status,
          timestamp: new Date().toISOString(),
          result: { media_buy_id: 'mb_fuzz', packages: [] },
        };
        for (const m of mutations) {
          if (m.kind === 'delete') delete env[m.field];
          else Object.defineProperty(env, m.field, { value: m.value, enumerable: true, configurable: true, writable: true });
        }
        return JSON.stringify(env);
      });

  /** JSON text with one member repeated (conflicting value), at the top level or nested. */
  const duplicateKeys = (op: Op) =>
    fc.tuple(nearEnvelope(op), fc.constantFrom('status', 'task_id', 'idempotency_key', 'x'), fc.jsonValue({ maxDepth: 1 }), fc.boolean()).map(([text, key, value, nested]) => {
      const member = `${JSON.stringify(key)}:${JSON.stringify(value ?? null)}`;
      const dup = `{${member},${member.replace(/:.*/, ':"other"')}}`;
      return nested ? text.replace(/^\{/, `{"result":${dup},`) : text.replace(/^\{/, `{${member},`);
    });

  const bodies = (op: Op) =>
    fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
      fc.string({ unit: 'binary', maxLength: 200 }).map((s) => Buffer.from(s)),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
      // Weighted up so that some runs are accepted (the acceptance branch is checked too).
      { weight: 3, arbitrary: nearEnvelope(op).map((s) => Buffer.from(s)) },
      duplicateKeys(op).map((s) => Buffer.from(s)),
      // A native A2A shape with a random state.
      fc.tuple(fc.string(), fc.jsonValue({ maxDepth: 2 })).map(([state, data]) => Buffer.from(JSON.stringify({ id: 'a2a-1', status: { state, message: { parts: [{ kind: 'data', data }] } } }))),
    );

  // ------------------------------------------------------------ headers

  /** Header values fetch can put on the wire: visible ASCII, space, and Latin-1. */
  const headerChar = fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c));
  const garbage = fc.string({ unit: headerChar, maxLength: 120 });

  const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/jsonp', 'application/json;;', '*/*', ';', 'multipart/form-data; boundary=x'];

  /** Credentials that look right but cannot authenticate this body for this operation. */
  const nearCredentials = (op: Op, body: Buffer) =>
    fc.constantFrom(
      // Signed for other bytes.
      () => hmacHeaders(op.secret, String(nowSeconds()), Buffer.concat([body, Buffer.from(' ')])),
      // Right bytes, wrong secret.
      () => hmacHeaders(randomBytes(32).toString('base64url'), String(nowSeconds()), body),
      // Right bytes and secret, outside the window.
      () => hmacHeaders(op.secret, String(nowSeconds() - 3600), body),
      // RFC 9421 over other bytes (digest mismatch), and over the right bytes for another URL.
      () => rfcHeaders(op, Buffer.concat([body, Buffer.from('x')])),
      () => signWebhook({ url: `${orch.config.ADCP_ORCH_PUBLIC_URL}/webhooks/adcp/other-token`, body, createdSeconds: nowSeconds() }),
      // RFC 9421 over the right bytes, an hour old; and with the request tag.
      () => rfcHeaders(op, body, nowSeconds() - 3600),
      () => signWebhook({ url: `${orch.config.ADCP_ORCH_PUBLIC_URL}/webhooks/adcp/${op.token}`, body, createdSeconds: nowSeconds(), tag: 'adcp/request-signing/v1' }),
      // The other mode, valid in itself.
      () => (op.mode === 'hmac' ? rfcHeaders(op, body) : hmacHeaders(op.secret, String(nowSeconds()), body)),
      () => ({ authorization: `Bearer ${op.secret}`, 'content-type': 'application/json' }),
      () => ({}),
    );

  const AUTH_HEADERS = ['x-adcp-signature', 'x-adcp-timestamp', 'signature-input', 'signature', 'content-digest', 'content-type', 'authorization'];

  /** Near-valid credentials, then some headers replaced by garbage, dropped, or fragments of valid ones. */
  const headersFor = (op: Op, body: Buffer) =>
    fc
      .tuple(
        nearCredentials(op, body),
        fc.array(
          fc.tuple(
            fc.oneof(fc.constantFrom(...AUTH_HEADERS), garbage.map((s) => `x-fuzz-${s.replace(/[^a-z0-9-]/gi, '')}`)),
            fc.oneof(garbage, fc.constantFrom(...CONTENT_TYPES), fc.constant(null), fc.constantFrom('sha256=' + 'ab'.repeat(32), 'sig1=:AAAA:', 'sha-256=:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=:', '0', '-1', '99999999999999999999')),
          ),
          { maxLength: 4 },
        ),
      )
      .map(([make, edits]) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(make() as Record<string, string>)) headers[k.toLowerCase()] = v;
        for (const [name, value] of edits) {
          if (value === null) delete headers[name];
          else headers[name] = value;
        }
        return headers;
      });

  // ------------------------------------------------------------ properties

  it.each<Mode>(['hmac', 'rfc9421'])('%s operation: garbled or misdirected credentials never give a 5xx and never change the operation', async (mode) => {
    const op = await createOperation(mode);
    const before = await snapshot(op.id);
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        bodies(op).chain((body) => headersFor(op, body).map((headers) => ({ body, headers }))),
        async ({ body, headers }) => {
          const res = await post(op.token, body, headers);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          expect(res.status).toBeGreaterThanOrEqual(400);
          expect(res.status).toBeLessThan(500);
          expect(await snapshot(op.id)).toEqual(before);
        },
      ),
      { numRuns: NUM_RUNS },
    );
    // The runs reached the authentication step, not only the content-type check.
    expect(statuses.get(401) ?? 0).toBeGreaterThan(NUM_RUNS / 4);
  });

  it.each<Mode>(['hmac', 'rfc9421'])('%s operation: hostile bodies, correctly signed, never give a 5xx; refusals change nothing', async (mode) => {
    const outcomes = new Map<number, number>();
    // A template operation only to build generators; each run gets a fresh operation.
    const template = await createOperation(mode);
    await fc.assert(
      fc.asyncProperty(bodies(template), async (templateBody) => {
        const op = await createOperation(mode);
        // Point the template's ids at this run's operation, so near-valid envelopes can be accepted.
        const body = Buffer.from(templateBody.toString('latin1').split(template.id).join(op.id).split(template.taskId).join(op.taskId), 'latin1');
        const before = await snapshot(op.id);
        const headers = mode === 'hmac' ? hmacHeaders(op.secret, String(nowSeconds()), body) : rfcHeaders(op, body);
        const res = await post(op.token, body, headers);
        outcomes.set(res.status, (outcomes.get(res.status) ?? 0) + 1);
        expect(res.status).toBeLessThan(500);
        const after = await snapshot(op.id);
        if (res.status === 200) {
          expect(after.deliveries).toHaveLength(1);
          expect(after.deliveries[0].state).toBe('applied');
        } else if (res.status === 409 && res.body.error.code === 'webhook_result_invalid') {
          // A terminal result that is not the task's response: the delivery is kept (applied as
          // refused) and audited as a conflict; the operation is untouched.
          expect(after.operation.status).toBe('submitted');
          expect(after.operation.result).toBeNull();
          expect(after.deliveries.map((d) => [d.state, d.outcome])).toEqual([['applied', 'result_invalid']]);
          expect(after.operation.events.at(-1)).toMatchObject({ kind: 'conflict', detail: { reason: 'result_invalid' } });
        } else if (res.status === 409) {
          // Correlation conflict (task, operation or task type): audited as an event, nothing applied or stored.
          expect(res.body.error.code).toMatch(/^webhook_task(_type)?_conflict$/);
          expect(after.operation.status).toBe('submitted');
          expect(after.operation.result).toBeNull();
          expect(after.deliveries).toEqual([]);
        } else {
          expect(res.status).toBe(400);
          expect(res.body.error.code).toMatch(/^(webhook_body_malformed|webhook_payload_unrecognized|missing_envelope_fields|missing_idempotency_key|invalid_envelope_status|invalid_envelope_field)$/);
          expect(after).toEqual(before);
        }
      }),
      { numRuns: NUM_RUNS },
    );
    // Both sides were exercised: some accepted, most refused.
    expect(outcomes.get(200) ?? 0).toBeGreaterThan(0);
    expect(outcomes.get(400) ?? 0).toBeGreaterThan(NUM_RUNS / 3);
  });
});
