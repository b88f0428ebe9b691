/**
 * The two hashes a governance token carries, computed the one way the spec
 * defines, with the SDK's RFC 8785 (JCS) canonicalizer:
 *
 * - `plan_hash` = base64url_no_pad(SHA-256(JCS(plan))) over the plan state the
 *   agent just evaluated, minus the spec's closed list of bookkeeping fields
 *   (governance spec, "Plan binding and audit"). The sandbox keeps that
 *   bookkeeping on the stored plan object itself, so the stripping here is
 *   what makes the hash equal to the hash of the plan as supplied.
 * - `authorized_payload_hash` = base64url_no_pad(SHA-256(JCS(payload minus
 *   top-level `governance_context` and `context`))): binds a token to the exact
 *   seller arguments it approved, `idempotency_key` included. The seller
 *   recomputes it over the request it receives.
 */
import { createHash } from 'node:crypto';
import { canonicalize } from '@adcp/sdk';

/** Closed list: governance agents MUST NOT extend or shrink it. */
export const PLAN_BOOKKEEPING_FIELDS = [
  'version',
  'status',
  'syncedAt',
  'revisionHistory',
  'committedBudget',
  'committedByType',
] as const;

/** Closed list of top-level fields a governed payload hash leaves out. */
export const PAYLOAD_HASH_EXCLUDED_FIELDS = ['governance_context', 'context'] as const;

const sha256Base64url = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64url');

function without(value: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...value };
  for (const f of fields) delete copy[f];
  return copy;
}

/** The plan-hash preimage of a stored plan state (bookkeeping removed; everything else kept, explicit nulls too). */
export function planHashPreimage(planState: Record<string, unknown>): Record<string, unknown> {
  return without(planState, PLAN_BOOKKEEPING_FIELDS);
}

export function planHash(planState: Record<string, unknown>): string {
  return sha256Base64url(canonicalize(planHashPreimage(planState)));
}

export function governedPayloadHash(payload: Record<string, unknown>): string {
  return sha256Base64url(canonicalize(without(payload, PAYLOAD_HASH_EXCLUDED_FIELDS)));
}
