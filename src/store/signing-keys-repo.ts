/**
 * Our request-signing keys (migration 025; the rules are src/engine/signing-keys.ts).
 * A key signs from `activates_at` until a newer one activates, and is published (in
 * our JWKS) until `publish_until` (null: for as long as it is current). The table type
 * lives here rather than in schema.ts: nothing else reads it.
 */
import type { Kysely } from 'kysely';
import type { Db } from './db.js';
import type { Database } from './schema.js';
import { isUniqueViolation } from './db.js';
import { inWriteTransaction } from './tx.js';

export interface SigningKeysTable {
  kid: string;
  generation: number;
  /** The public JWK as published (JSON). */
  public_jwk: string;
  /** The private JWK, sealed (SecretBox); null for a key file's key and once the key is retired. */
  private_jwk_enc: string | null;
  source: 'generated' | 'file';
  created_at: number;
  activates_at: number;
  publish_until: number | null;
}

export type SigningKeyRow = SigningKeysTable;

export class SigningKeyConflictError extends Error {}

export class SigningKeysRepo {
  private readonly kysely: Kysely<Database & { signing_keys: SigningKeysTable }>;

  constructor(private readonly db: Db) {
    this.kysely = db.kysely.withTables<{ signing_keys: SigningKeysTable }>();
  }

  /** Every key, newest generation first. */
  async all(): Promise<SigningKeyRow[]> {
    return this.kysely.selectFrom('signing_keys').selectAll().orderBy('generation', 'desc').execute();
  }

  async byKid(kid: string): Promise<SigningKeyRow | undefined> {
    return this.kysely.selectFrom('signing_keys').selectAll().where('kid', '=', kid).executeTakeFirst();
  }

  /**
   * Adds `key` as the next generation after `expectedTop` (the newest the caller saw) and sets
   * the end of publication of every key still published without one (`retiredUntil`), in one
   * transaction. A key added meanwhile by another process (a newer generation, or the same
   * kid) is SigningKeyConflictError: nothing was written.
   */
  async addNext(key: Omit<SigningKeyRow, 'generation'>, retiredUntil: number | null, expectedTop: number): Promise<SigningKeyRow> {
    try {
      return await inWriteTransaction(this.db, async (tx) => {
        const trx = tx.withTables<{ signing_keys: SigningKeysTable }>();
        const top = await trx.selectFrom('signing_keys').select((eb) => eb.fn.max('generation').as('g')).executeTakeFirst();
        // Decided on what the caller saw: a key added since (another instance) makes it decide again.
        if (Number(top?.g ?? 0) !== expectedTop) throw new SigningKeyConflictError('another process added a signing key meanwhile');
        const row: SigningKeyRow = { ...key, generation: expectedTop + 1 };
        if (retiredUntil !== null) {
          await trx.updateTable('signing_keys').set({ publish_until: retiredUntil }).where('publish_until', 'is', null).execute();
        }
        await trx.insertInto('signing_keys').values(row).execute();
        return row;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new SigningKeyConflictError('another process added a signing key at the same moment');
      throw err;
    }
  }

  /** Drops the private half of keys no longer signed with. */
  async forgetPrivate(kids: readonly string[]): Promise<void> {
    if (kids.length === 0) return;
    await this.kysely.updateTable('signing_keys').set({ private_jwk_enc: null }).where('kid', 'in', kids).execute();
  }

  /** Deletes keys whose publication ended before `now`; returns how many. */
  async deleteExpired(now: number): Promise<number> {
    const res = await this.kysely.deleteFrom('signing_keys').where('publish_until', 'is not', null).where('publish_until', '<=', now).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
