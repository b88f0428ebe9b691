/**
 * The scheduler while the database is away: claims that fail are a pause (no error per
 * tick, a growing wait between attempts), and work the outage cut short has its lease
 * handed back as soon as the database answers again, so it does not wait out the lease;
 * so have the rows of claims that failed (they may have happened all the same).
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DatabaseOutage } from '../../../src/engine/database-outage.js';
import { Scheduler } from '../../../src/engine/scheduler.js';
import { StrandedLeases } from '../../../src/engine/stranded-leases.js';
import type { OperationRow, Store } from '../../../src/store/index.js';
import { eventually } from '../../helpers/orchestrator.js';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('scheduler during a database outage', () => {
  it('pauses instead of failing each tick, and hands back the leases of claims and work the outage cut short', async () => {
    let databaseUp = false;
    /** When the scheduler went to the database (a claim, or handing leases back). */
    const attempts: number[] = [];
    const released: Array<Array<{ id: string; epoch: number }>> = [];
    /** The lease expiries of the claims that failed, and those handed back. */
    const failedClaims = new Set<number>();
    const unseenReleased: number[] = [];
    let handOut: OperationRow[] = [{ id: 'op1', lease_owner: 'me', lease_epoch: 7 } as OperationRow];
    const store = {
      operations: {
        claimDue: async (_owner: string, now: number, leaseMs: number) => {
          attempts.push(Date.now());
          if (!databaseUp) {
            failedClaims.add(now + leaseMs);
            throw refused();
          }
          const rows = handOut;
          handOut = [];
          return rows;
        },
        nextDueAt: async () => null,
      },
      instances: {
        releaseLeases: async (_owner: string, leases: Array<{ id: string; epoch: number }>) => {
          attempts.push(Date.now());
          if (!databaseUp) throw refused();
          released.push(leases);
          return leases.length;
        },
        releaseUnseenClaim: async (_owner: string, leaseUntil: number) => {
          attempts.push(Date.now());
          if (!databaseUp) throw refused();
          unseenReleased.push(leaseUntil);
          return 0;
        },
      },
    } as unknown as Store;
    const errors: unknown[] = [];
    const log = pino({ level: 'silent' });
    log.error = ((obj: unknown) => void errors.push(obj)) as typeof log.error;
    const outage = new DatabaseOutage(log, undefined, { now: () => Date.now(), random: () => 0.5 });
    const stranded = new StrandedLeases(store, 'me', outage, { now: () => Date.now(), random: () => 0.5 }, log);
    const scheduler = new Scheduler(
      store,
      // The work's final write meets a second outage.
      async () => {
        databaseUp = false;
        throw new Error('Connection terminated unexpectedly');
      },
      { now: () => Date.now(), random: () => 0.5 },
      log,
      { instanceId: 'me', leaseMs: 60_000, concurrency: 4, tickMs: 10, outage, stranded },
    );
    scheduler.start();

    // Away from the start: claims fail, paused between (at least the shortest pause, minus jitter), not every 10 ms tick.
    await eventually(async () => (attempts.length >= 3 ? true : undefined), 5_000, 5);
    expect(outage.down).toBe(true);
    const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(190);
    expect(errors).toEqual([]);

    // Back: the failed claims' leases are handed back first; then op1 is claimed and its run meets the second outage.
    databaseUp = true;
    await eventually(async () => (stranded.size === 1 && !databaseUp ? true : undefined), 5_000, 5);
    expect(new Set(unseenReleased)).toEqual(failedClaims);
    const before = attempts.length;
    await eventually(async () => (attempts.length >= before + 2 ? true : undefined), 5_000, 5);
    expect(released).toEqual([]);

    // Back again: op1's lease is handed back.
    databaseUp = true;
    await eventually(async () => (released.length > 0 && !outage.down ? true : undefined), 5_000, 5);
    expect(released).toEqual([[{ id: 'op1', epoch: 7 }]]);
    expect(stranded.size).toBe(0);
    await scheduler.stop(100);
    expect(errors).toEqual([]);
  });
});
