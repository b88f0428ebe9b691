/**
 * Outbound subscriptions (docs/ARCHITECTURE.md, Telling users): who wants which notifications where,
 * their signing secrets (several may be active while one is rotated out), one
 * delivery row per (subscription, notification) — the unique constraint is what
 * makes the fan-out exactly-once across instances — and every attempt made.
 */
import { sql, type Migration } from 'kysely';

export const subscriptions: Migration = {
  async up(db) {
    await db.schema
      .createTable('subscriptions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull())
      // The whole URL is sealed (a Slack incoming-webhook URL is itself a credential);
      // `url_display` is what listings show (see src/notify/subscription-target.ts).
      .addColumn('url_enc', 'text', (c) => c.notNull())
      .addColumn('url_display', 'text', (c) => c.notNull())
      // JSON array of notification types; null = every type.
      .addColumn('events', 'text')
      .addColumn('format', 'text', (c) => c.notNull())
      // Every notification with seq <= fanout_seq has its delivery row (or never matched).
      .addColumn('fanout_seq', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('disabled_at', 'bigint')
      .addColumn('disabled_reason', 'text')
      .addColumn('deleted_at', 'bigint')
      .addColumn('deleted_by', 'text')
      .execute();
    await sql`CREATE INDEX subscriptions_active ON subscriptions (tenant_id) WHERE disabled_at IS NULL AND deleted_at IS NULL`.execute(db);
    await db.schema.createIndex('subscriptions_tenant').on('subscriptions').columns(['tenant_id', 'created_at']).execute();

    await db.schema
      .createTable('subscription_secrets')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('subscription_id', 'text', (c) => c.notNull())
      .addColumn('secret_enc', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      // Null: active until replaced; a rotated-out secret keeps signing until then.
      .addColumn('expires_at', 'bigint')
      .execute();
    await db.schema.createIndex('subscription_secrets_sub').on('subscription_secrets').column('subscription_id').execute();

    await db.schema
      .createTable('subscription_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('subscription_id', 'text', (c) => c.notNull())
      .addColumn('tenant_id', 'text', (c) => c.notNull())
      .addColumn('notification_id', 'text', (c) => c.notNull())
      .addColumn('notification_seq', 'bigint', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('operation_id', 'text')
      // pending → delivered | failed; failed → pending again on redeliver.
      .addColumn('status', 'text', (c) => c.notNull())
      // Attempts ever made, and those since the (re)start of the retry schedule.
      .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('schedule_step', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint')
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'bigint')
      .addColumn('lease_epoch', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('delivered_at', 'bigint')
      .addColumn('redelivered_at', 'bigint')
      .addColumn('redelivered_by', 'text')
      .addUniqueConstraint('subscription_deliveries_once', ['subscription_id', 'notification_id'])
      .execute();
    // The claim query's scan, and its "no earlier pending delivery of this operation" probe.
    await sql`CREATE INDEX subscription_deliveries_due ON subscription_deliveries (next_attempt_at) WHERE status = 'pending'`.execute(db);
    await sql`CREATE INDEX subscription_deliveries_order ON subscription_deliveries (subscription_id, operation_id, notification_seq) WHERE status = 'pending'`.execute(db);
    await db.schema.createIndex('subscription_deliveries_list').on('subscription_deliveries').columns(['subscription_id', 'notification_seq']).execute();

    await db.schema
      .createTable('subscription_delivery_attempts')
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('http_status', 'integer')
      .addColumn('error', 'text')
      // delivered | retry | failed | disabled | interrupted
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('next_attempt_at', 'bigint')
      // The instance that made the attempt (with several instances, who sent what).
      .addColumn('sent_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('subscription_delivery_attempts_pk', ['delivery_id', 'attempt'])
      .execute();
  },
};
