/**
 * Delivery outcomes owed to a governed buy's governance agent (migration 018):
 * an outbox of `report_plan_outcome` `outcome: "delivery"` calls, one row per
 * report, written in the transaction that stored the report. Each row keeps its
 * exact arguments (one `idempotency_key`, sent again on every attempt) and is
 * claimed with a lease like every other timer; every write of claimed work checks
 * the lease.
 */
import type { Selectable } from 'kysely';
import type { Db } from './db.js';
import type { MediaBuyOutcomesTable } from './schema.js';
import type { Tx } from './tx.js';
import { claimDueRows, nextTimerAt } from './timer-claims.js';
import type { Lease } from './operations-repo.js';

export type OutcomeRow = Selectable<MediaBuyOutcomesTable>;
export type OutcomePatch = Partial<Pick<OutcomeRow, 'status' | 'outcome_id' | 'findings' | 'error' | 'next_attempt_at' | 'attempt' | 'reported_at'>>;

export class MediaBuyOutcomesRepo {
  constructor(private readonly db: Db) {}

  async insertIn(trx: Tx, row: OutcomeRow): Promise<void> {
    await trx.insertInto('media_buy_outcomes').values(row).onConflict((oc) => oc.column('report_id').doNothing()).execute();
  }

  /** Claims due outcomes with a lease, counting the attempt (as OperationsRepo.claimDue). */
  async claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<OutcomeRow[]> {
    return claimDueRows<OutcomeRow>(this.db, 'media_buy_outcomes', owner, now, leaseMs, limit);
  }

  /** The earliest attempt among unleased pending outcomes (null: none). */
  async nextDueAt(now: number): Promise<number | null> {
    return nextTimerAt(this.db, 'media_buy_outcomes', now);
  }

  /** Writes a claimed outcome's result and gives its lease up, if the lease still holds; false otherwise. */
  async finishIn(trx: Tx, id: string, lease: Lease, patch: OutcomePatch): Promise<boolean> {
    const r = await trx
      .updateTable('media_buy_outcomes')
      .set({ ...patch, lease_owner: null, lease_until: null })
      .where('id', '=', id)
      .where('lease_owner', '=', lease.owner)
      .where('lease_epoch', '=', lease.epoch)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async forBuy(buyId: string): Promise<OutcomeRow[]> {
    return this.db.kysely.selectFrom('media_buy_outcomes').selectAll().where('buy_id', '=', buyId).orderBy('created_at').orderBy('id').execute();
  }

  async countPending(): Promise<number> {
    const row = await this.db.kysely.selectFrom('media_buy_outcomes').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'pending').executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}
