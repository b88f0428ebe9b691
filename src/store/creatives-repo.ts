/**
 * Creatives of live media buys (migration 020): one row per (buy, creative_id).
 *
 * Every write of a buy's creatives is made inside `MediaBuysRepo.mutateIn` of that
 * buy, so the buy's row lock guards them: a review that applies the seller's word
 * and a person's correction re-sending the same creative cannot interleave. Where
 * an operation is written too (a send, an inbox item, an answer), the operation's
 * row is locked first and the buy's second, always in that order, so two such
 * writes on PostgreSQL wait for each other instead of deadlocking.
 */
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { TrackedCreative } from '../domain/creative-review.js';
import type { PackageApproval } from '../domain/creatives.js';
import type { Db } from './db.js';
import type { MediaBuyCreativesTable } from './schema.js';
import type { Tx } from './tx.js';

export type CreativeRow = Selectable<MediaBuyCreativesTable>;
export type CreativePatch = Updateable<Omit<MediaBuyCreativesTable, 'buy_id' | 'creative_id' | 'tenant_id' | 'created_at'>>;

/** A row as the review rules (src/domain/creative-review.ts) read it. */
export function trackedOf(row: CreativeRow): TrackedCreative {
  return {
    creative_id: row.creative_id,
    name: row.name,
    status: row.status,
    approvals: JSON.parse(row.approvals) as PackageApproval[],
    package_ids: JSON.parse(row.package_ids) as string[],
    rejection_reason: row.rejection_reason,
    operation_id: row.operation_id,
    sync_state: row.sync_state,
    sent_at: row.sent_at,
    synced_at: row.synced_at,
    review_deadline_at: row.review_deadline_at,
    stalled: row.stalled,
    inbox_state: row.inbox_state,
    decided_at: row.decided_at,
  };
}

export class CreativesRepo {
  constructor(private readonly db: Db) {}

  /** A buy's creatives, in the order they were first sent; on `conn` (a transaction in progress may pass its own). */
  async forBuy(buyId: string, conn: Tx = this.db.kysely): Promise<CreativeRow[]> {
    return conn.selectFrom('media_buy_creatives').selectAll().where('buy_id', '=', buyId).orderBy('created_at').orderBy('creative_id').execute();
  }

  /** The creatives a sync_creatives operation sent last (not those a later send took over). */
  async forOperation(operationId: string, conn: Tx = this.db.kysely): Promise<CreativeRow[]> {
    return conn.selectFrom('media_buy_creatives').selectAll().where('operation_id', '=', operationId).orderBy('created_at').orderBy('creative_id').execute();
  }

  /** The buy a sync_creatives operation sent creatives to, if it sent any. */
  async buyOfOperation(operationId: string, conn: Tx = this.db.kysely): Promise<string | undefined> {
    const row = await conn.selectFrom('media_buy_creatives').select('buy_id').where('operation_id', '=', operationId).limit(1).executeTakeFirst();
    return row?.buy_id;
  }

  /**
   * A send: new creatives are inserted, creatives sent before under the same id
   * start afresh (a corrected version is reviewed anew), in the caller's transaction.
   */
  async upsertIn(trx: Tx, rows: Insertable<MediaBuyCreativesTable>[]): Promise<void> {
    if (rows.length === 0) return;
    await trx
      .insertInto('media_buy_creatives')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['buy_id', 'creative_id']).doUpdateSet((eb) => ({
          name: eb.ref('excluded.name'),
          status: eb.ref('excluded.status'),
          package_ids: eb.ref('excluded.package_ids'),
          approvals: eb.ref('excluded.approvals'),
          rejection_reason: null,
          advisory_status: null,
          operation_id: eb.ref('excluded.operation_id'),
          sync_state: eb.ref('excluded.sync_state'),
          sync_error: null,
          sent_at: eb.ref('excluded.sent_at'),
          synced_at: null,
          review_deadline_at: eb.ref('excluded.review_deadline_at'),
          stalled: 0,
          stalled_at: null,
          inbox_state: null,
          dismissed_at: null,
          dismissed_by: null,
          decided_at: null,
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }

  async updateIn(trx: Tx, buyId: string, creativeId: string, patch: CreativePatch, now: number): Promise<void> {
    await trx.updateTable('media_buy_creatives').set({ ...patch, updated_at: now }).where('buy_id', '=', buyId).where('creative_id', '=', creativeId).execute();
  }
}
