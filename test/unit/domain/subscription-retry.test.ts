import { describe, expect, it } from 'vitest';
import { judgeAttempt, MAX_RETRY_AFTER_MS, retryAfterMs, retryDelayAfter } from '../../../src/domain/subscription-retry.js';

const SCHEDULE = [5_000, 300_000, 1_800_000];
const NOW = Date.parse('2026-03-01T12:00:00Z');
const mid = () => 0.5;

describe('judgeAttempt', () => {
  it('2xx is delivered, whatever else the answer says', () => {
    for (const status of [200, 201, 202, 204, 299]) {
      expect(judgeAttempt({ kind: 'response', status, retryAfter: '60' }, 1, SCHEDULE, NOW, mid)).toEqual({ outcome: 'delivered' });
    }
  });

  it('410 disables the subscription', () => {
    expect(judgeAttempt({ kind: 'response', status: 410 }, 1, SCHEDULE, NOW, mid)).toMatchObject({ outcome: 'disabled' });
  });

  it('3xx, other 4xx, 429, 5xx and errors are retried on the schedule, then failed', () => {
    for (const result of [
      { kind: 'response' as const, status: 301 },
      { kind: 'response' as const, status: 400 },
      { kind: 'response' as const, status: 404 },
      { kind: 'response' as const, status: 429 },
      { kind: 'response' as const, status: 500 },
      { kind: 'response' as const, status: 503 },
      { kind: 'error' as const, error: 'timed out after 15000 ms' },
    ]) {
      expect(judgeAttempt(result, 1, SCHEDULE, NOW, mid)).toEqual({ outcome: 'retry', nextAttemptAt: NOW + 5_000 });
      expect(judgeAttempt(result, 3, SCHEDULE, NOW, mid)).toEqual({ outcome: 'retry', nextAttemptAt: NOW + 1_800_000 });
      expect(judgeAttempt(result, 4, SCHEDULE, NOW, mid)).toEqual({ outcome: 'failed' });
    }
  });

  it('Retry-After pushes the next attempt out, never in', () => {
    expect(judgeAttempt({ kind: 'response', status: 503, retryAfter: '120' }, 1, SCHEDULE, NOW, mid)).toEqual({ outcome: 'retry', nextAttemptAt: NOW + 120_000 });
    // Shorter than the schedule: the schedule wins.
    expect(judgeAttempt({ kind: 'response', status: 429, retryAfter: '1' }, 2, SCHEDULE, NOW, mid)).toEqual({ outcome: 'retry', nextAttemptAt: NOW + 300_000 });
  });
});

describe('retryDelayAfter', () => {
  it('jitters within ±20% and stops after the last step', () => {
    expect(retryDelayAfter(1, SCHEDULE, undefined, () => 0)).toBe(4_000);
    expect(retryDelayAfter(1, SCHEDULE, undefined, () => 0.999999)).toBe(6_000);
    expect(retryDelayAfter(4, SCHEDULE, undefined, mid)).toBeUndefined();
  });

  it('is never earlier than Retry-After, even with the lowest jitter', () => {
    expect(retryDelayAfter(1, SCHEDULE, 4_500, () => 0)).toBe(4_500);
  });
});

describe('retryAfterMs', () => {
  it('reads delta-seconds', () => {
    expect(retryAfterMs('0', NOW)).toBe(0);
    expect(retryAfterMs(' 30 ', NOW)).toBe(30_000);
  });

  it('reads HTTP dates in all three forms, and a past date as 0', () => {
    expect(retryAfterMs('Sun, 01 Mar 2026 12:01:00 GMT', NOW)).toBe(60_000);
    expect(retryAfterMs('Sunday, 01-Mar-26 12:02:00 GMT', NOW)).toBe(120_000);
    expect(retryAfterMs('Sun Mar  1 12:00:30 2026', NOW)).toBeGreaterThan(0);
    expect(retryAfterMs('Sun, 01 Mar 2026 11:00:00 GMT', NOW)).toBe(0);
  });

  it('ignores what it cannot read and caps what is absurd', () => {
    expect(retryAfterMs(undefined, NOW)).toBeUndefined();
    expect(retryAfterMs('soon', NOW)).toBeUndefined();
    expect(retryAfterMs('-5', NOW)).toBeUndefined();
    expect(retryAfterMs('2026-03-01', NOW)).toBeUndefined();
    expect(retryAfterMs('99999999999', NOW)).toBe(MAX_RETRY_AFTER_MS);
  });
});
