/** Strict JSON: duplicate keys and prototype-pollution keys are refused at any depth. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { strictJsonParse } from '../../../src/webhooks/strict-json.js';

describe('strictJsonParse', () => {
  it('parses ordinary JSON exactly like JSON.parse', () => {
    const text = '{"a":1,"b":[{"a":2},{"a":3}],"c":{"d":null,"e":"x\\"y"},"f":-1.5e3}';
    expect(strictJsonParse(text)).toEqual({ ok: true, value: JSON.parse(text), text });
    expect(strictJsonParse(Buffer.from(text))).toEqual({ ok: true, value: JSON.parse(text), text });
  });

  it.each([
    ['top level', '{"status":"approved","status":"rejected"}'],
    ['nested object', '{"result":{"id":"a","id":"b"}}'],
    ['object inside an array', '{"packages":[{"package_id":"1","package_id":"2"}]}'],
    ['three deep', '{"a":{"b":{"c":1,"c":2}}}'],
    ['escaped spelling of the same key', '{"status":1,"st\\u0061tus":2}'],
    ['after a string containing braces and quotes', '{"x":"}{\\",","k":1,"k":2}'],
  ])('refuses duplicate keys: %s', (_label, text) => {
    expect(strictJsonParse(text)).toMatchObject({ ok: false, code: 'webhook_body_malformed' });
  });

  it('allows the same key in sibling objects', () => {
    expect(strictJsonParse('[{"a":1},{"a":2}]').ok).toBe(true);
    expect(strictJsonParse('{"x":{"a":1},"y":{"a":2}}').ok).toBe(true);
  });

  it.each([
    ['__proto__', '{"__proto__":{"polluted":true}}'],
    ['escaped __proto__', '{"\\u005f_proto__":{}}'],
    ['nested __proto__', '{"a":[{"__proto__":{}}]}'],
    ['constructor.prototype', '{"constructor":{"prototype":{"polluted":true}}}'],
  ])('refuses prototype-pollution keys: %s', (_label, text) => {
    expect(strictJsonParse(text)).toMatchObject({ ok: false, code: 'webhook_body_malformed' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('allows "constructor" and "prototype" where they are harmless', () => {
    expect(strictJsonParse('{"constructor":"x","prototype":1}').ok).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['truncated', '{"a":'],
    ['trailing garbage', '{} x'],
    ['single quotes', "{'a':1}"],
  ])('refuses invalid JSON: %s', (_label, text) => {
    expect(strictJsonParse(text)).toMatchObject({ ok: false, code: 'webhook_body_malformed' });
  });

  it('refuses invalid UTF-8 and a byte-order mark', () => {
    expect(strictJsonParse(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))).toMatchObject({ ok: false });
    expect(strictJsonParse(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toMatchObject({ ok: false });
  });

  it('survives hostile nesting depth without throwing', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    expect(() => strictJsonParse(deep)).not.toThrow();
  });

  it('does not echo huge or unprintable keys into the message', () => {
    const key = 'k'.repeat(10_000) + '\u0007';
    const result = strictJsonParse(`{"${key}":1,"${key}":2}`);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message.length).toBeLessThan(100);
  });
});

describe('strictJsonParse properties', () => {
  it('never throws on arbitrary strings or bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const result = strictJsonParse(text);
        expect(typeof result.ok).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
        expect(typeof strictJsonParse(bytes).ok).toBe('boolean');
      }),
      { numRuns: 1000 },
    );
  });

  it('never throws on JSON-like fragments', () => {
    const token = fc.constantFrom('{', '}', '[', ']', ',', ':', '"a"', '"\\u0061"', '"\\"', '1', 'null', ' ', '"__proto__"');
    fc.assert(
      fc.property(fc.array(token, { maxLength: 40 }), (tokens) => {
        expect(typeof strictJsonParse(tokens.join('')).ok).toBe('boolean');
      }),
      { numRuns: 3000 },
    );
  });

  it('accepts every serialised JSON value without dangerous keys and returns the same value', () => {
    const safeKey = fc.string().filter((k) => k !== '__proto__' && k !== 'constructor');
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.string(),
        fc.array(tie('node')),
        fc.dictionary(safeKey, tie('node')),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        const text = JSON.stringify(v);
        expect(strictJsonParse(text)).toEqual({ ok: true, value: JSON.parse(text), text });
      }),
      { numRuns: 500 },
    );
  });
});
