/**
 * The engine's entry for a reporting fire: "ingest this authenticated report".
 * The receiver (src/webhooks/reporting-receiver.ts, or the operation webhook
 * receiver for a report sent to a create's own URL) has authenticated the sender
 * and read the body; from here on only the engine touches the store.
 *
 * In ONE write transaction (group-committed on SQLite, and there batched with the other
 * fires of its group when it can be: report-batch.ts): the RFC 9421 nonce, the
 * fire (deduped on (sender, idempotency_key), else on its content) stored already
 * applied, and each of its rows applied to the buy it names — only buys of the
 * same seller and tenant as the buy whose URL it came to; a row naming any other
 * is recorded on that buy as unmatched and changes nothing else. The caller
 * acknowledges after the commit. If that transaction fails, the fire is stored on
 * its own, then applied; what is left unapplied the recovery sweep applies
 * (`applyStored`), also after a crash.
 */
import type { Logger } from 'pino';
import { readDeliveryReply, readFire, type DeliveryReading, type ReadResult } from '../../domain/delivery-report.js';
import { fireDedupeKey } from '../../domain/report-ledger.js';
import type { TrackingPolicy } from '../../domain/media-buy-timers.js';
import type { Store } from '../../store/index.js';
import type { BuyMutateResult, ReportingTarget } from '../../store/media-buys-repo.js';
import type { FireRecord, FireRow, NewFire } from '../../store/reporting-fires-repo.js';
import { inWriteBatch, inWriteTransaction, type Tx } from '../../store/tx.js';
import { buyChange, type ChangeBus } from '../change-bus.js';
import type { Metrics } from '../metrics.js';
import type { PendingNonce } from '../webhook-ingest.js';
import { planReport, type ApplyContext, type ReportOutcome } from './report-apply.js';
import { ReportFireBatch, type FireBatchItem } from './report-batch.js';
import { ReportingTargets } from './reporting-targets.js';

export interface AuthenticatedFire {
  /** The buy whose URL the fire came to. */
  target: ReportingTarget;
  reading: DeliveryReading;
  /** Canonical fingerprint of the body (the dedupe payload check). */
  fingerprint: string;
  /** The body as received: what is stored. */
  text: string;
  /** An RFC 9421 signature's nonce, recorded in the fire's own transaction. */
  nonce?: PendingNonce;
}

export interface FireSummary {
  applied: number;
  superseded: number;
  duplicates: number;
  unmatched: number;
}

export type FireOutcome =
  | ({ kind: 'applied' } & FireSummary)
  | { kind: 'duplicate' }
  | { kind: 'in_flight' }
  | { kind: 'payload_mismatch' }
  | { kind: 'apply_failed' }
  | { kind: 'refused'; reason: 'webhook_signature_replayed' | 'webhook_signature_rate_abuse' };

export interface ReportIngestDeps {
  store: Store;
  bus: ChangeBus;
  metrics: Metrics;
  log: Logger;
  tracking: TrackingPolicy;
  now: () => number;
  random: () => number;
  /** How far ahead of our clock a report's period may begin (ADCP_ORCH_REPORT_CLOCK_SKEW_MS). */
  clockSkewMs?: number;
  /** Test seam: runs before a fire's rows are applied; throwing makes that write fail (the fire is then stored alone). */
  beforeApply?: () => void;
}

class Refused extends Error {
  constructor(readonly reason: 'webhook_signature_replayed' | 'webhook_signature_rate_abuse') {
    super(`fire refused: ${reason}`);
  }
}

type Applied = BuyMutateResult<ReportOutcome | null>;

export class ReportIngest {
  private readonly ctx: ApplyContext;
  private readonly batch: ReportFireBatch;
  private readonly targets: ReportingTargets;

  constructor(private readonly deps: ReportIngestDeps) {
    this.ctx = { store: deps.store, tracking: deps.tracking, random: deps.random };
    // The seam is read when a batch runs (a test sets it after construction).
    this.targets = new ReportingTargets((token) => deps.store.mediaBuys.reportingTarget(token));
    this.batch = new ReportFireBatch({ store: deps.store, ctx: this.ctx, beforeApply: () => this.deps.beforeApply?.() });
  }

  /** Reads a fire's body (either style) against our clock and the skew allowed. */
  read(body: unknown): ReadResult {
    return readFire(body, this.deps.now(), this.deps.clockSkewMs);
  }

  /** Reads a `get_media_buy_delivery` reply likewise. */
  readReply(data: unknown): ReadResult {
    return readDeliveryReply(data, this.deps.now(), this.deps.clockSkewMs);
  }

  /** The buy a reporting URL names, or undefined (kept per process once known: reporting-targets.ts). */
  target(token: string): Promise<ReportingTarget | undefined> {
    return this.targets.get(token);
  }

  async ingest(f: AuthenticatedFire): Promise<FireOutcome> {
    const fire: NewFire = {
      sender: f.target.agent_id,
      idempotencyKey: fireDedupeKey(f.reading.idempotencyKey, f.fingerprint),
      fingerprint: f.fingerprint,
      buyId: f.target.id,
      payload: f.text,
    };
    let together: { record: FireRecord; results?: Applied[] };
    const item: FireBatchItem = { target: f.target, fire, reading: f.reading, nonce: f.nonce, now: this.deps.now() };
    try {
      // Batched with the other fires of its group commit when it can be (report-batch.ts; SQLite); else this, its own job.
      together = await inWriteBatch(this.deps.store.db, this.batch, item, async (trx) => {
        if (f.nonce) await this.insertNonce(trx, f.nonce);
        const now = this.deps.now();
        const record = await this.deps.store.fires.recordIn(trx, fire, 'applied', 'applied', now);
        if (record.kind !== 'new') return { record };
        return { record, results: await this.applyRows(trx, f.target, f.reading, record.fire.id, now) };
      });
    } catch (err) {
      if (err instanceof Refused) return { kind: 'refused', reason: err.reason };
      this.deps.log.warn({ err, buy_id: f.target.id }, 'reporting fire: storing and applying together failed; storing first');
      return this.storeThenApply(f, fire);
    }
    const duplicate = duplicateOutcome(together.record);
    if (duplicate) return duplicate;
    return this.settled(together.results!, 'webhook');
  }

  /** Fires stored before `olderThan` and never applied (the recovery sweep's work). */
  pending(olderThan: number, limit: number): Promise<FireRow[]> {
    return this.deps.store.fires.pending(olderThan, limit);
  }

  /** Applies a stored fire (the recovery sweep's entry), marking it applied in the same transaction. */
  async applyStored(fire: FireRow, reading: DeliveryReading): Promise<FireOutcome> {
    const target = await this.deps.store.mediaBuys.get(fire.buy_id);
    if (!target) {
      await inWriteTransaction(this.deps.store.db, (trx) => this.deps.store.fires.markAppliedIn(trx, fire.id, 'buy_not_found', this.deps.now()));
      return { kind: 'applied', applied: 0, superseded: 0, duplicates: 0, unmatched: reading.rows.length };
    }
    const results = await inWriteTransaction(this.deps.store.db, async (trx) => {
      const now = this.deps.now();
      // Someone else (another instance's sweep, the request that stored it) got there first.
      if (!(await this.deps.store.fires.markAppliedIn(trx, fire.id, 'applied', now))) return null;
      return this.applyRows(trx, target, reading, fire.id, now);
    });
    return results ? this.settled(results, 'webhook') : { kind: 'duplicate' };
  }

  /** Records a refused fire on the buy it came to (no notification): people can see why reports did not count. */
  async refused(target: ReportingTarget, code: string, message: string): Promise<void> {
    const result = await this.deps.store.mediaBuys.mutate(target.id, null, () => ({
      events: [{ source: 'webhook', kind: 'report_refused', detail: { code, message } }],
      value: null,
    }));
    if (result.outcome === 'applied') this.deps.bus.publishBuy(buyChange(result));
    this.deps.metrics.deliveryReport('webhook', 'refused');
  }

  private async storeThenApply(f: AuthenticatedFire, fire: NewFire): Promise<FireOutcome> {
    let record: FireRecord;
    try {
      record = await inWriteTransaction(this.deps.store.db, async (trx) => {
        if (f.nonce) await this.insertNonce(trx, f.nonce);
        return this.deps.store.fires.recordIn(trx, fire, 'received', null, this.deps.now());
      });
    } catch (err) {
      if (err instanceof Refused) return { kind: 'refused', reason: err.reason };
      throw err;
    }
    const duplicate = duplicateOutcome(record);
    if (duplicate) return duplicate;
    try {
      return await this.applyStored(record.fire, f.reading);
    } catch (err) {
      // Stored, not applied: the sweep applies it; the sender's retry gets 503 until then.
      this.deps.log.error({ err, buy_id: f.target.id }, 'reporting fire stored but not applied');
      return { kind: 'apply_failed' };
    }
  }

  private async applyRows(trx: Tx, target: ReportingTarget, reading: DeliveryReading, fireId: string, now: number): Promise<Applied[]> {
    this.deps.beforeApply?.();
    const results: Applied[] = [];
    for (const row of reading.rows) {
      // Only a buy of the same seller and tenant as the buy whose URL this is: never trust the body to name another.
      const buy = await this.deps.store.mediaBuys.bySellerIdIn(trx, target.tenant_id, target.agent_id, row.mediaBuyId);
      if (!buy) {
        results.push(
          await this.deps.store.mediaBuys.mutateIn(
            trx,
            target.id,
            null,
            () => ({ events: [{ source: 'webhook', kind: 'report_unmatched', at: now, detail: { media_buy_id: row.mediaBuyId, fire_id: fireId } }], value: null }),
            now,
          ),
        );
        continue;
      }
      results.push(await this.deps.store.mediaBuys.mutateIn(trx, buy.id, null, (b, t) => planReport(this.ctx, t, b, { reading, row, source: 'webhook', fireId }, now), now));
    }
    return results;
  }

  /** After the commit: live updates and metrics. */
  private settled(results: Applied[], source: 'webhook' | 'poll'): FireOutcome {
    const summary: FireSummary = { applied: 0, superseded: 0, duplicates: 0, unmatched: 0 };
    for (const r of results) {
      if (r.outcome === 'applied') this.deps.bus.publishBuy(buyChange(r));
      const value = r.outcome === 'applied' || r.outcome === 'unchanged' ? r.value : null;
      const outcome = value === 'applied' ? 'applied' : value === 'superseded' ? 'superseded' : value === 'duplicate' ? 'duplicate' : 'unmatched';
      if (outcome === 'duplicate') summary.duplicates++;
      else summary[outcome]++;
      this.deps.metrics.deliveryReport(source, outcome);
    }
    return { kind: 'applied', ...summary };
  }

  private async insertNonce(trx: Tx, n: PendingNonce): Promise<void> {
    const r = await this.deps.store.nonces.checkAndInsertOn(trx, n.keyid, n.nonce, n.expiresAtMs, n.nowMs);
    if (r !== 'fresh') throw new Refused(r === 'replayed' ? 'webhook_signature_replayed' : 'webhook_signature_rate_abuse');
  }
}

function duplicateOutcome(record: FireRecord): FireOutcome | null {
  switch (record.kind) {
    case 'duplicate_applied':
      return { kind: 'duplicate' };
    case 'duplicate_in_flight':
      return { kind: 'in_flight' };
    case 'payload_mismatch':
      return { kind: 'payload_mismatch' };
    default:
      return null;
  }
}
