/**
 * Reading AdCP errors out of replies, in the wire shape first and then in ours.
 *
 * Two steps on purpose: `WireAdcpError` is exactly what the seller said (what the
 * conformance vectors compare against: `recovery: "deferred"`, `retry_after: 86400`
 * kept verbatim), `toAdcpError` then applies our rules (recovery resolved, retry
 * clamped). The SDK's `extractAdcpErrorFromMcp` / `extractAdcpErrorFromTransport`
 * are not used: they guess codes from free text ("Rate limit exceeded" becomes
 * RATE_LIMITED), accept an empty `code`, drop unknown `recovery` values and invent
 * `message: ''`, each of which a vector in transport-error-mapping.json forbids.
 */
import { clampRetryAfter, resolveRecovery } from './recovery.js';
import { explainSignatureRefusal } from './signature-refusal.js';
import { isJsonObject, nonEmptyString, type JsonObject } from './json.js';
import type { AdcpError } from './types.js';

/** An AdCP error as the seller sent it (`core/error.json` fields we know). */
export interface WireAdcpError {
  code: string;
  message?: string;
  recovery?: string;
  field?: string;
  suggestion?: string;
  retry_after?: number;
  details?: unknown;
}

/** Accept an error object only when `code` is a non-empty string (vectors `mcp-invalid-code-type`, `mcp-empty-code`, `mcp-missing-code-field`). */
export function readWireError(value: unknown): WireAdcpError | undefined {
  if (!isJsonObject(value)) return undefined;
  const code = nonEmptyString(value.code);
  if (!code) return undefined;
  const out: WireAdcpError = { code };
  if (typeof value.message === 'string') out.message = value.message;
  if (typeof value.recovery === 'string') out.recovery = value.recovery;
  if (typeof value.field === 'string') out.field = value.field;
  if (typeof value.suggestion === 'string') out.suggestion = value.suggestion;
  if (typeof value.retry_after === 'number') out.retry_after = value.retry_after;
  if (value.details !== undefined && value.details !== null) out.details = value.details;
  return out;
}

/**
 * The error a task payload carries: `adcp_error` (the envelope form) first, else
 * the first well-formed entry of `errors[]` (the task-response form).
 */
export function payloadError(payload: JsonObject | undefined): WireAdcpError | undefined {
  if (!payload) return undefined;
  const envelope = readWireError(payload.adcp_error);
  if (envelope) return envelope;
  if (Array.isArray(payload.errors)) {
    for (const entry of payload.errors) {
      const err = readWireError(entry);
      if (err) return err;
    }
  }
  return undefined;
}

/** `error.data.adcp_error` of a JSON-RPC error object (e.g. -32029 before dispatch); nothing else is guessed. */
export function jsonRpcError(error: unknown): WireAdcpError | undefined {
  if (!isJsonObject(error)) return undefined;
  const data = error.data;
  return isJsonObject(data) ? readWireError(data.adcp_error) : undefined;
}

/** Our normalized error: recovery resolved, retry_after clamped to 1..3600 s. */
export function toAdcpError(wire: WireAdcpError): AdcpError {
  const out: AdcpError = { code: wire.code, recovery: resolveRecovery(wire.code, wire.recovery) };
  if (wire.message !== undefined) out.message = wire.message;
  const retry = clampRetryAfter(wire.retry_after);
  if (retry !== undefined) out.retryAfterSeconds = retry;
  if (wire.field !== undefined) out.field = wire.field;
  if (wire.suggestion !== undefined) out.suggestion = wire.suggestion;
  if (wire.details !== undefined) out.details = wire.details;
  // A refused request signature carried as an AdCP error says what to check, as the 401 does.
  return explainSignatureRefusal(out);
}
