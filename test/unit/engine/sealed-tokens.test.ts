import { describe, expect, it } from 'vitest';
import type { GovernedState } from '../../../src/domain/governed-flow.js';
import { GovernanceTokens } from '../../../src/engine/governance/sealed-tokens.js';
import { SecretBox } from '../../../src/store/secret-box.js';

const box = new SecretBox('unit-test-secret-key-0123456789');
const tokens = new GovernanceTokens(box);
const JWS = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJwbGFuX29rIn0.c2lnbmF0dXJl';

describe('governance tokens at rest', () => {
  it('seals the token of an approval and of conditions; a decision without one is left alone', () => {
    const approved = tokens.sealedReading({ kind: 'approved', expiresAt: 1, token: JWS });
    expect(approved.kind === 'approved' && approved.token).toMatch(/^v1\./);
    expect(approved.kind === 'approved' && tokens.open(approved.token)).toBe(JWS);
    const conditions = tokens.sealedReading({ kind: 'conditions', conditions: [], findings: [], token: JWS });
    expect(conditions.kind === 'conditions' && conditions.token).not.toBe(JWS);
    const denied = { kind: 'denied' as const, findings: [] };
    expect(tokens.sealedReading(denied)).toBe(denied);
  });

  it('opens what it sealed, and takes a token stored in clear by an earlier version as it is', () => {
    expect(tokens.open(box.seal(JWS))).toBe(JWS);
    expect(tokens.open(JWS)).toBe(JWS);
  });

  it('opens the lineage token for a check and the outcome request for its report, nothing else', () => {
    const state = { continuity: box.seal(JWS), plan_id: 'p' } as unknown as GovernedState;
    expect(tokens.forCheck(state).continuity).toBe(JWS);
    expect(tokens.forCheck({ plan_id: 'p' } as unknown as GovernedState)).toEqual({ plan_id: 'p' });
    expect(tokens.openedRequest({ plan_id: 'p', governance_context: box.seal(JWS) })).toEqual({ plan_id: 'p', governance_context: JWS });
    expect(tokens.openedRequest({ plan_id: 'p', governance_context: '' })).toEqual({ plan_id: 'p', governance_context: '' });
  });

  it('a token sealed under another key does not open (never sent garbled)', () => {
    const other = new SecretBox('another-secret-key-0123456789');
    expect(() => tokens.open(other.seal(JWS))).toThrow();
  });
});
