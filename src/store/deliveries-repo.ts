/**
 * Durable dedupe of inbound webhook deliveries on (sender, idempotency_key),
 * kept at least 24 h. A delivery is stored `applied` in the very transaction
 * that applies it (recordAppliedIn), or, when that transaction failed, stored
 * `received` first and marked applied together with the operation change, so a
 * crash in between leaves a `received` row that the recovery sweep applies on
 * restart.
 */
import { v7 as uuidv7 } from 'uuid';
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db } from './db.js';
import type { WebhookDeliveriesTable } from './schema.js';
import { inWriteTransaction, type Tx } from './tx.js';
import { CompiledQueries } from './compiled.js';
import { insertAllNew } from './multi-row.js';

const DELIVERY_COLUMNS = ['id', 'sender', 'idempotency_key', 'fingerprint', 'operation_id', 'state', 'outcome', 'payload', 'received_at', 'applied_at'] as const;

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

export type RecordResult =
  | { kind: 'new'; delivery: DeliveryRow }
  | { kind: 'duplicate_applied'; delivery: DeliveryRow }
  | { kind: 'duplicate_in_flight'; delivery: DeliveryRow }
  | { kind: 'payload_mismatch'; delivery: DeliveryRow };

export interface NewDelivery {
  sender: string;
  idempotencyKey: string;
  fingerprint: string;
  operationId: string;
  payload: string;
}

export class DeliveriesRepo {
  /** The webhook path's statements, compiled once. */
  private readonly compiled: CompiledQueries;

  constructor(private readonly db: Db) {
    this.compiled = new CompiledQueries(db.direct);
  }

  /** Stores a delivery on its own (grouped commit on SQLite); see recordIn. */
  async record(d: NewDelivery, now = Date.now()): Promise<RecordResult> {
    if (this.db.dialect === 'sqlite') return inWriteTransaction(this.db, (trx) => this.recordIn(trx, d, now));
    return this.recordIn(this.db.kysely, d, now);
  }

  /**
   * Inserts the delivery as `received` unless (sender, key) is known, in the caller's
   * transaction (or autocommit with the top-level instance), and says which case it was.
   */
  async recordIn(trx: Tx, d: NewDelivery, now = Date.now()): Promise<RecordResult> {
    return this.insertOrFind(trx, d, { state: 'received', outcome: null, received_at: now, applied_at: null });
  }

  /**
   * Inserts the delivery already `applied` with its outcome, unless (sender, key) is
   * known: for the transaction that applies it, so one statement both dedupes and
   * marks it (instead of an insert and an update). The caller must not apply it when
   * the answer is not `new`.
   */
  async recordAppliedIn(trx: Tx, d: NewDelivery, outcome: string, now = Date.now()): Promise<RecordResult> {
    return this.insertOrFind(trx, d, { state: 'applied', outcome, received_at: now, applied_at: now });
  }

  /**
   * `recordAppliedIn` for several deliveries in one statement (a batched write, SQLite:
   * src/engine/webhook-batch.ts). All new: their rows. Any one known already (a
   * duplicate, a payload mismatch): null, and the caller must undo the statement (its
   * savepoint) and record them one by one, which tells each case apart.
   */
  async recordAppliedManyIn(trx: Tx, ds: Array<{ delivery: NewDelivery; outcome: string }>, now = Date.now()): Promise<DeliveryRow[] | null> {
    if (ds.length === 0) return [];
    const rows = ds.map(({ delivery: d, outcome }): DeliveryRow => this.newRow(d, { state: 'applied', outcome, received_at: now, applied_at: now }));
    return (await insertAllNew(trx, this.db.direct, 'webhook_deliveries', DELIVERY_COLUMNS, rows, ['sender', 'idempotency_key'])) ? rows : null;
  }

  private newRow(d: NewDelivery, state: Pick<DeliveryRow, 'state' | 'outcome' | 'received_at' | 'applied_at'>): DeliveryRow {
    return {
      // Time-ordered (UUIDv7): appends to the primary-key index, fewer pages per commit.
      id: uuidv7(),
      sender: d.sender,
      idempotency_key: d.idempotencyKey,
      fingerprint: d.fingerprint,
      operation_id: d.operationId,
      state: state.state,
      outcome: state.outcome,
      payload: d.payload,
      received_at: state.received_at,
      applied_at: state.applied_at,
    };
  }

  private async insertOrFind(trx: Tx, d: NewDelivery, state: Pick<DeliveryRow, 'state' | 'outcome' | 'received_at' | 'applied_at'>): Promise<RecordResult> {
    const row = this.newRow(d, state);
    const columns = Object.keys(row) as Array<keyof DeliveryRow>;
    const inserted = await this.compiled.execute(trx, 'insert', Object.values(row), (p) =>
      trx
        .insertInto('webhook_deliveries')
        .values(Object.fromEntries(columns.map((c, i) => [c, p[i]])) as DeliveryRow)
        .onConflict((oc) => oc.columns(['sender', 'idempotency_key']).doNothing()),
    );
    if (Number(inserted.numAffectedRows ?? 0) > 0) return { kind: 'new', delivery: row };
    const { rows } = await this.compiled.execute(trx, 'byKey', [d.sender, d.idempotencyKey], ([sender, key]) =>
      trx.selectFrom('webhook_deliveries').selectAll().where('sender', '=', sender).where('idempotency_key', '=', key),
    );
    const existing = rows[0];
    if (!existing) throw new Error(`webhook delivery ${d.sender}/${d.idempotencyKey} neither inserted nor found`);
    if (existing.fingerprint !== d.fingerprint) return { kind: 'payload_mismatch', delivery: existing };
    if (existing.state === 'applied') return { kind: 'duplicate_applied', delivery: existing };
    return { kind: 'duplicate_in_flight', delivery: existing };
  }

  /** Marks a delivery applied inside the transaction that applied it. */
  async markApplied(trx: Tx, id: string, outcome: string, now = Date.now()): Promise<void> {
    await this.compiled.execute(trx, 'markApplied', ['applied', outcome, now, id], (p) =>
      trx.updateTable('webhook_deliveries').set({ state: p[0], outcome: p[1], applied_at: p[2] }).where('id', '=', p[3]),
    );
  }

  /** Deliveries stored but not applied, older than `olderThan` (left by a crash). */
  async pending(olderThan: number, limit = 500): Promise<DeliveryRow[]> {
    return this.db.kysely
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('state', '=', 'received')
      .where('received_at', '<=', olderThan)
      .orderBy('received_at')
      .limit(limit)
      .execute();
  }

  async sweepOlderThan(cutoff: number): Promise<number> {
    const res = await this.db.kysely.deleteFrom('webhook_deliveries').where('received_at', '<', cutoff).where('state', '=', 'applied').executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
