/**
 * The memos' eviction rule (src/bounded-map.ts): at its bound, the entry set longest ago
 * makes room; below it nothing goes.
 */
import { describe, expect, it } from 'vitest';
import { setBounded } from '../../src/bounded-map.js';

describe('setBounded', () => {
  it('keeps up to max entries, then lets the oldest set go first', () => {
    const m = new Map<string, number>();
    for (const [k, v] of [['a', 1], ['b', 2], ['c', 3]] as const) setBounded(m, k, v, 3);
    expect([...m.keys()]).toEqual(['a', 'b', 'c']);
    setBounded(m, 'd', 4, 3);
    expect([...m.entries()]).toEqual([['b', 2], ['c', 3], ['d', 4]]);
  });

  it('an entry taken out and set again counts as the newest', () => {
    const m = new Map<string, number>([['a', 1], ['b', 2]]);
    m.delete('a');
    setBounded(m, 'a', 1, 2);
    setBounded(m, 'c', 3, 2);
    expect([...m.keys()]).toEqual(['a', 'c']);
  });
});
