/**
 * What an HTTP error response said, kept so a 429/5xx can be turned into an
 * AdCP error with its `retry_after` (AdCP spec, polling, timeouts, retries, reconciliation: never retry earlier).
 */
import { parseJsonObject } from './json.js';
import { jsonRpcError, payloadError, toAdcpError, type WireAdcpError } from './extract-error.js';
import { clampRetryAfter } from './recovery.js';
import { readTextUpTo } from './reply-limit.js';
import { challengeCode, explainSignatureRefusal, isSignatureRefusalCode } from './signature-refusal.js';
import type { AdcpError } from './types.js';

export interface HttpFailure {
  status: number;
  /** Response body text, capped: error bodies are for diagnosis only. */
  body?: string;
  /** `Retry-After` header in seconds (delta-seconds or HTTP-date). */
  retryAfterSeconds?: number;
  /** `WWW-Authenticate`, where a seller names why it refused our request signature. */
  wwwAuthenticate?: string;
}

const BODY_CAP = 64 * 1024;

export function parseRetryAfterHeader(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return clampRetryAfter(Number(value));
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : clampRetryAfter((at - now) / 1000);
}

/**
 * Read an error response: its status, `Retry-After` and at most BODY_CAP bytes of its
 * body, the rest left unread (an error body is for diagnosis; a seller could make it
 * endless). The body is consumed: a caller that passes the response on gives
 * `failure.body` in its place (see mcp-transport.ts).
 */
export async function readHttpFailure(response: Response): Promise<HttpFailure> {
  const failure: HttpFailure = { status: response.status };
  const retry = parseRetryAfterHeader(response.headers.get('retry-after'));
  if (retry !== undefined) failure.retryAfterSeconds = retry;
  const challenge = response.headers.get('www-authenticate');
  if (challenge) failure.wwwAuthenticate = challenge;
  try {
    failure.body = await readTextUpTo(response.body, BODY_CAP);
  } catch {
    // A body we cannot read is not worth failing over; the status says enough.
  }
  return failure;
}

/** An AdCP error in the body: a JSON-RPC error with data.adcp_error, or a bare adcp_error / errors[]. */
function bodyError(body: string | undefined): WireAdcpError | undefined {
  if (!body) return undefined;
  const parsed = parseJsonObject(body);
  if (!parsed) return undefined;
  return jsonRpcError(parsed.error) ?? payloadError(parsed);
}

/**
 * The AdCP error an HTTP failure stands for. The body's own error wins; a bare
 * 429 or 5xx becomes RATE_LIMITED / SERVICE_UNAVAILABLE (transient), so callers
 * back off the same way whatever layer refused them. `Retry-After` fills in a
 * missing `retry_after`. Other statuses carry no AdCP meaning of their own.
 */
export function httpFailureError(failure: HttpFailure): AdcpError | undefined {
  const refusal = signatureRefusal(failure);
  if (refusal) return refusal;
  const wire = bodyError(failure.body);
  let error: AdcpError | undefined = wire ? toAdcpError(wire) : undefined;
  if (!error && failure.status === 429) error = { code: 'RATE_LIMITED', recovery: 'transient' };
  if (!error && failure.status >= 500) error = { code: 'SERVICE_UNAVAILABLE', recovery: 'transient' };
  if (!error) return undefined;
  if (!wire) error.details = { http_status: failure.status };
  if (error.retryAfterSeconds === undefined && failure.retryAfterSeconds !== undefined) {
    error.retryAfterSeconds = failure.retryAfterSeconds;
  }
  return error;
}

/**
 * A 401 refusing our request signature (signature-refusal.ts): the code from
 * `WWW-Authenticate: Signature error="…"`, else from a body `{"error": "<code>"}` (what the
 * SDK's verifier answers beside the header), with the seller's message if any.
 */
function signatureRefusal(failure: HttpFailure): AdcpError | undefined {
  if (failure.status !== 401) return undefined;
  const body = failure.body ? parseJsonObject(failure.body) : undefined;
  const bodyCode = typeof body?.error === 'string' && isSignatureRefusalCode(body.error) ? body.error : undefined;
  const code = challengeCode(failure.wwwAuthenticate) ?? bodyCode;
  if (!code) return undefined;
  const message = typeof body?.message === 'string' && body.message.trim() !== '' ? body.message.slice(0, 500) : undefined;
  return explainSignatureRefusal({ code, recovery: 'terminal', ...(message && { message }), details: { http_status: 401 } });
}
