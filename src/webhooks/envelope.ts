/**
 * The MCP webhook envelope (`core/mcp-webhook-payload.json`, AdCP 3.0.26, with
 * the 3.1 fields accepted as optional) and its validation with receiver-level
 * error codes (`webhook-receiver-envelope.json`): a valid-looking inner result
 * posted bare, or an envelope without its dedupe key or with a non-task status,
 * must be rejected before dispatch.
 */
import { z } from 'zod';
import { ADCP_TASK_STATUSES } from '../domain/status.js';

/** The spec's idempotency_key shape (16–255 chars of a URL/filename-safe set). */
const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:-]{16,255}$/;

export const webhookEnvelopeSchema = z.looseObject({
  // Required in 3.0.26.
  idempotency_key: z.string().regex(IDEMPOTENCY_KEY),
  task_id: z.string().min(1),
  // Any non-empty string, not the 3.0.26 enum: later versions add task types
  // (governance tasks are missing from 3.0.26) and a delivery must not be
  // rejected for naming one; routing uses our own operation, not this field.
  task_type: z.string().min(1),
  // A media-buy lifecycle value ("active") here is the classic mistake; only
  // task statuses are allowed.
  status: z.enum(ADCP_TASK_STATUSES),
  timestamp: z.iso.datetime({ offset: true }),
  // Optional in 3.0.26 (operation_id becomes required in 3.1).
  operation_id: z.string().min(1).optional(),
  protocol: z.string().optional(),
  message: z.string().optional(),
  context_id: z.string().optional(),
  // `null` is tolerated as "no result" (some senders serialise absent fields so).
  result: z.record(z.string(), z.unknown()).nullable().optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  // 3.1+.
  notification_id: z.string().optional(),
  token: z.string().optional(),
});

export type WebhookEnvelope = z.infer<typeof webhookEnvelopeSchema>;

export type EnvelopeErrorCode =
  | 'missing_envelope_fields'
  | 'missing_idempotency_key'
  | 'invalid_envelope_status'
  | 'invalid_envelope_field';

export type EnvelopeResult =
  | { ok: true; envelope: WebhookEnvelope }
  | { ok: false; code: EnvelopeErrorCode; message: string };

const CORE_FIELDS = ['task_id', 'task_type', 'status', 'timestamp'] as const;

export function validateWebhookEnvelope(body: unknown): EnvelopeResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, code: 'missing_envelope_fields', message: 'Webhook body must be a JSON object envelope.' };
  }
  const record = body as Record<string, unknown>;
  // Most specific diagnosis first: a bare inner result lacks the core fields
  // (and the key); an otherwise complete envelope may lack only the key.
  const missing = CORE_FIELDS.filter((f) => record[f] === undefined);
  if (missing.length > 0) {
    return { ok: false, code: 'missing_envelope_fields', message: `Webhook envelope is missing ${missing.join(', ')}.` };
  }
  if (record.idempotency_key === undefined) {
    return { ok: false, code: 'missing_idempotency_key', message: 'Webhook envelope has no idempotency_key.' };
  }
  const parsed = webhookEnvelopeSchema.safeParse(body);
  if (parsed.success) return { ok: true, envelope: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue.path.join('.') || '(root)';
  if (field === 'status') {
    return {
      ok: false,
      code: 'invalid_envelope_status',
      message: `Webhook status ${JSON.stringify(record.status)} is not an AdCP task status.`,
    };
  }
  return { ok: false, code: 'invalid_envelope_field', message: `Webhook envelope field ${field}: ${issue.message}` };
}
