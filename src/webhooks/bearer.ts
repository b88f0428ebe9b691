/**
 * Legacy Bearer webhook authentication (AdCP spec, webhooks): the seller echoes the
 * credential we registered in `Authorization: Bearer <credentials>`. There is
 * no body integrity, so this proves only who sent it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { singleHeader, type HeaderBag } from './headers.js';
import { isModeMismatch } from './mode.js';
import type { AuthResult } from './result.js';

/** Shortest credential the spec allows. */
export const BEARER_MIN_LENGTH = 32;

export interface BearerCredentials {
  token: string;
  /** The token before the last rotation, accepted until `validUntilMs`. */
  previous?: { token: string; validUntilMs: number };
}

export type BearerResult = AuthResult<{ usedPreviousToken: boolean }>;

export function verifyBearerWebhook(
  headers: HeaderBag,
  credentials: BearerCredentials,
  now: () => number = Date.now,
): BearerResult {
  const auth = singleHeader(headers, 'authorization');
  if (auth === undefined && isModeMismatch(headers, 'bearer')) {
    return fail('webhook_mode_mismatch', 'This webhook is registered for Bearer but arrived with other credentials.');
  }
  if (typeof auth !== 'string') {
    return fail('webhook_signature_header_malformed', 'Authorization header is missing or repeated.');
  }
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(auth);
  if (!match) return fail('webhook_signature_header_malformed', 'Authorization must be "Bearer <credentials>".');
  const presented = match[1];
  if (sameSecret(presented, credentials.token)) return { ok: true, usedPreviousToken: false };
  const previous = credentials.previous;
  if (previous && now() <= previous.validUntilMs && sameSecret(presented, previous.token)) {
    return { ok: true, usedPreviousToken: true };
  }
  return fail('webhook_signature_invalid', 'Bearer credentials do not match.');
}

/**
 * Constant-time comparison that also hides the length: both sides are hashed
 * to 32 bytes first, so timing reveals neither a prefix nor the token length.
 */
function sameSecret(presented: string, expected: string): boolean {
  if (expected.length === 0) return false;
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

function fail(code: string, message: string): BearerResult {
  return { ok: false, code, message };
}
