/**
 * Dashboard sign-in sessions (README.md, Dashboard). A person signs in with an API key
 * once; the browser then holds a random session token in an HttpOnly cookie. Only
 * the token's SHA-256 is stored, so a copy of the database cannot be replayed as a
 * signed-in browser. A session acts as its key (role and name), so it ends when
 * its key does: lookups join api_keys, and a key removed takes its sessions with it.
 */
import type { Migration } from 'kysely';

export const sessions: Migration = {
  async up(db) {
    await db.schema
      .createTable('sessions')
      // SHA-256 (hex) of the session token; the token itself exists only in the cookie.
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    // Revoking every session of a key, and sweeping expired ones.
    await db.schema.createIndex('sessions_key').on('sessions').column('key_id').execute();
    await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();
  },
};
