/**
 * Records for the API's `Idempotency-Key` header: the first request under a key
 * reserves it, its answer is stored, and a repeat gets that answer back.
 */
import type { Db } from './db.js';
import { inWriteTransaction, type Tx } from './tx.js';

export type Reservation =
  | { kind: 'reserved' }
  | { kind: 'replay'; statusCode: number; body: string }
  | { kind: 'in_progress'; abandoned: boolean }
  | { kind: 'mismatch' };

/**
 * A key not reserved yet, to be reserved inside the write that starts the request's
 * work (src/api/idempotency.ts): one commit for both, and no reservation left behind
 * by work that failed before it wrote anything.
 */
export interface KeyReservation {
  /** In the caller's write transaction: takes the key, or throws IdempotencyKeyTaken (rolling that write back). */
  reserveIn(trx: Tx): Promise<void>;
  /** The write that took the key committed. */
  committed(): void;
}

/** Another request took the key between our look and our write: nothing of ours was written. */
export class IdempotencyKeyTaken extends Error {
  constructor() {
    super('the Idempotency-Key was taken by a concurrent request');
  }
}

export class IdempotencyRepo {
  constructor(private readonly db: Db) {}

  /** A reservation still open after this long belongs to a request that can no longer be running. */
  static readonly ABANDONED_AFTER_MS = 120_000;

  async reserve(tenantId: string, key: string, requestHash: string, now = Date.now()): Promise<Reservation> {
    const reserved = await inWriteTransaction(this.db, (trx) => this.reserveIn(trx, tenantId, key, requestHash, now));
    if (reserved) return { kind: 'reserved' };
    // Not inserted, yet gone when read (released in between): try again.
    return (await this.find(tenantId, key, requestHash, now)) ?? this.reserve(tenantId, key, requestHash, now);
  }

  /**
   * Writes the reservation inside a write transaction the caller holds (e.g. the one
   * that stores the operation the request creates, so both share a commit). False
   * when the key is already taken.
   */
  async reserveIn(trx: Tx, tenantId: string, key: string, requestHash: string, now = Date.now()): Promise<boolean> {
    const inserted = await trx
      .insertInto('api_idempotency')
      .values({ tenant_id: tenantId, key, request_hash: requestHash, status_code: null, response_body: null, created_at: now })
      .onConflict((oc) => oc.columns(['tenant_id', 'key']).doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** What the key's record says about a request with this hash; undefined when nobody holds the key. Reads only. */
  async find(tenantId: string, key: string, requestHash: string, now = Date.now()): Promise<Exclude<Reservation, { kind: 'reserved' }> | undefined> {
    const existing = await this.db.kysely
      .selectFrom('api_idempotency')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!existing) return undefined;
    if (existing.request_hash !== requestHash) return { kind: 'mismatch' };
    if (existing.status_code === null || existing.response_body === null) {
      return { kind: 'in_progress', abandoned: now - existing.created_at > IdempotencyRepo.ABANDONED_AFTER_MS };
    }
    return { kind: 'replay', statusCode: existing.status_code, body: existing.response_body };
  }

  /** Grouped with other writes of the same turn (src/store/tx.ts): at concurrency it shares their commit. */
  async complete(tenantId: string, key: string, statusCode: number, body: string): Promise<void> {
    await inWriteTransaction(this.db, (trx) =>
      trx
        .updateTable('api_idempotency')
        .set({ status_code: statusCode, response_body: body })
        .where('tenant_id', '=', tenantId)
        .where('key', '=', key)
        .execute(),
    );
  }

  /** A request that failed before producing an answer frees its key for a retry. */
  async release(tenantId: string, key: string): Promise<void> {
    await this.db.kysely.deleteFrom('api_idempotency').where('tenant_id', '=', tenantId).where('key', '=', key).where('status_code', 'is', null).execute();
  }

  /**
   * Forgets the keys first used before `cutoff`: past its window a key is no longer
   * replayed, and a request under it runs afresh. Returns how many were deleted.
   *
   * In batches, so a first sweep over a long backlog never holds the write lock (SQLite)
   * or a huge transaction (PostgreSQL) for long.
   */
  async sweepOlderThan(cutoff: number, batchSize = 5_000): Promise<number> {
    let deleted = 0;
    for (;;) {
      const res = await this.db.kysely
        .deleteFrom('api_idempotency')
        .where((eb) =>
          eb(
            eb.refTuple('tenant_id', 'key'),
            'in',
            eb.selectFrom('api_idempotency').select(['tenant_id', 'key']).where('created_at', '<', cutoff).limit(batchSize).$asTuple('tenant_id', 'key'),
          ),
        )
        .executeTakeFirst();
      const n = Number(res.numDeletedRows ?? 0);
      deleted += n;
      if (n < batchSize) return deleted;
    }
  }
}
