/**
 * Legacy HMAC-SHA256 webhook authentication (deprecated in AdCP 3.x, removed
 * in 4.0; AdCP spec, webhooks). The seller sends
 *   X-ADCP-Signature: sha256=<64 lowercase/uppercase hex>
 *   X-ADCP-Timestamp: <unix seconds>
 * where the MAC is over the bytes "<timestamp header>.<raw body>".
 *
 * Only authentication happens here. The body is not parsed: a duplicate-key
 * body has a valid MAC and is rejected afterwards by strictJsonParse with
 * `webhook_body_malformed` (a signature error would be the wrong class).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { singleHeader, type HeaderBag } from './headers.js';
import { isModeMismatch } from './mode.js';
import type { AuthResult } from './result.js';

/** Allowed clock difference either way, seconds. */
export const HMAC_WINDOW_SECONDS = 300;
/** Shortest secret the spec allows (256 bits). */
export const HMAC_MIN_SECRET_BYTES = 32;
/** Longest a previous secret stays valid after rotation. */
export const HMAC_ROTATION_GRACE_MS = 5 * 60_000;

export interface HmacSecrets {
  /** The current shared secret (the bytes of the registered string). */
  secret: string | Buffer;
  /** The secret before the last rotation, accepted until `previousValidUntilMs`. */
  previous?: { secret: string | Buffer; validUntilMs: number };
}

export interface HmacRequest {
  headers: HeaderBag;
  rawBody: Buffer;
}

export type HmacResult = AuthResult<{ timestamp: number; usedPreviousSecret: boolean }>;

const SIGNATURE_PATTERN = /^sha256=([0-9a-fA-F]{64})$/;
// Unix seconds as plain decimal digits; a sign, decimals or exponent would let
// two different headers mean the same time while signing different strings.
const TIMESTAMP_PATTERN = /^[0-9]{1,15}$/;

/**
 * Reject secrets that are too short or obviously without entropy (all one
 * repeated character), at registration time rather than per request.
 */
export function checkHmacSecret(secret: string | Buffer): { ok: true } | { ok: false; message: string } {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  if (bytes.length < HMAC_MIN_SECRET_BYTES) {
    return { ok: false, message: `HMAC secret must be at least ${HMAC_MIN_SECRET_BYTES} bytes.` };
  }
  if (bytes.every((b) => b === bytes[0])) {
    return { ok: false, message: 'HMAC secret is one repeated byte: it has no entropy.' };
  }
  return { ok: true };
}

export function computeHmacSignature(secret: string | Buffer, timestamp: string, rawBody: Buffer): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(rawBody).digest('hex');
  return `sha256=${mac}`;
}

export function verifyHmacWebhook(request: HmacRequest, secrets: HmacSecrets, now: () => number = Date.now): HmacResult {
  try {
    return verify(request, secrets, now());
  } catch (err) {
    // Nothing above should throw; if it does, fail closed without a crash.
    return { ok: false, code: 'webhook_signature_invalid', message: err instanceof Error ? err.message : String(err) };
  }
}

function verify(request: HmacRequest, secrets: HmacSecrets, nowMs: number): HmacResult {
  const { headers, rawBody } = request;
  const signature = singleHeader(headers, 'x-adcp-signature');
  const timestamp = singleHeader(headers, 'x-adcp-timestamp');

  if (signature === undefined && isModeMismatch(headers, 'hmac')) {
    return fail('webhook_mode_mismatch', 'This webhook is registered for HMAC but arrived with other credentials.');
  }
  if (signature === undefined || signature === null || signature === '') {
    return fail('webhook_signature_header_malformed', 'X-ADCP-Signature is missing, empty or repeated.');
  }
  if (timestamp === undefined || timestamp === null) {
    return fail('webhook_signature_header_malformed', 'X-ADCP-Timestamp is missing or repeated.');
  }
  if (!TIMESTAMP_PATTERN.test(timestamp)) {
    return fail('webhook_signature_header_malformed', 'X-ADCP-Timestamp must be unix seconds (digits only).');
  }
  // The window first: a stale or future delivery is refused as such whatever
  // its signature looks like (that is what tells a sender its clock is off).
  const ts = Number(timestamp);
  if (Math.abs(nowMs / 1000 - ts) > HMAC_WINDOW_SECONDS) {
    return fail('webhook_signature_window_invalid', `X-ADCP-Timestamp is more than ${HMAC_WINDOW_SECONDS} s from now.`);
  }
  // Shape before any MAC work: wrong prefix, double prefix, truncation and
  // non-hex all fail here (and a length mismatch never reaches the compare).
  const match = SIGNATURE_PATTERN.exec(signature);
  if (!match) {
    return fail('webhook_signature_header_malformed', 'X-ADCP-Signature must be "sha256=" followed by 64 hex digits.');
  }
  const presented = Buffer.from(match[1].toLowerCase(), 'hex');
  if (macMatches(secrets.secret, timestamp, rawBody, presented)) {
    return { ok: true, timestamp: ts, usedPreviousSecret: false };
  }
  const previous = secrets.previous;
  if (previous && nowMs <= previous.validUntilMs && macMatches(previous.secret, timestamp, rawBody, presented)) {
    return { ok: true, timestamp: ts, usedPreviousSecret: true };
  }
  return fail('webhook_signature_invalid', 'X-ADCP-Signature does not match the body and timestamp.');
}

function macMatches(secret: string | Buffer, timestamp: string, rawBody: Buffer, presented: Buffer): boolean {
  const expected = createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(rawBody).digest();
  return expected.length === presented.length && timingSafeEqual(expected, presented);
}

function fail(code: string, message: string): HmacResult {
  return { ok: false, code, message };
}
