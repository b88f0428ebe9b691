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
 */
import type { Logger } from 'pino';
import type { OperationRow, Store } from '../store/index.js';
import type { Clock } from './clock.js';
import type { DatabaseOutage, OutagePlace } from './database-outage.js';

export class StrandedLeases {
  /** Operation id → the epoch of the lease our failed run held. */
  private readonly leases = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly owner: string,
    private readonly outage: DatabaseOutage,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  get size(): number {
    return this.leases.size;
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

  /** Hands the noted leases back; throws (and keeps them) while the database is still away. */
  async release(): Promise<number> {
    if (this.leases.size === 0) return 0;
    const batch = [...this.leases].map(([id, epoch]) => ({ id, epoch }));
    const released = await this.store.instances.releaseLeases(this.owner, batch, this.clock.now());
    for (const { id, epoch } of batch) if (this.leases.get(id) === epoch) this.leases.delete(id);
    if (released > 0) this.log.info({ operations: released }, 'work cut short by the database outage is due again');
    return released;
  }
}
