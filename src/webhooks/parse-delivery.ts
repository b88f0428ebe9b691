/**
 * Everything the receiver reads out of an authenticated body, in one place and
 * one walk of the bytes: decoded once, parsed once (strict: duplicate and
 * prototype keys refused), the envelope read from that parse, and the dedupe
 * fingerprint taken from the same parsed value. The decoded text is handed on
 * as the stored payload, so nothing decodes the body a second time.
 */
import type { WebhookPayload } from './extract.js';
import { webhookFingerprint } from './fingerprint.js';
import { readWebhookPayload } from './read-payload.js';
import { strictJsonParse } from './strict-json.js';

export type ParsedDelivery =
  | { ok: true; payload: WebhookPayload; fingerprint: string; text: string }
  /** `body`: the strictly parsed body, when only the envelope was refused (a delivery report may still be one). */
  | { ok: false; code: string; message: string; body?: { value: unknown; text: string } };

export function parseDelivery(rawBody: Buffer): ParsedDelivery {
  const parsed = strictJsonParse(rawBody);
  if (!parsed.ok) return parsed;
  const read = readWebhookPayload(parsed.value);
  if (!read.ok) return { ...read, body: { value: parsed.value, text: parsed.text } };
  return { ok: true, payload: read.payload, fingerprint: webhookFingerprint(parsed.value), text: parsed.text };
}
