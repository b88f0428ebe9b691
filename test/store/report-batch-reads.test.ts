/**
 * The multi-row reads and writes of the batched reporting fires (SQLite only: the batch
 * runs in SQLite's group commit, src/engine/media-buys/report-batch.ts) give, per buy,
 * exactly what the one-buy statements give: the counted periods in the same order (the
 * ledger adds them up in it), the same latest snapshot; and a report or fire known
 * already makes the multi-row INSERT say so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import type { ReportRow } from '../../src/store/media-buy-reports-repo.js';
import { inWriteTransaction } from '../../src/store/tx.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { closeSellerStore, openSellerStore } from '../helpers/seller-store.js';

describe('batched fire reads and writes (SQLite)', () => {
  let database: TestDatabase;
  let store: Store;
  let tenantId: string;
  beforeAll(async () => {
    database = tempSqlite();
    ({ store, tenantId } = await openSellerStore(database));
  });
  afterAll(async () => closeSellerStore(store, database));

  let n = 0;
  const report = (buyId: string, kind: 'period' | 'snapshot', start: number, end: number, spend: number, receivedAt: number): ReportRow => ({
    id: `rpt_${String(++n).padStart(6, '0')}`,
    buy_id: buyId,
    tenant_id: tenantId,
    source: kind === 'period' ? 'webhook' : 'poll',
    kind,
    notification_type: kind === 'period' ? 'scheduled' : null,
    sequence_number: null,
    period_start: start,
    period_end: end,
    impressions: spend * 100,
    spend,
    clicks: null,
    currency: 'USD',
    by_package: '[]',
    status: null,
    is_adjusted: 0,
    dedupe_key: `k-${n}`,
    superseded_by: null,
    fire_id: null,
    received_at: receivedAt,
  });

  it('counted periods and latest snapshots per buy, as the one-buy reads give them', async () => {
    // Written out of period order, two of one period (a restatement kept live here), one superseded, snapshots of differing ends.
    const rows = [
      report('buy-a', 'period', 300, 400, 3, 10),
      report('buy-a', 'period', 100, 200, 1, 11),
      report('buy-a', 'period', 100, 200, 1.5, 9),
      report('buy-a', 'snapshot', 0, 250, 2, 12),
      report('buy-a', 'snapshot', 0, 350, 4, 13),
      report('buy-a', 'snapshot', 0, 350, 4.5, 14),
      report('buy-b', 'period', 200, 300, 7, 15),
      report('buy-b', 'period', 100, 200, 6, 16),
    ];
    await inWriteTransaction(store.db, async (trx) => {
      expect(await store.reports.insertManyIn(trx, rows)).toBe(true);
      await store.reports.supersedeIn(trx, [rows[6]!.id], rows[7]!.id);
    });
    const buys = ['buy-a', 'buy-b', 'buy-none'];
    await inWriteTransaction(store.db, async (trx) => {
      const live = await store.reports.livePeriodsManyIn(trx, buys);
      const snapshots = await store.reports.latestSnapshotsIn(trx, buys);
      for (const b of buys) {
        expect(live.get(b)).toEqual(await store.reports.livePeriodsIn(trx, b));
        expect(snapshots.get(b)).toEqual(await store.reports.latestSnapshotIn(trx, b));
      }
      expect(live.get('buy-a')!.map((e) => e.spend)).toEqual([1.5, 1, 3]);
      expect(live.get('buy-b')!.map((e) => e.spend)).toEqual([6]);
      expect(snapshots.get('buy-a')!.spend).toBe(4.5);
      expect(snapshots.has('buy-b')).toBe(false);
    });
  });

  it('a report or a fire known already makes its multi-row INSERT answer false', async () => {
    const first = report('buy-c', 'period', 0, 100, 1, 1);
    const fire = (key: string) => store.fires.newRow({ sender: 'agent', idempotencyKey: key, fingerprint: 'f', buyId: 'buy-c', payload: '{}' }, 'applied', 'applied', 1);
    const outcome = await inWriteTransaction(store.db, async (trx) => ({
      reports: [await store.reports.insertManyIn(trx, [first]), await store.reports.insertManyIn(trx, [report('buy-c', 'period', 100, 200, 1, 2), { ...first, id: 'rpt_other' }])],
      fires: [await store.fires.recordAppliedManyIn(trx, [fire('a'), fire('b')]), await store.fires.recordAppliedManyIn(trx, [fire('c'), fire('a')])],
    }));
    expect(outcome).toEqual({ reports: [true, false], fires: [true, false] });
  });
});
