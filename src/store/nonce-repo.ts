/**
 * The RFC 9421 replay cache in the database, shared by every instance (a per-pod
 * memory cache is non-conformant, PROTOCOL.md §5). Implements the adapter's
 * NonceReplayStore; the insert is one atomic statement in both dialects.
 */
import { sql } from 'kysely';
import type { NonceInsertResult, NonceReplayStore } from '../adcp/webhook-signature.js';
import type { Db } from './db.js';
import { inWriteTransaction, type Tx } from './tx.js';

export class DbNonceReplayStore implements NonceReplayStore {
  constructor(
    private readonly db: Db,
    readonly maxPerKeyid = 100_000,
  ) {}

  async isAtCapacity(keyid: string, nowMs: number, conn: Tx = this.db.kysely): Promise<boolean> {
    // OFFSET stops at the cap instead of counting every live nonce of a busy key.
    const row = await conn
      .selectFrom('webhook_nonces')
      .select('nonce')
      .where('keyid', '=', keyid)
      .where('expires_at', '>', nowMs)
      .limit(1)
      .offset(this.maxPerKeyid - 1)
      .executeTakeFirst();
    return row !== undefined;
  }

  async has(keyid: string, nonce: string, nowMs: number): Promise<boolean> {
    const row = await this.db.kysely
      .selectFrom('webhook_nonces')
      .select('nonce')
      .where('keyid', '=', keyid)
      .where('nonce', '=', nonce)
      .where('expires_at', '>', nowMs)
      .executeTakeFirst();
    return row !== undefined;
  }

  async checkAndInsert(keyid: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<NonceInsertResult> {
    // SQLite: a write job, so the insert shares a grouped commit instead of an fsync of its own.
    if (this.db.dialect === 'sqlite') return inWriteTransaction(this.db, (trx) => this.checkAndInsertOn(trx, keyid, nonce, expiresAtMs, nowMs));
    return this.checkAndInsertOn(this.db.kysely, keyid, nonce, expiresAtMs, nowMs);
  }

  private async checkAndInsertOn(conn: Tx, keyid: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<NonceInsertResult> {
    if (await this.isAtCapacity(keyid, nowMs, conn)) return 'rate_abuse';
    // Insert, or take over an expired entry; a live entry makes the statement return nothing.
    const { rows } = await sql<{ nonce: string }>`
      INSERT INTO webhook_nonces (keyid, nonce, expires_at) VALUES (${keyid}, ${nonce}, ${expiresAtMs})
      ON CONFLICT (keyid, nonce) DO UPDATE SET expires_at = excluded.expires_at
      WHERE webhook_nonces.expires_at <= ${nowMs}
      RETURNING nonce`.execute(conn);
    return rows.length > 0 ? 'fresh' : 'replayed';
  }

  async sweep(nowMs: number): Promise<number> {
    const res = await this.db.kysely.deleteFrom('webhook_nonces').where('expires_at', '<=', nowMs).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
