/**
 * Delivery outcomes owed to a governed buy's governance agent (migration 018):
 * an outbox of `report_plan_outcome` `outcome: "delivery"` calls, one row per
 * report, written in the transaction that stored the report. Each row keeps its
 * exact arguments (one `idempotency_key`, sent again on every attempt) and is
 * claimed with a lease like every other timer; every write of claimed work checks
 * the lease.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from './db.js';
import type { MediaBuyOutcomesTable } from './schema.js';
import { inWriteTransaction, type Tx } from './tx.js';
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
    const until = now + leaseMs;
    if (this.db.dialect === 'postgres') {
      const { rows } = await sql<OutcomeRow>`
        WITH due AS (
          SELECT id FROM media_buy_outcomes
          WHERE status = 'pending' AND next_attempt_at <= ${now} AND (lease_until IS NULL OR lease_until <= ${now})
          ORDER BY next_attempt_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        )
        UPDATE media_buy_outcomes o
        SET lease_owner = ${owner}, lease_until = ${until}, attempt = o.attempt + 1, lease_epoch = o.lease_epoch + 1
        FROM due WHERE o.id = due.id
        RETURNING o.*`.execute(this.db.kysely);
      return rows;
    }
    return inWriteTransaction(this.db, async (trx) => {
      const { rows } = await sql<OutcomeRow>`
        UPDATE media_buy_outcomes
        SET lease_owner = ${owner}, lease_until = ${until}, attempt = attempt + 1, lease_epoch = lease_epoch + 1
        WHERE id IN (
          SELECT id FROM media_buy_outcomes
          WHERE status = 'pending' AND next_attempt_at <= ${now} AND (lease_until IS NULL OR lease_until <= ${now})
          ORDER BY next_attempt_at
          LIMIT ${limit}
        )
        RETURNING *`.execute(trx);
      return rows;
    });
  }

  async nextDueAt(now: number): Promise<number | null> {
    const row = await this.db.kysely
      .selectFrom('media_buy_outcomes')
      .select('next_attempt_at')
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
      .orderBy('next_attempt_at')
      .limit(1)
      .executeTakeFirst();
    return row?.next_attempt_at ?? null;
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
