/** After a start the scheduler ramps up instead of firing every overdue timer at once. */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../../src/engine/scheduler.js';
import type { OperationRow, Store } from '../../../src/store/index.js';

describe('scheduler warm-up', () => {
  it('claims a small share at first and the full concurrency once warm', async () => {
    let now = 1_000_000;
    const asked: Array<{ at: number; limit: number }> = [];
    const backlog = 10_000;
    let handed = 0;
    const store = {
      operations: {
        claimDue: async (_owner: string, at: number, _lease: number, limit: number) => {
          asked.push({ at, limit });
          const n = Math.min(limit, backlog - handed);
          handed += n;
          return Array.from({ length: n }, (_, i) => ({ id: `op${handed + i}` }) as OperationRow);
        },
        nextDueAt: async () => now,
      },
    } as unknown as Store;
    const running = new Set<() => void>();
    const scheduler = new Scheduler(
      store,
      // Work that finishes only when the test says so: in-flight count is under our control.
      () => new Promise<void>((resolve) => running.add(resolve)),
      { now: () => now, random: () => 0 },
      pino({ level: 'silent' }),
      { instanceId: 'me', leaseMs: 1000, concurrency: 100, tickMs: 5, warmupMs: 10_000 },
    );
    scheduler.start();
    await new Promise((r) => setTimeout(r, 30));
    const atStart = asked.reduce((sum, a) => sum + a.limit, 0);
    expect(atStart).toBe(10); // a tenth of 100
    expect(running.size).toBe(10);
    for (const finish of running) finish();
    running.clear();
    // Let those finish (the scheduler refills its warm-up share) before the clock moves on.
    await new Promise((r) => setTimeout(r, 30));
    now += 10_000; // warm-up over
    scheduler.wake();
    await new Promise((r) => setTimeout(r, 30));
    // Warm: the full concurrency is in flight at once.
    expect(running.size).toBe(100);
    for (const finish of running) finish();
    await scheduler.stop(100);
  });

  it('claims a page once a quarter of the slots are free, not a row per finished task', async () => {
    const asked: number[] = [];
    const store = {
      operations: {
        claimDue: async (_owner: string, _at: number, _lease: number, limit: number) => {
          asked.push(limit);
          return Array.from({ length: limit }, (_, i) => ({ id: `op${asked.length}-${i}` }) as OperationRow);
        },
        nextDueAt: async () => 0,
      },
    } as unknown as Store;
    const running: Array<() => void> = [];
    const scheduler = new Scheduler(
      store,
      () => new Promise<void>((resolve) => running.push(resolve)),
      { now: () => 1_000_000, random: () => 0 },
      pino({ level: 'silent' }),
      { instanceId: 'me', leaseMs: 1000, concurrency: 100, tickMs: 5, warmupMs: 0 },
    );
    const settle = () => new Promise((r) => setTimeout(r, 30));
    scheduler.start();
    await settle();
    expect(asked).toEqual([100]);
    // 24 finish one by one: fewer than a quarter free, nothing claimed.
    for (const finish of running.splice(0, 24)) {
      finish();
      await new Promise((r) => setImmediate(r));
    }
    await settle();
    expect(asked).toEqual([100]);
    // The 25th frees a quarter: one claim for all 25 slots.
    running.splice(0, 1)[0]!();
    await settle();
    expect(asked).toEqual([100, 25]);
    expect(running.length).toBe(100);
    for (const finish of running.splice(0)) finish();
    await scheduler.stop(100);
  });
});
