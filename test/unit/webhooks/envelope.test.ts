/** webhook-receiver-envelope.json and webhook-payload-extraction.json, every vector. */
import { describe, expect, it } from 'vitest';
import { validateWebhookEnvelope } from '../../../src/webhooks/envelope.js';
import { extractWebhookPayload } from '../../../src/webhooks/extract.js';
import { webhookFingerprint } from '../../../src/webhooks/fingerprint.js';
import { readWebhookPayload } from '../../../src/webhooks/read-payload.js';
import { readVectorFile } from './vectors.js';

interface EnvelopeVector {
  id: string;
  payload: Record<string, unknown>;
  same_event_as?: string;
  expected_error?: string;
}
const envelopeFile = readVectorFile<{ positive: EnvelopeVector[]; negative: EnvelopeVector[] }>('webhook-receiver-envelope.json');

interface ExtractionVector {
  id: string;
  format: 'mcp' | 'a2a';
  payload: Record<string, unknown>;
  expected_format: 'mcp' | 'a2a';
  expected_data: Record<string, unknown> | null;
}
const extractionFile = readVectorFile<{ vectors: ExtractionVector[] }>('webhook-payload-extraction.json');

describe('webhook-receiver-envelope vectors', () => {
  it.each(envelopeFile.positive.map((v) => [v.id, v] as const))('accepts %s', (_id, v) => {
    expect(validateWebhookEnvelope(v.payload)).toMatchObject({ ok: true });
    const read = readWebhookPayload(v.payload);
    expect(read).toMatchObject({
      ok: true,
      payload: { format: 'mcp', taskId: v.payload.task_id, status: v.payload.status, idempotencyKey: v.payload.idempotency_key },
    });
    expect(read.ok && read.payload.timestamp).toBe(Date.parse(v.payload.timestamp as string));
    if (v.same_event_as) {
      // A retry of the same event: same key, same canonical fingerprint (so it dedupes, not 409).
      const original = envelopeFile.positive.find((p) => p.id === v.same_event_as)!;
      expect(v.payload.idempotency_key).toBe(original.payload.idempotency_key);
      expect(webhookFingerprint(v.payload)).toBe(webhookFingerprint(original.payload));
    }
  });

  it.each(envelopeFile.negative.map((v) => [v.id, v] as const))('rejects %s', (_id, v) => {
    expect(validateWebhookEnvelope(v.payload)).toMatchObject({ ok: false, code: v.expected_error });
    expect(readWebhookPayload(v.payload)).toMatchObject({ ok: false, code: v.expected_error });
  });
});

describe('webhook-payload-extraction vectors', () => {
  it.each(extractionFile.vectors.map((v) => [v.id, v] as const))('%s', (_id, v) => {
    const result = extractWebhookPayload(v.payload);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.payload.format).toBe(v.expected_format);
    expect(result.payload.data).toEqual(v.expected_data);
    const status = typeof v.payload.status === 'string' ? v.payload.status : (v.payload.status as { state: string }).state;
    expect(result.payload.status).toBe(status);
    expect(result.payload.taskId).toBe(v.payload.task_id ?? v.payload.id);
    // An AdCP error in the data is surfaced as such.
    const adcpError = (v.expected_data as { adcp_error?: { code: string } } | null)?.adcp_error;
    if (adcpError) expect(result.payload.error).toMatchObject({ code: adcpError.code });
    else expect(result.payload.error).toBeUndefined();
  });
});

describe('envelope and extraction details', () => {
  const base = {
    idempotency_key: 'whk_0123456789abcdef',
    task_id: 'task_1',
    task_type: 'create_media_buy',
    status: 'completed',
    timestamp: '2026-01-01T00:00:00Z',
  };

  it('accepts 3.1 fields and unknown extra fields', () => {
    const body = { ...base, operation_id: 'op_1', notification_id: 'n1', token: 't', context: { ref: 1 }, extra: true };
    expect(readWebhookPayload(body)).toMatchObject({
      ok: true,
      payload: { operationId: 'op_1', notificationId: 'n1', token: 't', context: { ref: 1 } },
    });
  });

  it.each([
    ['short idempotency_key', { idempotency_key: 'short' }],
    ['bad timestamp', { timestamp: 'yesterday' }],
    ['result not an object', { result: [1] }],
    ['empty task_id', { task_id: '' }],
  ])('rejects %s as an invalid field', (_label, change) => {
    expect(validateWebhookEnvelope({ ...base, ...change })).toMatchObject({ ok: false, code: 'invalid_envelope_field' });
  });

  it('rejects non-object bodies', () => {
    for (const body of [null, [], 'x', 1]) {
      expect(validateWebhookEnvelope(body)).toMatchObject({ ok: false, code: 'missing_envelope_fields' });
      expect(readWebhookPayload(body).ok).toBe(false);
    }
  });

  it('clamps and rounds up retry_after, and reads errors[] when there is no adcp_error', () => {
    const r1 = extractWebhookPayload({ ...base, status: 'failed', result: { adcp_error: { code: 'RATE_LIMITED', retry_after: 0.2 } } });
    expect(r1.ok && r1.payload.error).toEqual({ code: 'RATE_LIMITED', retryAfterSeconds: 1 });
    const r2 = extractWebhookPayload({ ...base, status: 'failed', result: { errors: [{ code: 'X', message: 'm', field: 'f', recovery: 'odd' }] } });
    expect(r2.ok && r2.payload.error).toEqual({ code: 'X', message: 'm', field: 'f' });
  });

  it('A2A: prefers the AdCP task_id from the DataPart, and its pending status over a completed A2A call', () => {
    const result = extractWebhookPayload({
      id: 'a2a-task-9',
      contextId: 'ctx-1',
      status: { state: 'completed', timestamp: '2026-01-01T00:00:00Z' },
      artifacts: [{ parts: [{ kind: 'data', data: { task_id: 'adcp_task_1', status: 'submitted' } }] }],
    });
    expect(result).toMatchObject({
      ok: true,
      payload: { format: 'a2a', taskId: 'adcp_task_1', taskIdSource: 'adcp', status: 'submitted', a2aTaskId: 'a2a-task-9', a2aContextId: 'ctx-1' },
    });
  });

  it('A2A: accepts A2A 1.0 state spellings and refuses unknown states', () => {
    const ok = extractWebhookPayload({ taskId: 't', status: { state: 'TASK_STATE_INPUT_REQUIRED' } });
    expect(ok).toMatchObject({ ok: true, payload: { status: 'input-required', taskIdSource: 'a2a' } });
    expect(extractWebhookPayload({ id: 't', status: { state: 'paused' } })).toMatchObject({ ok: false });
  });
});
