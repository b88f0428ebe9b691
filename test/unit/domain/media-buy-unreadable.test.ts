/** A buy its seller no longer answers for: told once when it starts and once when it ends, read with backoff meanwhile. */
import { describe, expect, it } from 'vitest';
import { readablePart, unreadablePart, unreadableReason, unreadableRetryAt, UNREADABLE_MAX_INTERVALS } from '../../../src/domain/media-buy-unreadable.js';

const NOW = 1_000_000;
const policy = { statusIntervalMs: 5_000 };
const readable = { unreadable_since: null, unreadable_reason: null };

describe('unreadablePart and readablePart', () => {
  it('records the start of a spell once, whatever the number of reads', () => {
    const first = unreadablePart(readable, 'the seller did not list this buy', 'poll', NOW);
    expect(first).toEqual({
      patch: { unreadable_since: NOW, unreadable_reason: 'the seller did not list this buy' },
      events: [{ source: 'poll', kind: 'status_unreadable', detail: { reason: 'the seller did not list this buy' } }],
    });
    expect(unreadablePart({ unreadable_since: NOW, unreadable_reason: 'x' }, 'y', 'poll', NOW + 9_000)).toEqual({ patch: {}, events: [] });
  });
  it('ends a spell once, saying since when; a buy that was readable changes nothing', () => {
    const back = readablePart({ unreadable_since: NOW, unreadable_reason: 'why' }, 'poll', NOW + 60_000);
    expect(back.patch).toEqual({ unreadable_since: null, unreadable_reason: null });
    expect(back.events).toEqual([{ source: 'poll', kind: 'status_readable', detail: { unreadable_since: new Date(NOW).toISOString(), unreadable_ms: 60_000, reason: 'why' } }]);
    expect(readablePart(readable, 'poll', NOW)).toEqual({ patch: {}, events: [] });
  });
  it('says why in words', () => {
    expect(unreadableReason()).toBe('the seller did not list this buy');
    expect(unreadableReason({ code: 'MEDIA_BUY_NOT_FOUND', message: 'no media buy mb_1' })).toBe('the seller answered MEDIA_BUY_NOT_FOUND: no media buy mb_1');
  });
});

describe('unreadableRetryAt', () => {
  it('waits as long as the spell so far: doubling from a second, capped at a few intervals', () => {
    const noJitter = () => 0;
    let at = NOW;
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const next = unreadableRetryAt(at, NOW, policy, noJitter);
      waits.push(next - at);
      at = next;
    }
    expect(waits).toEqual([1_000, 1_000, 2_000, 4_000, 8_000, 16_000, 20_000, 20_000]);
    expect(Math.max(...waits)).toBe(policy.statusIntervalMs * UNREADABLE_MAX_INTERVALS);
  });
  it('jitters upward only, by a fifth at most; never sooner than a short interval', () => {
    expect(unreadableRetryAt(NOW + 4_000, NOW, policy, () => 1) - (NOW + 4_000)).toBe(4_800);
    expect(unreadableRetryAt(NOW, NOW, { statusIntervalMs: 200 }, () => 0) - NOW).toBe(200);
  });
});
