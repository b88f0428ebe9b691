/**
 * The scheduler while the database is away: claims that fail are a pause (no error per
 * tick, a growing wait between attempts), and work the outage cut short has its lease
 * handed back as soon as the database answers again, so it does not wait out the lease.
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
  it('pauses instead of failing each tick, and hands back the lease of work the outage cut short', async () => {
    let databaseUp = true;
    /** When the scheduler went to the database (a claim, or handing leases back). */
    const claims: number[] = [];
    const released: Array<Array<{ id: string; epoch: number }>> = [];
    let handOut: OperationRow[] = [{ id: 'op1', lease_owner: 'me', lease_epoch: 7 } as OperationRow];
    const store = {
      operations: {
        claimDue: async () => {
          claims.push(Date.now());
          if (!databaseUp) throw refused();
          const rows = handOut;
          handOut = [];
          return rows;
        },
        nextDueAt: async () => null,
      },
      instances: {
        releaseLeases: async (_owner: string, leases: Array<{ id: string; epoch: number }>) => {
          claims.push(Date.now());
          if (!databaseUp) throw refused();
          released.push(leases);
          return leases.length;
        },
      },
    } as unknown as Store;
    const errors: unknown[] = [];
    const log = pino({ level: 'silent' });
    log.error = ((obj: unknown) => void errors.push(obj)) as typeof log.error;
    const outage = new DatabaseOutage(log, undefined, { now: () => Date.now(), random: () => 0.5 });
    const stranded = new StrandedLeases(store, 'me', outage, { now: () => Date.now(), random: () => 0.5 }, log);
    // The work's final write meets the outage.
    const scheduler = new Scheduler(
      store,
      async () => {
        databaseUp = false;
        throw Object.assign(new Error('Connection terminated unexpectedly'));
      },
      { now: () => Date.now(), random: () => 0.5 },
      log,
      { instanceId: 'me', leaseMs: 60_000, concurrency: 4, tickMs: 10, outage, stranded },
    );
    scheduler.start();
    await eventually(async () => (claims.length >= 4 ? true : undefined), 5_000, 5);
    expect(outage.down).toBe(true);
    expect(stranded.size).toBe(1);
    // Paused between attempts (at least the shortest pause, minus jitter), not every 10 ms tick.
    const gaps = claims.slice(2).map((at, i) => at - claims[i + 1]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(190);

    databaseUp = true;
    await eventually(async () => (released.length > 0 && !outage.down ? true : undefined), 5_000, 5);
    expect(released).toEqual([[{ id: 'op1', epoch: 7 }]]);
    expect(stranded.size).toBe(0);
    await scheduler.stop(100);
    expect(errors).toEqual([]);
  });
});
