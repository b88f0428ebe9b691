/**
 * The RFC 9421 replay cache in the database, shared by every instance (a per-pod
 * memory cache is non-conformant, AdCP spec, webhooks). Implements the adapter's
 * NonceReplayStore; the replay decision is one atomic statement in both dialects.
 *
 * The per-key cap is checked against `webhook_nonce_counts`, an upper bound of the
 * key's rows (migration 017): under the cap there, under it for sure, with no scan
 * of the key's nonces; only a key at the bound is counted exactly (OFFSET stops
 * at the cap). `checkAndInsertOn` runs on the caller's transaction, so the nonce
 * commits with the delivery it authenticated, in the same commit.
 */
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import type { NonceInsertResult, NonceReplayStore } from '../adcp/webhook-signature.js';
import type { Db } from './db.js';
import { inWriteTransaction, type Tx } from './tx.js';
import { CompiledQueries } from './compiled.js';

/** Rows of `webhook_nonce_counts` per key (see the migration: contention on PostgreSQL). */
const SHARDS = 8;

export class DbNonceReplayStore implements NonceReplayStore {
  /** The three statements of every fresh nonce, compiled once. */
  private readonly compiled: CompiledQueries;

  constructor(
    private readonly db: Db,
    readonly maxPerKeyid = 100_000,
  ) {
    this.compiled = new CompiledQueries(db.direct);
  }

  async isAtCapacity(keyid: string, nowMs: number, conn: Tx = this.db.kysely): Promise<boolean> {
    const { rows: bound } = await this.compiled.execute(conn, 'bound', [keyid], ([k]) =>
      conn.selectFrom('webhook_nonce_counts').select((eb) => eb.fn.sum<number | string | null>('n').as('n')).where('keyid', '=', k),
    );
    if (Number(bound[0]?.n ?? 0) < this.maxPerKeyid) return false;
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
    const { rows } = await sql<{ nonce: string }>`
      SELECT nonce FROM webhook_nonces WHERE keyid = ${keyid} AND nonce = ${nonce} AND expires_at > ${nowMs}`.execute(this.db.kysely);
    return rows.length > 0;
  }

  async checkAndInsert(keyid: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<NonceInsertResult> {
    // SQLite: a write job, so the insert shares a grouped commit instead of an fsync of its own.
    if (this.db.dialect === 'sqlite') return inWriteTransaction(this.db, (trx) => this.checkAndInsertOn(trx, keyid, nonce, expiresAtMs, nowMs));
    return this.db.kysely.transaction().execute((trx) => this.checkAndInsertOn(trx, keyid, nonce, expiresAtMs, nowMs));
  }

  /** The atomic replay check and insert, on `conn` (a transaction: the row and its count go together). */
  async checkAndInsertOn(conn: Tx, keyid: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<NonceInsertResult> {
    if (await this.isAtCapacity(keyid, nowMs, conn)) return 'rate_abuse';
    // A new row (and one more in the key's count), or nothing when the pair exists.
    const { rows: inserted } = await this.compiled.execute(conn, 'insert', [keyid, nonce, expiresAtMs], ([k, n, e]) =>
      conn
        .insertInto('webhook_nonces')
        .values({ keyid: k, nonce: n, expires_at: e })
        .onConflict((oc) => oc.columns(['keyid', 'nonce']).doNothing())
        .returning('nonce'),
    );
    if (inserted.length > 0) {
      await this.compiled.execute(conn, 'count', [keyid, randomInt(SHARDS), 1], ([k, shard, one]) =>
        conn
          .insertInto('webhook_nonce_counts')
          .values({ keyid: k, shard, n: one })
          .onConflict((oc) => oc.columns(['keyid', 'shard']).doUpdateSet({ n: sql`webhook_nonce_counts.n + 1` })),
      );
      return 'fresh';
    }
    // The pair exists: take over an expired entry (the row count is unchanged); a live one is a replay.
    const { rows: taken } = await sql<{ nonce: string }>`
      UPDATE webhook_nonces SET expires_at = ${expiresAtMs}
      WHERE keyid = ${keyid} AND nonce = ${nonce} AND expires_at <= ${nowMs}
      RETURNING nonce`.execute(conn);
    return taken.length > 0 ? 'fresh' : 'replayed';
  }

  /**
   * `checkAndInsertOn` for several nonces at once (a batched webhook write, SQLite: see
   * src/engine/webhook-batch.ts): per key one read of its bound, one INSERT of every
   * nonce, one count per key. Per nonce: 'fresh' when this inserted it; undefined when
   * it is left to `checkAndInsertOn` (its key near the cap, the pair known already:
   * a replay, an expired entry to take over, or a second use in this very batch), for
   * which nothing was written here.
   */
  async checkAndInsertManyOn(conn: Tx, nonces: Array<{ keyid: string; nonce: string; expiresAtMs: number }>): Promise<Array<'fresh' | undefined>> {
    const out: Array<'fresh' | undefined> = new Array(nonces.length).fill(undefined);
    const perKey = new Map<string, number>();
    for (const n of nonces) perKey.set(n.keyid, (perKey.get(n.keyid) ?? 0) + 1);
    const clear = new Set<string>();
    for (const [keyid, count] of perKey) {
      const { rows: bound } = await this.compiled.execute(conn, 'bound', [keyid], ([k]) =>
        conn.selectFrom('webhook_nonce_counts').select((eb) => eb.fn.sum<number | string | null>('n').as('n')).where('keyid', '=', k),
      );
      // Under the cap even with all of these: no exact count needed.
      if (Number(bound[0]?.n ?? 0) + count < this.maxPerKeyid) clear.add(keyid);
    }
    const tried = nonces.flatMap((n, i) => (clear.has(n.keyid) ? [i] : []));
    if (tried.length === 0) return out;
    const { rows: inserted } = await this.compiled.execute(
      conn,
      `insertMany:${tried.length}`,
      tried.flatMap((i) => [nonces[i]!.keyid, nonces[i]!.nonce, nonces[i]!.expiresAtMs]),
      (p) =>
        conn
          .insertInto('webhook_nonces')
          .values(tried.map((_, k) => ({ keyid: p[3 * k], nonce: p[3 * k + 1], expires_at: p[3 * k + 2] })))
          .onConflict((oc) => oc.columns(['keyid', 'nonce']).doNothing())
          .returning(['keyid', 'nonce']),
    );
    const fresh = new Set(inserted.map((r) => `${r.keyid}\u0000${r.nonce}`));
    const added = new Map<string, number>();
    for (const i of tried) {
      const n = nonces[i]!;
      const key = `${n.keyid}\u0000${n.nonce}`;
      // A nonce used twice in the batch was inserted once: the first use is the fresh one.
      if (!fresh.delete(key)) continue;
      out[i] = 'fresh';
      added.set(n.keyid, (added.get(n.keyid) ?? 0) + 1);
    }
    for (const [keyid, n] of added) {
      await this.compiled.execute(conn, 'countMany', [keyid, randomInt(SHARDS), n], ([k, shard, count]) =>
        conn
          .insertInto('webhook_nonce_counts')
          .values({ keyid: k, shard, n: count })
          .onConflict((oc) => oc.columns(['keyid', 'shard']).doUpdateSet({ n: sql`webhook_nonce_counts.n + excluded.n` })),
      );
    }
    return out;
  }

  async sweep(nowMs: number): Promise<number> {
    const run = async (trx: Tx): Promise<number> => {
      // RETURNING: subtract exactly what this statement deleted (a concurrent takeover is not deleted).
      const { rows } = await sql<{ keyid: string }>`DELETE FROM webhook_nonces WHERE expires_at <= ${nowMs} RETURNING keyid`.execute(trx);
      const perKey = new Map<string, number>();
      for (const r of rows) perKey.set(r.keyid, (perKey.get(r.keyid) ?? 0) + 1);
      for (const [keyid, n] of perKey) {
        await sql`
          INSERT INTO webhook_nonce_counts (keyid, shard, n) VALUES (${keyid}, 0, ${-n})
          ON CONFLICT (keyid, shard) DO UPDATE SET n = webhook_nonce_counts.n - ${n}`.execute(trx);
      }
      return rows.length;
    };
    if (this.db.dialect === 'sqlite') return inWriteTransaction(this.db, run);
    return this.db.kysely.transaction().execute(run);
  }
}
