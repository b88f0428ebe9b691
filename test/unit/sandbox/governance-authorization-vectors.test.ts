/**
 * governance-authorization.json, all of it that concerns issuing and checking
 * tokens:
 * - payload_hash_cases through `governedPayloadHash` (what the governance agent
 *   signs as `authorized_payload_hash` and the seller recomputes);
 * - signed_jws: every one of the 27 tokens through the seller's
 *   `verifyGovernanceContext`, with the vector's verdict and error code; and
 *   the agent's signer, given the vectors' test key, reproduces byte for byte
 *   every well-formed token (deterministic Ed25519, claims in the given order);
 * - authorization_cases: each combination as a real token (the agent's signer,
 *   or, for the missing critical markers it never produces, jose by hand)
 *   checked by the seller's verifier.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createPrivateKey } from 'node:crypto';
import { canonicalize } from '@adcp/sdk';
import { CompactSign } from 'jose';
import { describe, expect, it } from 'vitest';
import { governedPayloadHash } from '../../../src/sandbox/governance/hashes.js';
import { CRITICAL_CLAIMS, GovernanceSigner } from '../../../src/sandbox/governance/signing.js';
import {
  GovernanceTokenError,
  localGovernanceKeys,
  verifyGovernanceContext,
  type TokenExpectations,
} from '../../../src/sandbox/governance-verifier.js';

type Json = Record<string, any>;
const file = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../fixtures/adcp-vectors/governance/governance-authorization.json', import.meta.url)), 'utf8'),
) as Json;
const signed = file.signed_jws as Json;
const defaults = signed.verification_defaults as Json;
const { _private_d_for_test_only: privateD, $comment: _note, ...publicKey } = signed.test_key as Json;
const keys = localGovernanceKeys({ keys: [publicKey as never] });
const signer = GovernanceSigner.fromPrivateJwk({ ...(publicKey as { kid: string; kty: string; crv: string; x: string }), d: privateD });

/** The verdict of the seller's verifier: 'accept' or the error code. */
async function verdict(token: string, v: Json, consumedJti?: string): Promise<string> {
  const expect: TokenExpectations = {
    issuer: v.expected_issuer,
    audiences: [v.expected_audience],
    phase: v.expected_phase,
    task: v.expected_task,
    payload: v.payload,
    authenticatedCaller: v.authenticated_caller,
    commitment: v.actual_commitment,
    nowSeconds: v.now,
    clockSkewSeconds: v.clock_skew_seconds,
    jtiSeen: (_iss, _aud, jti) => jti === consumedJti,
  };
  try {
    await verifyGovernanceContext(token, keys, expect);
    return 'accept';
  } catch (err) {
    if (err instanceof GovernanceTokenError) return err.code;
    throw err;
  }
}

describe('governance-authorization vectors: payload hash', () => {
  it.each((file.payload_hash_cases as Json[]).map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const { governance_context: _g, context: _c, ...business } = c.payload;
    expect(canonicalize(business)).toBe(c.canonical_business_payload);
    expect(governedPayloadHash(c.payload)).toBe(c.expected_hash);
  });
});

describe('governance-authorization vectors: signed tokens', () => {
  const cases = (signed.cases as Json[]).map((c) => [c.id, c] as const);

  it('has 27 cases', () => {
    expect(cases).toHaveLength(27);
  });

  it.each(cases)('%s: the seller verifier reaches the expected verdict', async (_id, c) => {
    const v = { ...defaults, ...c.verification_overrides };
    const consumed = v.preconsumed_jti === true ? c.claims.jti : undefined;
    expect(await verdict(c.compact_jws, v, consumed)).toBe(c.expected.result === 'accept' ? 'accept' : c.expected.error);
  });

  it('the governance signer reproduces every well-formed token byte for byte', async () => {
    let reproduced = 0;
    for (const [id, c] of cases) {
      const critical = CRITICAL_CLAIMS.filter((name) => c.claims[name] !== undefined);
      const header = { alg: 'EdDSA', kid: publicKey.kid, typ: 'adcp-gov+jws', ...(critical.length > 0 && { crit: critical }) } as Json;
      for (const name of critical) header[name] = true;
      // Deliberately malformed headers and the tampered signature are not something the signer makes.
      if (JSON.stringify(header) !== JSON.stringify(c.protected_header) || id === 'signature-tampered') continue;
      expect(await signer.sign(c.claims), id).toBe(c.compact_jws);
      reproduced++;
    }
    expect(reproduced).toBe(23);
  });
});

describe('governance-authorization vectors: authorization cases', () => {
  const base = signed.cases.find((c: Json) => c.id === 'valid-exact-authorization').claims as Json;
  const payload = defaults.payload as Json;

  it.each((file.authorization_cases as Json[]).map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    const claims: Json = {
      ...base,
      jti: `authz-${c.id}`,
      authorized_commitment: { amount: c.authorized_amount, currency: 'USD' },
      authorized_task: c.task_match ? 'create_media_buy' : 'update_media_buy',
      authorized_payload_hash: c.payload_hash_match ? governedPayloadHash(payload) : governedPayloadHash({ ...payload, amount: 2 }),
    };
    let token: string;
    if (c.critical_markers_complete) token = await signer.sign(claims);
    else {
      // Claims that change authorization, without their critical markers.
      token = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
        .setProtectedHeader({ alg: 'EdDSA', kid: publicKey.kid, typ: 'adcp-gov+jws' })
        .sign(createPrivateKey({ key: { ...publicKey, d: privateD } as never, format: 'jwk' }));
    }
    const v = { ...defaults, actual_commitment: { amount: c.actual_amount, currency: c.currency_match ? 'USD' : 'EUR' } };
    const result = await verdict(token, v);
    if (c.expected === 'accept') expect(result).toBe('accept');
    else expect(result).not.toBe('accept');
  });
});
