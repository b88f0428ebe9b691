/**
 * Campaigns (migration 015). A campaign row is small: its buys are operations
 * (parent_id = the campaign id), read with OperationsRepo.childrenOf.
 */
import type { Selectable } from 'kysely';
import type { Db } from './db.js';
import type { CampaignsTable } from './schema.js';
import type { Tx } from './tx.js';

export type CampaignRow = Selectable<CampaignsTable>;

export class CampaignsRepo {
  constructor(private readonly db: Db) {}

  async insertIn(trx: Tx, row: CampaignRow): Promise<void> {
    await trx.insertInto('campaigns').values(row).execute();
  }

  async get(id: string): Promise<CampaignRow | undefined> {
    return this.db.kysely.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async getForTenant(tenantId: string, id: string): Promise<CampaignRow | undefined> {
    return this.db.kysely.selectFrom('campaigns').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  }

  /** Newest first, keyset-paginated on (created_at, id). */
  async list(tenantId: string, limit: number, cursor?: { createdAt: number; id: string }): Promise<CampaignRow[]> {
    let q = this.db.kysely.selectFrom('campaigns').selectAll().where('tenant_id', '=', tenantId);
    if (cursor) {
      q = q.where((eb) => eb.or([eb('created_at', '<', cursor.createdAt), eb.and([eb('created_at', '=', cursor.createdAt), eb('id', '<', cursor.id)])]));
    }
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /** Campaigns not yet done, oldest first (the completion watcher's sweep). */
  async running(limit: number): Promise<CampaignRow[]> {
    return this.db.kysely.selectFrom('campaigns').selectAll().where('status', '=', 'running').orderBy('created_at').limit(limit).execute();
  }

  /** Marks it done unless it already is; true when this call did it (so its notification is written once). */
  async markDoneIn(trx: Tx, id: string, now: number): Promise<boolean> {
    const result = await trx
      .updateTable('campaigns')
      .set({ status: 'done', completed_at: now, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
