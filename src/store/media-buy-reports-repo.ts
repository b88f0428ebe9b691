/**
 * A buy's delivery reports (migration 018): every period report and poll
 * snapshot ever stored, with which report supersedes which
 * (src/domain/report-ledger.ts). Written only inside the transaction that applies
 * the report to its buy, so a report and the figures it changed commit together.
 */
import type { Selectable } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { LedgerEntry } from '../domain/report-ledger.js';
import type { Db } from './db.js';
import type { MediaBuyReportsTable } from './schema.js';
import type { Tx } from './tx.js';

export type ReportRow = Selectable<MediaBuyReportsTable>;

export function newReportId(): string {
  return `rpt_${uuidv7()}`;
}

export class MediaBuyReportsRepo {
  constructor(private readonly db: Db) {}

  /** Stores a report unless its (buy, dedupe key) is known; false for a duplicate. */
  async insertIn(trx: Tx, row: ReportRow): Promise<boolean> {
    const r = await trx
      .insertInto('media_buy_reports')
      .values(row)
      .onConflict((oc) => oc.columns(['buy_id', 'dedupe_key']).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** The buy's period reports nothing supersedes: what its totals add up. */
  async livePeriodsIn(trx: Tx, buyId: string): Promise<LedgerEntry[]> {
    const rows = await trx
      .selectFrom('media_buy_reports')
      .select(['id', 'kind', 'notification_type', 'sequence_number', 'period_start', 'period_end', 'impressions', 'spend', 'clicks', 'by_package', 'received_at', 'superseded_by'])
      .where('buy_id', '=', buyId)
      .where('kind', '=', 'period')
      .where('superseded_by', 'is', null)
      .execute();
    return rows.map((r) => ({ ...r, kind: 'period' as const, by_package: JSON.parse(r.by_package) as LedgerEntry['by_package'] }));
  }

  /** The newest poll snapshot of the buy (by the end of the period it covers), if any. */
  async latestSnapshotIn(trx: Tx, buyId: string): Promise<ReportRow | undefined> {
    return trx
      .selectFrom('media_buy_reports')
      .selectAll()
      .where('buy_id', '=', buyId)
      .where('kind', '=', 'snapshot')
      .orderBy('period_end', 'desc')
      .orderBy('received_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  async supersedeIn(trx: Tx, ids: string[], byId: string): Promise<void> {
    if (ids.length === 0) return;
    await trx.updateTable('media_buy_reports').set({ superseded_by: byId }).where('id', 'in', ids).execute();
  }

  /** Every report of a buy, oldest period first (what GET /v1/media-buys/:id/delivery lists). */
  async forBuy(buyId: string, conn: Tx = this.db.kysely): Promise<ReportRow[]> {
    return conn.selectFrom('media_buy_reports').selectAll().where('buy_id', '=', buyId).orderBy('period_start').orderBy('received_at').orderBy('id').execute();
  }
}
