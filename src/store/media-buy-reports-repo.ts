/**
 * A buy's delivery reports (migration 018): every period report and poll
 * snapshot ever stored, with which report supersedes which
 * (src/domain/report-ledger.ts). Written only inside the transaction that applies
 * the report to its buy, so a report and the figures it changed commit together.
 */
import type { Selectable } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { LedgerEntry } from '../domain/report-ledger.js';
import { CompiledQueries } from './compiled.js';
import type { Db } from './db.js';
import type { MediaBuyReportsTable } from './schema.js';
import { insertAllNew, paddedIds, placeholders, runSql } from './multi-row.js';
import type { Tx } from './tx.js';

export type ReportRow = Selectable<MediaBuyReportsTable>;

type LedgerRowWithBuy = Omit<LedgerEntry, 'by_package' | 'kind'> & { buy_id: string; kind: string; by_package: string };

export function newReportId(): string {
  return `rpt_${uuidv7()}`;
}

export class MediaBuyReportsRepo {
  /** The statements every report runs, compiled once (src/store/compiled.ts). */
  private readonly compiled: CompiledQueries;

  constructor(private readonly db: Db) {
    this.compiled = new CompiledQueries(db.direct);
  }

  /** Stores a report unless its (buy, dedupe key) is known; false for a duplicate. */
  async insertIn(trx: Tx, row: ReportRow): Promise<boolean> {
    const columns = Object.keys(row) as Array<keyof ReportRow>;
    const r = await this.compiled.execute(trx, 'insert', Object.values(row), (p) =>
      trx
        .insertInto('media_buy_reports')
        .values(Object.fromEntries(columns.map((c, i) => [c, p[i]])) as ReportRow)
        .onConflict((oc) => oc.columns(['buy_id', 'dedupe_key']).doNothing()),
    );
    return Number(r.numAffectedRows ?? 0) > 0;
  }

  /**
   * `insertIn` for several reports at once (the batched fires, SQLite: src/engine/media-buys/report-batch.ts):
   * one INSERT; false when any of them was known already (the caller then undoes its batch).
   */
  async insertManyIn(trx: Tx, rows: ReportRow[]): Promise<boolean> {
    if (rows.length === 0) return true;
    return insertAllNew(trx, this.db.direct, 'media_buy_reports', Object.keys(rows[0]!) as Array<keyof ReportRow>, rows, ['buy_id', 'dedupe_key']);
  }

  /**
   * `livePeriodsIn` for several buys in one statement, per buy in the same order as the one-buy
   * read: the ledger's sums are then added up in the same order either way.
   */
  async livePeriodsManyIn(trx: Tx, buyIds: readonly string[]): Promise<Map<string, LedgerEntry[]>> {
    const out = new Map<string, LedgerEntry[]>(buyIds.map((id) => [id, []]));
    if (buyIds.length === 0) return out;
    const padded = paddedIds(buyIds);
    const { rows } = await runSql<LedgerRowWithBuy>(
      trx,
      this.db.direct,
      'SELECT buy_id, id, kind, notification_type, sequence_number, period_start, period_end, impressions, spend, clicks, by_package, received_at, superseded_by, status ' +
        `FROM media_buy_reports WHERE buy_id IN (${padded.map(() => '?').join(', ')}) AND kind = 'period' AND superseded_by IS NULL ORDER BY buy_id, period_start, received_at, id`,
      padded,
    );
    for (const { buy_id, ...r } of rows) out.get(buy_id)?.push({ ...r, kind: 'period' as const, by_package: JSON.parse(r.by_package) as LedgerEntry['by_package'] });
    return out;
  }

  /** `latestSnapshotIn` for several buys in one statement (per buy, its newest snapshot by the same order). */
  async latestSnapshotsIn(trx: Tx, buyIds: readonly string[]): Promise<Map<string, ReportRow>> {
    const out = new Map<string, ReportRow>();
    if (buyIds.length === 0) return out;
    const { rows } = await runSql<ReportRow>(
      trx,
      this.db.direct,
      `WITH v (b) AS (VALUES ${placeholders(buyIds.length, 1)}) SELECT r.* FROM v CROSS JOIN media_buy_reports r ON r.id = (` +
        "SELECT s.id FROM media_buy_reports s WHERE s.buy_id = v.b AND s.kind = 'snapshot' ORDER BY s.period_end DESC, s.received_at DESC LIMIT 1)",
      [...buyIds],
    );
    for (const r of rows) out.set(r.buy_id, r);
    return out;
  }

  /** The buy's period reports nothing supersedes: what its totals add up (oldest period first, a fixed order whatever index is used). */
  async livePeriodsIn(trx: Tx, buyId: string): Promise<LedgerEntry[]> {
    const { rows } = await this.compiled.execute(trx, 'livePeriods', [buyId, 'period'], ([b, k]) =>
      trx
        .selectFrom('media_buy_reports')
        .select(['id', 'kind', 'notification_type', 'sequence_number', 'period_start', 'period_end', 'impressions', 'spend', 'clicks', 'by_package', 'received_at', 'superseded_by', 'status'])
        .where('buy_id', '=', b)
        .where('kind', '=', k)
        .where('superseded_by', 'is', null)
        .orderBy('period_start')
        .orderBy('received_at')
        .orderBy('id'),
    );
    return rows.map((r) => ({ ...r, kind: 'period' as const, by_package: JSON.parse(r.by_package) as LedgerEntry['by_package'] }));
  }

  /** The newest poll snapshot of the buy (by the end of the period it covers), if any. */
  async latestSnapshotIn(trx: Tx, buyId: string): Promise<ReportRow | undefined> {
    const { rows } = await this.compiled.execute(trx, 'latestSnapshot', [buyId, 'snapshot', 1], ([b, k, one]) =>
      trx.selectFrom('media_buy_reports').selectAll().where('buy_id', '=', b).where('kind', '=', k).orderBy('period_end', 'desc').orderBy('received_at', 'desc').limit(one),
    );
    return rows[0];
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
