/**
 * The per-process memory of reporting targets (src/engine/media-buys/reporting-targets.ts):
 * a known buy is served without a read after the first; an unknown token is read again
 * every time (its buy may be made later); the memory is bounded and cannot be changed by
 * a caller.
 */
import { describe, expect, it, vi } from 'vitest';
import { ReportingTargets } from '../../../src/engine/media-buys/reporting-targets.js';
import type { ReportingTarget } from '../../../src/store/media-buys-repo.js';

const target = (token: string): ReportingTarget => ({ id: `buy-${token}`, tenant_id: 't', agent_id: 'agent-1', reporting_auth: 'hmac', reporting_secret_enc: `sealed-${token}` });

describe('reporting targets kept per process', () => {
  it('reads a known buy once; an unknown token every time, until its buy exists', async () => {
    const made = new Set(['a']);
    const read = vi.fn(async (token: string) => (made.has(token) ? target(token) : undefined));
    const targets = new ReportingTargets(read);
    expect(await targets.get('a')).toEqual(target('a'));
    expect(await targets.get('a')).toEqual(target('a'));
    expect(read).toHaveBeenCalledTimes(1);
    expect(await targets.get('b')).toBeUndefined();
    made.add('b');
    expect(await targets.get('b')).toEqual(target('b'));
    expect(await targets.get('b')).toEqual(target('b'));
    expect(read).toHaveBeenCalledTimes(3);
  });

  it('keeps at most `max`, the oldest going first; what is kept is frozen', async () => {
    const read = vi.fn(async (token: string) => target(token));
    const targets = new ReportingTargets(read, 2);
    await targets.get('a');
    await targets.get('b');
    await targets.get('c');
    expect(read).toHaveBeenCalledTimes(3);
    await targets.get('c');
    await targets.get('b');
    expect(read).toHaveBeenCalledTimes(3);
    await targets.get('a');
    expect(read).toHaveBeenCalledTimes(4);
    const kept = (await targets.get('a'))!;
    expect(() => {
      (kept as { id: string }).id = 'other';
    }).toThrow();
  });
});
