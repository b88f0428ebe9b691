/**
 * Reporting fires as received (migration 018): the durable dedupe of fires on
 * (authenticated sender, idempotency_key), kept like operation webhook deliveries
 * (src/store/deliveries-repo.ts). A fire is stored `applied` in the very
 * transaction that applies its reports; when that transaction fails it is stored
 * `received` on its own, and the recovery sweep applies it (also after a crash).
 */
import type { Selectable } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { CompiledQueries } from './compiled.js';
import type { Db } from './db.js';
import { insertAllNew } from './multi-row.js';
import type { ReportingFiresTable } from './schema.js';
import { inWriteTransaction, type Tx } from './tx.js';

export type FireRow = Selectable<ReportingFiresTable>;

export interface NewFire {
  sender: string;
  idempotencyKey: string;
  fingerprint: string;
  buyId: string;
  payload: string;
}

export type FireRecord =
  | { kind: 'new'; fire: FireRow }
  | { kind: 'duplicate_applied'; fire: FireRow }
  | { kind: 'duplicate_in_flight'; fire: FireRow }
  | { kind: 'payload_mismatch'; fire: FireRow };

export class ReportingFiresRepo {
  /** The per-fire statements, compiled once (src/store/compiled.ts), as the operation webhooks' are. */
  private readonly compiled: CompiledQueries;

  constructor(private readonly db: Db) {
    this.compiled = new CompiledQueries(db.direct);
  }

  /** The row a fire is stored as (not yet written). */
  newRow(f: NewFire, state: 'received' | 'applied', outcome: string | null, now: number): FireRow {
    return {
      // Time-ordered (UUIDv7): appends to the primary-key index.
      id: uuidv7(),
      sender: f.sender,
      idempotency_key: f.idempotencyKey,
      fingerprint: f.fingerprint,
      buy_id: f.buyId,
      state,
      outcome,
      payload: f.payload,
      received_at: now,
      applied_at: state === 'applied' ? now : null,
    };
  }

  /** Inserts the fire in `state` unless (sender, key) is known, and says which case it was. */
  async recordIn(trx: Tx, f: NewFire, state: 'received' | 'applied', outcome: string | null, now: number): Promise<FireRecord> {
    const row = this.newRow(f, state, outcome, now);
    const columns = Object.keys(row) as Array<keyof FireRow>;
    const inserted = await this.compiled.execute(trx, 'insert', Object.values(row), (p) =>
      trx
        .insertInto('reporting_fires')
        .values(Object.fromEntries(columns.map((c, i) => [c, p[i]])) as FireRow)
        .onConflict((oc) => oc.columns(['sender', 'idempotency_key']).doNothing()),
    );
    if (Number(inserted.numAffectedRows ?? 0) > 0) return { kind: 'new', fire: row };
    const { rows } = await this.compiled.execute(trx, 'byKey', [f.sender, f.idempotencyKey], ([sender, key]) =>
      trx.selectFrom('reporting_fires').selectAll().where('sender', '=', sender).where('idempotency_key', '=', key),
    );
    const existing = rows[0];
    if (!existing) throw new Error(`reporting fire ${f.sender}/${f.idempotencyKey} neither inserted nor found`);
    if (existing.fingerprint !== f.fingerprint) return { kind: 'payload_mismatch', fire: existing };
    return existing.state === 'applied' ? { kind: 'duplicate_applied', fire: existing } : { kind: 'duplicate_in_flight', fire: existing };
  }

  /**
   * Fire rows (`newRow`) stored already applied, all in one INSERT (the batched fires, SQLite:
   * src/engine/media-buys/report-batch.ts); false when any (sender, key) was known already:
   * the caller then undoes its batch, and each fire's own path tells the cases apart.
   */
  async recordAppliedManyIn(trx: Tx, rows: FireRow[]): Promise<boolean> {
    if (rows.length === 0) return true;
    return insertAllNew(trx, this.db.direct, 'reporting_fires', Object.keys(rows[0]!) as Array<keyof FireRow>, rows, ['sender', 'idempotency_key']);
  }

  /** Stores a fire `received`, on its own commit (the fallback when applying with it failed). */
  async recordReceived(f: NewFire, now: number): Promise<FireRecord> {
    return inWriteTransaction(this.db, (trx) => this.recordIn(trx, f, 'received', null, now));
  }

  /** Marks a stored fire applied, in the transaction that applied it; false when someone else already did. */
  async markAppliedIn(trx: Tx, id: string, outcome: string, now: number): Promise<boolean> {
    const r = await trx.updateTable('reporting_fires').set({ state: 'applied', outcome, applied_at: now }).where('id', '=', id).where('state', '=', 'received').executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Fires stored but not applied, older than `olderThan` (left by a failure or a crash). */
  async pending(olderThan: number, limit: number): Promise<FireRow[]> {
    return this.db.kysely.selectFrom('reporting_fires').selectAll().where('state', '=', 'received').where('received_at', '<=', olderThan).orderBy('received_at').limit(limit).execute();
  }

  async sweepOlderThan(cutoff: number): Promise<number> {
    const res = await this.db.kysely.deleteFrom('reporting_fires').where('received_at', '<', cutoff).where('state', '=', 'applied').executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
