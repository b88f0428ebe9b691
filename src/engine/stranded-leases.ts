/**
 * Leases left behind by work that the database's absence cut short.
 *
 * A claimed operation whose run failed because the database went away (its reply
 * could not be written, its mark could not be committed) still carries our lease, and
 * nothing would take it up again before the lease runs out (the call timeout + 15 s).
 * Its row already says what to do next (send, resend with the same key and bytes, or
 * poll), so the lease is all that stands in the way: the failed run notes it here, and
 * the scheduler hands it back as soon as the database answers again, making the work
 * due at once. The note lives only in memory, and only as a shortcut: were the process
 * to die, the lease would simply expire (or be released when the instance is declared
 * dead), as for any crash. A lease is handed back only if it is still that lease
 * (owner and epoch), so work taken since is never disturbed.
 *
 * A claim that failed the same way may still have happened: a server that stopped
 * answering can carry a statement out once it goes on, after we gave up on its
 * connection. The rows it leased carry its exact expiry and were never handed to anyone
 * here, so they are handed back by that expiry.
 */
import type { Logger } from 'pino';
import type { OperationRow, Store } from '../store/index.js';
import type { Clock } from './clock.js';
import type { DatabaseOutage, OutagePlace } from './database-outage.js';
import { databaseUnavailable } from '../store/db-errors.js';

export class StrandedLeases {
  /** Operation id → the epoch of the lease our failed run held. */
  private readonly leases = new Map<string, number>();
  /** The lease expiries of claims whose answer we never got. */
  private readonly claims = new Set<number>();

  constructor(
    private readonly store: Store,
    private readonly owner: string,
    private readonly outage: DatabaseOutage,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  get size(): number {
    return this.leases.size + this.claims.size;
  }

  /**
   * Work on `row` failed with `err`. When that was the database being away (counted
   * under `where`), its lease, if ours, is noted to be handed back, and the result is
   * true; otherwise false and the caller reports the error as before.
   */
  note(row: Pick<OperationRow, 'id' | 'lease_owner' | 'lease_epoch'>, err: unknown, where: OutagePlace): boolean {
    if (!this.outage.failed(where, err)) return false;
    if (row.lease_owner === this.owner) this.leases.set(row.id, row.lease_epoch);
    return true;
  }

  /**
   * A claim of due work, leasing until `leaseUntil`, failed with `err`: if for want of the
   * database, it may have happened all the same (counted by the caller, not here).
   */
  noteClaim(leaseUntil: number, err: unknown): void {
    if (databaseUnavailable(err)) this.claims.add(leaseUntil);
  }

  /** Hands the noted leases back; throws (and keeps them) while the database is still away. */
  async release(): Promise<number> {
    if (this.size === 0) return 0;
    const now = this.clock.now();
    let released = 0;
    for (const leaseUntil of [...this.claims]) {
      released += await this.store.instances.releaseUnseenClaim(this.owner, leaseUntil, now);
      this.claims.delete(leaseUntil);
    }
    const batch = [...this.leases].map(([id, epoch]) => ({ id, epoch }));
    if (batch.length > 0) released += await this.store.instances.releaseLeases(this.owner, batch, now);
    for (const { id, epoch } of batch) if (this.leases.get(id) === epoch) this.leases.delete(id);
    if (released > 0) this.log.info({ operations: released }, 'work cut short by the database outage is due again');
    return released;
  }
}
