/**
 * Which question a request to a person is, so that an answer is taken only for the
 * question the person saw (docs/ARCHITECTURE.md, People in the loop). Pure.
 *
 * A question keeps its identity, and its `requested_at`, for as long as it asks the
 * same thing: seeing it again (a poll, a webhook, reconcile, a resend's reply) changes
 * nothing, so "waiting since" and the reminders' clock stay true. A question that asks
 * something else (another message, reason, set of answers or fields) is a new one.
 */
import { createHash } from 'node:crypto';
import type { InputRequest } from './input-request.js';

/** The longest seller `reason` kept: it is a code (AdCP: `APPROVAL_REQUIRED`, …), not prose. */
export const SELLER_REASON_MAX = 200;

/** What makes a question the question it is (its times and expiry are not part of it). */
function identity(r: Omit<InputRequest, 'id'>): string {
  return canonical({
    kind: r.kind,
    message: r.message,
    reason: r.reason ?? null,
    seller_status: r.kind === 'seller_input' ? sellerStatusOf(r) : null,
    allowed: [...r.allowed].sort(),
    fields: r.fields ?? null,
  });
}

/**
 * The request with its id: a digest of what it asks and when it was asked, so the
 * same question asked at another moment is another question, and two different
 * questions asked in the same millisecond are still told apart.
 */
export function withQuestionId(request: Omit<InputRequest, 'id'>): InputRequest {
  const digest = createHash('sha256').update(`${identity(request)}\n${request.requested_at}`).digest('hex');
  return { id: `q_${digest.slice(0, 24)}`, ...request };
}

/** The identifier an answer names (`question_id`); requests stored before ids existed are named by their `requested_at`. */
export function questionIdOf(request: Pick<InputRequest, 'id' | 'requested_at'>): string {
  return request.id ?? request.requested_at;
}

/** The seller status that asked a seller question (requests stored before `seller_status` said it only in `reason`). */
export function sellerStatusOf(request: Pick<InputRequest, 'seller_status' | 'reason'>): 'input-required' | 'auth-required' {
  return request.seller_status ?? (request.reason === 'auth-required' ? 'auth-required' : 'input-required');
}

/** Whether two requests ask the same thing (whenever each was asked). */
export function sameQuestion(a: InputRequest, b: InputRequest): boolean {
  return identity(a) === identity(b);
}

/** The seller's own reason code from its reply (`reason`), when it gave a usable one. */
export function sellerReasonOf(data: Record<string, unknown> | undefined): string | undefined {
  const reason = data?.reason;
  if (typeof reason !== 'string') return undefined;
  const trimmed = reason.trim();
  return trimmed === '' ? undefined : trimmed.slice(0, SELLER_REASON_MAX);
}

/** JSON with object keys sorted, so equal values compare equal whatever their key order. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, value) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}
