/** Canonical fingerprints: formatting does not matter, content does. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson, webhookFingerprint } from '../../../src/webhooks/fingerprint.js';

describe('canonical JSON (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units and writes numbers in shortest form', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], '\u00e9': 1e21, A: 0.1, '\ud83d\ude00': -0 })).toBe(
      '{"A":0.1,"a":[true,null,"x"],"b":1,"é":1e+21,"😀":0}',
    );
  });

  it('matches the RFC 8785 number examples', () => {
    expect(canonicalJson([333333333.33333329, 1e30, 4.5, 0.002, 1e-27])).toBe('[333333333.3333333,1e+30,4.5,0.002,1e-27]');
  });
});

describe('webhookFingerprint', () => {
  it('is the same for re-formatted bodies and differs when a value changes', () => {
    const a = JSON.parse('{"task_id":"t","status":"completed","result":{"id":"mb_1","n":1.0}}');
    const b = JSON.parse('{ "result": { "n": 1, "id": "mb_\\u0031" }, "status": "completed", "task_id": "t" }');
    const c = JSON.parse('{"task_id":"t","status":"failed","result":{"id":"mb_1","n":1}}');
    expect(webhookFingerprint(a)).toBe(webhookFingerprint(b));
    expect(webhookFingerprint(a)).not.toBe(webhookFingerprint(c));
    expect(webhookFingerprint(a)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('property: canonical form parses back to the same value, and is stable under re-serialisation', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const canonical = canonicalJson(value);
        expect(JSON.parse(canonical)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(JSON.parse(JSON.stringify(value, null, 2)))).toBe(canonical);
      }),
      { numRuns: 500 },
    );
  });
});
