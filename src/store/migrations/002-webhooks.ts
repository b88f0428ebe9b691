/**
 * Webhook receiving: the shared replay cache of RFC 9421 nonces and the durable
 * dedupe record of every accepted delivery (AdCP spec, webhooks).
 */
import { sql, type Migration } from 'kysely';

export const webhooks: Migration = {
  async up(db) {
    await db.schema
      .createTable('webhook_nonces')
      .addColumn('keyid', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_nonces_pk', ['keyid', 'nonce'])
      .execute();
    await db.schema.createIndex('webhook_nonces_live').on('webhook_nonces').columns(['keyid', 'expires_at']).execute();

    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      // The authenticated sender (our agent id): the dedupe key space, never a payload field.
      .addColumn('sender', 'text', (c) => c.notNull())
      .addColumn('idempotency_key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('operation_id', 'text', (c) => c.notNull())
      // received → applied; a received row older than a few seconds is applied by the recovery sweep.
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text')
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('received_at', 'bigint', (c) => c.notNull())
      .addColumn('applied_at', 'bigint')
      .addUniqueConstraint('webhook_deliveries_sender_key', ['sender', 'idempotency_key'])
      .execute();
    await sql`CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (received_at) WHERE state = 'received'`.execute(db);
    await db.schema.createIndex('webhook_deliveries_age').on('webhook_deliveries').column('received_at').execute();
  },
};
