/**
 * Our request-signing keys (src/engine/signing-keys.ts): every key we sign with or
 * still publish, shared by all instances on the database. `generation` is unique, so
 * two instances making the first key (or rotating) at once cannot both win: the loser
 * reads the winner's. The private half is sealed like every stored secret (null for a
 * key read from ADCP_ORCH_SIGNING_KEY_FILE, which never enters the database, and for a
 * key no longer signed with).
 */
import type { Migration } from 'kysely';

export const signingKeys: Migration = {
  async up(db) {
    await db.schema
      .createTable('signing_keys')
      .addColumn('kid', 'text', (c) => c.primaryKey())
      .addColumn('generation', 'integer', (c) => c.notNull().unique())
      .addColumn('public_jwk', 'text', (c) => c.notNull())
      .addColumn('private_jwk_enc', 'text')
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('activates_at', 'bigint', (c) => c.notNull())
      .addColumn('publish_until', 'bigint')
      .execute();
  },
};
