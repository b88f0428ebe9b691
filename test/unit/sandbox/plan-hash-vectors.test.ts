/**
 * Every plan-hash vector (test/fixtures/adcp-vectors/plan-hash/) through
 * `planHash`, the function the sandbox governance agent signs each token's
 * `plan_hash` with: the preimage (bookkeeping stripped, everything else kept),
 * its JCS bytes, the SHA-256, the encoded hash, and the vectors' claims that
 * two plans hash the same or differently.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { canonicalize } from '@adcp/sdk';
import { describe, expect, it } from 'vitest';
import { planHash, planHashPreimage } from '../../../src/sandbox/governance/hashes.js';

interface PlanHashVector {
  name: string;
  plan_as_supplied: Record<string, unknown>;
  cross_reference?: { same_hash_as?: string; differs_from?: string };
  expected: { preimage: Record<string, unknown>; jcs_bytes: string; sha256_hex: string; plan_hash: string };
}

const DIR = fileURLToPath(new URL('../../fixtures/adcp-vectors/plan-hash/', import.meta.url));
const files = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();
const vectors = new Map(files.map((f) => [f.replace(/\.json$/, ''), JSON.parse(readFileSync(DIR + f, 'utf8')) as PlanHashVector]));

describe('plan-hash vectors', () => {
  it('has all eleven files', () => {
    expect(files).toHaveLength(11);
  });

  it.each([...vectors])('%s', (_id, v) => {
    const preimage = planHashPreimage(v.plan_as_supplied);
    expect(preimage).toEqual(v.expected.preimage);
    expect(canonicalize(preimage)).toBe(v.expected.jcs_bytes);
    expect(createHash('sha256').update(canonicalize(preimage), 'utf8').digest('hex')).toBe(v.expected.sha256_hex);
    expect(planHash(v.plan_as_supplied)).toBe(v.expected.plan_hash);
    // Unpadded base64url of exactly 32 bytes, as the spec requires of the claim.
    expect(planHash(v.plan_as_supplied)).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const ref = v.cross_reference;
    if (ref?.same_hash_as) expect(planHash(v.plan_as_supplied)).toBe(planHash(vectors.get(ref.same_hash_as)!.plan_as_supplied));
    if (ref?.differs_from) expect(planHash(v.plan_as_supplied)).not.toBe(planHash(vectors.get(ref.differs_from)!.plan_as_supplied));
  });

  it('strips exactly the closed list of bookkeeping fields and keeps an unknown one', () => {
    const base = vectors.get('001-minimal-plan')!.plan_as_supplied;
    // Fail-safe toward inclusion: a field not on the list is part of the hash.
    expect(planHash({ ...base, lastCheckedAt: '2026-01-01T00:00:00Z' })).not.toBe(planHash(base));
    expect(planHash({ ...base, version: 99, committedBudget: 5 })).toBe(planHash(base));
  });
});
