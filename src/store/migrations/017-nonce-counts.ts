/**
 * An upper bound of each key's nonce rows, so the per-key cap (100,000 live
 * nonces, AdCP spec, webhooks) is checked without scanning a busy key's nonces on
 * every delivery: a key whose bound is under the cap is under it for sure; only
 * a key at or above it is counted exactly. Spread over shards (a delivery adds
 * to a random one) so concurrent deliveries of one key on PostgreSQL do not all
 * wait on one row. Inserting a nonce row adds one, the sweep subtracts what it
 * deleted; anything else that deletes rows only makes the bound looser, never wrong.
 */
import { sql, type Migration } from 'kysely';

export const nonceCounts: Migration = {
  async up(db) {
    await db.schema
      .createTable('webhook_nonce_counts')
      .addColumn('keyid', 'text', (c) => c.notNull())
      .addColumn('shard', 'integer', (c) => c.notNull())
      .addColumn('n', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_nonce_counts_pk', ['keyid', 'shard'])
      .execute();
    await sql`INSERT INTO webhook_nonce_counts (keyid, shard, n) SELECT keyid, 0, count(*) FROM webhook_nonces GROUP BY keyid`.execute(db);
  },
};
