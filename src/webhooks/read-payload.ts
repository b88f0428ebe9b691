/**
 * The receiver's one call after authentication and strict parsing: apply the
 * envelope acceptance rules, then extract. MCP bodies must be complete
 * envelopes (idempotency_key included: it is the dedupe key). A2A bodies are
 * native A2A objects without an AdCP envelope; they are extracted as they are,
 * and carry an idempotency key only if the seller put one in the DataPart.
 */
import { validateWebhookEnvelope, type EnvelopeErrorCode } from './envelope.js';
import { extractWebhookPayload, isA2aShape, type WebhookPayload } from './extract.js';

export type ReadPayloadResult =
  | { ok: true; payload: WebhookPayload }
  | { ok: false; code: EnvelopeErrorCode | 'webhook_payload_unrecognized'; message: string };

export function readWebhookPayload(body: unknown): ReadPayloadResult {
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  if (!isObject || !isA2aShape(body as Record<string, unknown>)) {
    const envelope = validateWebhookEnvelope(body);
    if (!envelope.ok) return envelope;
  }
  return extractWebhookPayload(body);
}
