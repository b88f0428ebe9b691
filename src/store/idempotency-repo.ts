/**
 * Records for the API's `Idempotency-Key` header: the first request under a key
 * reserves it, its answer is stored, and a repeat gets that answer back.
 */
import type { Db } from './db.js';

export type Reservation =
  | { kind: 'reserved' }
  | { kind: 'replay'; statusCode: number; body: string }
  | { kind: 'in_progress'; abandoned: boolean }
  | { kind: 'mismatch' };

export class IdempotencyRepo {
  constructor(private readonly db: Db) {}

  /** A reservation still open after this long belongs to a request that can no longer be running. */
  static readonly ABANDONED_AFTER_MS = 120_000;

  async reserve(tenantId: string, key: string, requestHash: string, now = Date.now()): Promise<Reservation> {
    const inserted = await this.db.kysely
      .insertInto('api_idempotency')
      .values({ tenant_id: tenantId, key, request_hash: requestHash, status_code: null, response_body: null, created_at: now })
      .onConflict((oc) => oc.columns(['tenant_id', 'key']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { kind: 'reserved' };
    const existing = await this.db.kysely
      .selectFrom('api_idempotency')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('key', '=', key)
      .executeTakeFirstOrThrow();
    if (existing.request_hash !== requestHash) return { kind: 'mismatch' };
    if (existing.status_code === null || existing.response_body === null) {
      return { kind: 'in_progress', abandoned: now - existing.created_at > IdempotencyRepo.ABANDONED_AFTER_MS };
    }
    return { kind: 'replay', statusCode: existing.status_code, body: existing.response_body };
  }

  async complete(tenantId: string, key: string, statusCode: number, body: string): Promise<void> {
    await this.db.kysely
      .updateTable('api_idempotency')
      .set({ status_code: statusCode, response_body: body })
      .where('tenant_id', '=', tenantId)
      .where('key', '=', key)
      .execute();
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
