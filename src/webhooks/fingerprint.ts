/**
 * Canonical payload fingerprint for webhook dedupe (AdCP spec, webhooks): a retry
 * reuses the idempotency_key *and* the whole payload, so the same key with a
 * different fingerprint is a changed payload (409), while formatting changes
 * (whitespace, key order, escapes) must not count as a change. Hence RFC 8785
 * JSON Canonicalization (JCS) of the parsed body, then SHA-256.
 *
 * Written here rather than taken from the SDK: it is a few lines, and keeping
 * it out of src/adcp means dedupe does not depend on the SDK's version.
 */
import { createHash } from 'node:crypto';

/**
 * RFC 8785 serialisation of a JSON value (as produced by JSON.parse).
 * - Strings and numbers use ECMAScript JSON.stringify rules, which RFC 8785
 *   adopts (shortest round-trip number form, minimal escapes).
 * - Object members are sorted by UTF-16 code units, which is what JavaScript's
 *   default string comparison does.
 * Numbers beyond double precision were already rounded by JSON.parse; two
 * bodies differing only there fingerprint alike, an accepted limitation.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('JCS cannot represent a non-finite number');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const members: string[] = [];
    for (const key of Object.keys(obj).sort()) {
      if (obj[key] === undefined) continue; // not JSON; matches JSON.stringify
      members.push(`${JSON.stringify(key)}:${canonicalJson(obj[key])}`);
    }
    return `{${members.join(',')}}`;
  }
  throw new TypeError(`JCS cannot represent a ${typeof value}`);
}

/** "sha256:<hex>" of the canonical form; the prefix leaves room to change algorithm later. */
export function webhookFingerprint(payload: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(payload), 'utf8').digest('hex')}`;
}
