/**
 * Read-only queries for the dashboard's media buys pages, each bounded whatever a
 * buy's age (a buy reporting hourly for months has thousands of events): the newest
 * events of a buy and of its create operation, the newest operations started on it,
 * and the campaigns a page of buys belongs to, in one query. Indexes: media_buy_events
 * (buy_id, id), operation_events by operation, operations_parent, campaigns' key.
 */
import type { Db } from './db.js';
import type { CampaignRow } from './campaigns-repo.js';
import type { BuyEventRow } from './media-buys-repo.js';
import type { EventRow, OperationRow } from './operations-repo.js';

export class BuyPageReads {
  constructor(private readonly db: Db) {}

  /** The buy's newest `limit` events, newest first, and how many there are in all. */
  async recentBuyEvents(buyId: string, limit: number): Promise<{ rows: BuyEventRow[]; total: number }> {
    const k = this.db.kysely;
    const [rows, count] = await Promise.all([
      k.selectFrom('media_buy_events').selectAll().where('buy_id', '=', buyId).orderBy('id', 'desc').limit(limit).execute(),
      k.selectFrom('media_buy_events').select((eb) => eb.fn.countAll<number>().as('n')).where('buy_id', '=', buyId).executeTakeFirst(),
    ]);
    return { rows: rows as BuyEventRow[], total: Number(count?.n ?? 0) };
  }

  /** An operation's newest `limit` events, newest first, and how many there are in all. */
  async recentOperationEvents(operationId: string, limit: number): Promise<{ rows: EventRow[]; total: number }> {
    const k = this.db.kysely;
    const [rows, count] = await Promise.all([
      k.selectFrom('operation_events').selectAll().where('operation_id', '=', operationId).orderBy('id', 'desc').limit(limit).execute(),
      k.selectFrom('operation_events').select((eb) => eb.fn.countAll<number>().as('n')).where('operation_id', '=', operationId).executeTakeFirst(),
    ]);
    return { rows, total: Number(count?.n ?? 0) };
  }

  /** The newest operations started on behalf of `parentId` (a buy's pause, resume, cancel, refresh), newest first. */
  async recentChildren(parentId: string, limit: number): Promise<OperationRow[]> {
    return this.db.kysely.selectFrom('operations').selectAll().where('parent_id', '=', parentId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /** The tenant's campaigns among `ids`, by id. */
  async campaignsByIds(tenantId: string, ids: readonly string[]): Promise<Map<string, CampaignRow>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.kysely.selectFrom('campaigns').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', [...new Set(ids)]).execute();
    return new Map(rows.map((c) => [c.id, c]));
  }
}
