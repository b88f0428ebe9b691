import { describe, expect, it } from 'vitest';
import { OpenedSecrets } from '../../../src/webhooks/opened-secrets.js';

describe('OpenedSecrets', () => {
  it('opens each sealed secret once and keeps it, a changed secret being a new entry', () => {
    const opened: string[] = [];
    const secrets = new OpenedSecrets((sealed) => {
      opened.push(sealed);
      return `plain-of-${sealed}`;
    });
    expect(secrets.get('a').plain).toBe('plain-of-a');
    expect(secrets.get('a').plain).toBe('plain-of-a');
    expect(secrets.get('b').plain).toBe('plain-of-b');
    expect(opened).toEqual(['a', 'b']);
  });

  it('keeps at most its bound, the oldest opened going first', () => {
    const opened: string[] = [];
    const secrets = new OpenedSecrets((sealed) => (opened.push(sealed), sealed), 2);
    secrets.get('a');
    secrets.get('b');
    secrets.get('c');
    secrets.get('b');
    secrets.get('a');
    expect(opened).toEqual(['a', 'b', 'c', 'a']);
  });

  it('judges an HMAC secret once: a short one is refused, a 32-byte random one accepted', () => {
    const secrets = new OpenedSecrets((sealed) => sealed);
    const weak = secrets.get('short');
    expect(weak.hmacStrength().ok).toBe(false);
    expect(weak.hmacStrength()).toBe(weak.hmacStrength());
    const strong = secrets.get('q8Xk2vR7mN4pL9sT1wY6zB3cF5hJ0dGa');
    expect(strong.hmacStrength()).toEqual({ ok: true });
  });
});
