/**
 * The reporting fires of one grouped transaction (SQLite), stored and applied together
 * (src/store/tx.ts, Batcher), as operation webhook deliveries are (../webhook-batch.ts):
 * what `ReportIngest.ingest` does for one fire in its own savepoint, done for all of them
 * with one statement per table: the buys their rows name read at once (the unique
 * (agent_id, media_buy_id) index), their nonces recorded at once, their counted periods
 * and latest snapshots read at once, each report decided by the same pure function as
 * one fire's (report-apply.ts, decideReport), then one INSERT of the fires (stored
 * already applied, which also dedupes them), one of the reports, and the buys' updates,
 * events and notifications (MediaBuysRepo.writeChangesIn).
 *
 * Same commit, same guarantees: nothing is acknowledged before that commit, and a fire is
 * stored applied in the very statement group that applies it. Left to their own job (the
 * one-fire path, in the same transaction, right after): a fire of several rows, one whose
 * row names no buy of its seller and tenant (recorded unmatched there), a governed buy's
 * (its delivery outcome goes to the outbox), a second fire for one buy or with one key, a
 * fire whose nonce was not recorded fresh here (a replay, a key near its cap), and a fire
 * for a buy that one of those, come earlier, may touch (a buy takes its fires in order). And if any
 * fire or report of the batch turns out known already, the whole batch is undone and
 * every fire takes its own job, which tells a duplicate, a retry still in flight and a
 * payload mismatch apart.
 */
import type { DeliveryReading } from '../../domain/delivery-report.js';
import { DEFAULT_PACING, type PacingThresholds } from '../../domain/pacing.js';
import type { MediaBuyRow, Store } from '../../store/index.js';
import type { ReportRow } from '../../store/media-buy-reports-repo.js';
import type { BuyMutateResult, ReportingTarget } from '../../store/media-buys-repo.js';
import { firstPerOperation } from '../../store/operations-batch.js';
import type { FireRecord, FireRow, NewFire } from '../../store/reporting-fires-repo.js';
import type { Batcher, Tx } from '../../store/tx.js';
import type { PendingNonce } from '../webhook-ingest.js';
import { decideReport, reportRowFor, type ApplyContext, type ReportDecision, type ReportInput, type ReportOutcome } from './report-apply.js';

export interface FireBatchItem {
  /** The buy whose URL the fire came to. */
  target: ReportingTarget;
  fire: NewFire;
  reading: DeliveryReading;
  nonce?: PendingNonce;
  now: number;
}

/** What storing and applying one fire together gives (as `ReportIngest.ingest`'s own transaction returns it). */
export interface FireStoredAndApplied {
  record: FireRecord;
  results?: Array<BuyMutateResult<ReportOutcome | null>>;
}

/** Thrown inside the batch to undo it: a fire or report of it was known already. */
class UndoBatch extends Error {}

interface Decided {
  index: number;
  buy: MediaBuyRow;
  fireRow: FireRow;
  report: ReportRow;
  decision: ReportDecision;
}

export class ReportFireBatch implements Batcher<FireBatchItem, FireStoredAndApplied> {
  constructor(
    private readonly deps: {
      store: Store;
      ctx: Pick<ApplyContext, 'tracking' | 'random'>;
      /** ReportIngest's test seam, run per fire before its rows are applied, as on the one-fire path. */
      beforeApply?: () => void;
    },
  ) {}

  async run(trx: Tx, items: FireBatchItem[]): Promise<Array<{ value: FireStoredAndApplied } | undefined>> {
    const out: Array<{ value: FireStoredAndApplied } | undefined> = new Array(items.length).fill(undefined);
    const { store } = this.deps;
    // One row, one fire per key: the rest (rare: several buys in one body, a sender's retry racing itself) go their own way.
    let mine = items.flatMap((it, i) => (it.reading.rows.length === 1 ? [i] : []));
    mine = firstPerOperation(mine.map((i) => `${items[i]!.fire.sender}\n${items[i]!.fire.idempotencyKey}`)).map((k) => mine[k]!);
    if (mine.length < 2) return out;

    // The buys the rows name, per seller and tenant (never trust a body to name another's).
    const buyOf = new Map<number, MediaBuyRow>();
    const bySeller = new Map<string, number[]>();
    for (const i of mine) {
      const t = items[i]!.target;
      const key = `${t.tenant_id}\n${t.agent_id}`;
      bySeller.set(key, [...(bySeller.get(key) ?? []), i]);
    }
    for (const group of bySeller.values()) {
      const t = items[group[0]!]!.target;
      const found = await store.mediaBuys.bySellerIdsIn(
        trx,
        t.tenant_id,
        t.agent_id,
        group.map((i) => items[i]!.reading.rows[0]!.mediaBuyId),
      );
      for (const i of group) {
        const buy = found.get(items[i]!.reading.rows[0]!.mediaBuyId);
        // Unmatched rows and governed buys are the one-fire path's (an event on the target, an outbox row).
        if (buy && !buy.governance) buyOf.set(i, buy);
      }
    }
    mine = mine.filter((i) => buyOf.has(i));
    // One change per buy: a second fire for it goes after, from the row the first left.
    mine = firstPerOperation(mine.map((i) => buyOf.get(i)!.id)).map((k) => mine[k]!);
    mine = keepingEachBuysOrder(items, mine, buyOf);
    if (mine.length === 0) return out;

    // Nonces, as one fire records its own: one not recorded fresh here leaves its fire to its own job, which refuses it.
    const signed = mine.filter((i) => items[i]!.nonce);
    if (signed.length > 0) {
      const fresh = await store.nonces.checkAndInsertManyOn(
        trx,
        signed.map((i) => items[i]!.nonce!),
      );
      const left = new Set(signed.filter((_, k) => fresh[k] !== 'fresh'));
      mine = mine.filter((i) => !left.has(i));
    }
    if (mine.length === 0) return out;

    const buyIds = mine.map((i) => buyOf.get(i)!.id);
    const live = await store.reports.livePeriodsManyIn(trx, buyIds);
    const snapshots = await store.reports.latestSnapshotsIn(trx, buyIds);
    const thresholds = new Map<string, PacingThresholds>();
    for (const i of mine) {
      const tenant = buyOf.get(i)!.tenant_id;
      if (!thresholds.has(tenant)) thresholds.set(tenant, (await store.settings.forTenantIn(tenant, trx)).pacing ?? DEFAULT_PACING);
    }

    const decided: Decided[] = mine.map((index) => {
      const it = items[index]!;
      this.deps.beforeApply?.();
      const buy = buyOf.get(index)!;
      const fireRow = store.fires.newRow(it.fire, 'applied', 'applied', it.now);
      const input: ReportInput = { reading: it.reading, row: it.reading.rows[0]!, source: 'webhook', fireId: fireRow.id };
      const report = reportRowFor(buy, input, it.now);
      const reads = { live: live.get(buy.id) ?? [], snapshot: snapshots.get(buy.id), thresholds: thresholds.get(buy.tenant_id)! };
      return { index, buy, fireRow, report, decision: decideReport(this.deps.ctx, buy, input, report, reads, it.now) };
    });

    // Every fire stored applied and every report stored, or none of the batch (each then takes its own job).
    if (!(await store.fires.recordAppliedManyIn(trx, decided.map((d) => d.fireRow)))) throw new UndoBatch('a fire of the batch was stored before');
    if (!(await store.reports.insertManyIn(trx, decided.map((d) => d.report)))) throw new UndoBatch('a report of the batch was stored before');
    for (const d of decided) {
      if (d.decision.outranked) await store.reports.supersedeIn(trx, [d.report.id], d.decision.outranked);
      await store.reports.supersedeIn(trx, d.decision.replaced, d.report.id);
    }
    const results = await store.mediaBuys.writeChangesIn(
      trx,
      decided.map((d) => ({ row: d.buy, plan: d.decision.plan, now: items[d.index]!.now })),
    );
    decided.forEach((d, k) => {
      out[d.index] = { value: { record: { kind: 'new', fire: d.fireRow }, results: [results[k]!] } };
    });
    return out;
  }
}

/**
 * The batch runs before the fires it leaves to their own jobs: so that a buy still takes
 * its fires in the order they came, a fire is left out too when an earlier one left out
 * may touch its buy (names it by seller id, or came to its URL: an unmatched row is
 * recorded there).
 */
function keepingEachBuysOrder(items: FireBatchItem[], mine: number[], buyOf: Map<number, MediaBuyRow>): number[] {
  const batched = new Set(mine);
  const touchedBuys = new Set<string>();
  const touchedSellerIds = new Set<string>();
  const sellerKey = (t: ReportingTarget, mediaBuyId: string) => `${t.tenant_id}\n${t.agent_id}\n${mediaBuyId}`;
  const kept: number[] = [];
  items.forEach((it, i) => {
    if (batched.has(i)) {
      const buy = buyOf.get(i)!;
      if (!touchedBuys.has(buy.id) && !touchedSellerIds.has(sellerKey(it.target, buy.media_buy_id))) {
        kept.push(i);
        return;
      }
    }
    touchedBuys.add(it.target.id);
    for (const row of it.reading.rows) touchedSellerIds.add(sellerKey(it.target, row.mediaBuyId));
  });
  return kept;
}
