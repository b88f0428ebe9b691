/** startMaintenance: every job runs each round, one failing does not stop the others, rounds never overlap, stop stops. */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { startMaintenance } from '../../../src/engine/maintenance.js';

describe('startMaintenance', () => {
  it('runs each job every round, logs a failing one and goes on, never overlaps, and stops', async () => {
    const ran: string[] = [];
    let running = 0;
    let overlapped = false;
    let roundsDone = 0;
    let onRound: (() => void) | undefined;
    const logged: unknown[] = [];
    const log = createLogger('error');
    log.error = ((obj: unknown) => void logged.push(obj)) as typeof log.error;

    const stop = startMaintenance(
      [
        { name: 'slow', run: async () => { running++; overlapped ||= running > 1; ran.push('slow'); await new Promise((r) => setTimeout(r, 30)); running--; } },
        { name: 'broken', run: async () => { ran.push('broken'); throw new Error('db gone'); } },
        { name: 'last', run: async () => { ran.push('last'); roundsDone++; onRound?.(); } },
      ],
      log,
      5, // shorter than the slow job: a round that overlapped the next would show
    );
    await new Promise<void>((resolve) => (onRound = () => roundsDone >= 3 && resolve()));
    stop();
    const after = ran.length;
    expect(ran.slice(0, 6)).toEqual(['slow', 'broken', 'last', 'slow', 'broken', 'last']);
    expect(overlapped).toBe(false);
    expect(logged.length).toBeGreaterThanOrEqual(3);
    expect(logged[0]).toMatchObject({ job: 'broken', err: { message: 'db gone' } });
    // Nothing more once stopped (a round already started may finish its current job).
    await new Promise((r) => setTimeout(r, 100));
    expect(ran.length - after).toBeLessThanOrEqual(1);
  });
});
