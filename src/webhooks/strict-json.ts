/**
 * Strict JSON parsing for webhook bodies (AdCP spec, webhooks: "strict parse,
 * duplicate keys rejected"). Two parsers reading one body differently is the
 * attack here (CVE-2017-12635 class): `{"status":"approved","status":"rejected"}`
 * must not mean one thing to the verifier and another to the business logic.
 *
 * Rejected, at any depth (including inside arrays):
 *  - invalid UTF-8, a byte-order mark, anything JSON.parse rejects;
 *  - an object with the same key twice (after unescaping, so "a" and "\u0061"
 *    collide);
 *  - prototype-pollution keys: `__proto__`, and `prototype` directly inside a
 *    `constructor` object (what Object.assign / merge helpers walk into).
 *
 * JSON.parse does the real parsing (fast, native, exact number semantics);
 * a second pass over the already-valid text only tracks object keys. That pass
 * keeps its own stack, so hostile nesting depth cannot overflow ours.
 */

export type StrictJsonResult =
  /** `text`: the body decoded once, for whoever stores it (no second decode). */
  | { ok: true; value: unknown; text: string }
  | { ok: false; code: 'webhook_body_malformed'; message: string };

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function strictJsonParse(input: string | Uint8Array): StrictJsonResult {
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else {
    try {
      text = decoder.decode(input);
    } catch {
      return malformed('Body is not valid UTF-8.');
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return malformed(`Body is not valid JSON${err instanceof Error ? `: ${err.message}` : '.'}`);
  }
  const problem = findKeyProblem(text);
  return problem ? malformed(problem) : { ok: true, value, text };
}

interface Frame {
  isObject: boolean;
  keys?: Set<string>;
  /** In an object: the next string token is a key (after `{` or `,`). */
  expectKey: boolean;
  lastKey?: string;
  /** The key this container sits under in its parent object, if any. */
  ownerKey?: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Scan valid JSON text for duplicate or dangerous object keys; returns a message or null. */
function findKeyProblem(text: string): string | null {
  const stack: Frame[] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      let escaped = false;
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) {
          escaped = true;
          i++; // skip the escaped character (an escaped quote cannot end the string)
        } else if (d === QUOTE) {
          break;
        }
      }
      const top = stack[stack.length - 1];
      if (top?.isObject && top.expectKey) {
        const raw = text.slice(start, i + 1);
        const key = escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        if (top.keys!.has(key)) return `Duplicate object key ${describeKey(key)}.`;
        if (key === '__proto__') return 'Object key "__proto__" is not allowed.';
        if (key === 'prototype' && top.ownerKey === 'constructor') {
          return 'Object key "constructor.prototype" is not allowed.';
        }
        top.keys!.add(key);
        top.lastKey = key;
        top.expectKey = false;
      }
      continue;
    }
    switch (c) {
      case 0x7b: {
        // {
        const parent = stack[stack.length - 1];
        stack.push({ isObject: true, keys: new Set(), expectKey: true, ownerKey: parent?.isObject ? parent.lastKey : undefined });
        break;
      }
      case 0x5b: // [
        stack.push({ isObject: false, expectKey: false });
        break;
      case 0x7d: // }
      case 0x5d: // ]
        stack.pop();
        break;
      case 0x2c: {
        // ,
        const top = stack[stack.length - 1];
        if (top?.isObject) top.expectKey = true;
        break;
      }
      default:
        break;
    }
  }
  return null;
}

/** Quote a key for a message without echoing megabytes or control characters into logs. */
function describeKey(key: string): string {
  const printable = key.replace(/[^\x20-\x7e]/g, '?');
  return JSON.stringify(printable.length > 32 ? `${printable.slice(0, 32)}…` : printable);
}

function malformed(message: string): StrictJsonResult {
  return { ok: false, code: 'webhook_body_malformed', message };
}
