/**
 * First schema: tenants and their hashed API keys, agents, operations with their
 * durable timer and lease columns, the append-only event history, and API
 * Idempotency-Key records.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectName } from '../db.js';

// BIGINT works in both dialects (SQLite treats it as INTEGER affinity).
export const initial = (dialect: DialectName): Migration => ({ up: (db) => up(db, dialect) });

async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema
    .createTable('tenants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('agents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('protocol', 'text', (c) => c.notNull())
    .addColumn('auth_token_enc', 'text')
    .addColumn('webhook_signing', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('agents_tenant').on('agents').columns(['tenant_id', 'created_at']).execute();

  await db.schema
    .createTable('operations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text')
    .addColumn('context_id', 'text')
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('request_body', 'text', (c) => c.notNull())
    .addColumn('result', 'text')
    .addColumn('error', 'text')
    .addColumn('needs_input', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('input_message', 'text')
    .addColumn('stalled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('stalled_reason', 'text')
    .addColumn('deadline_at', 'bigint')
    .addColumn('next_check_at', 'bigint')
    .addColumn('check_kind', 'text')
    .addColumn('poll_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('lease_epoch', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('webhook_mode', 'text', (c) => c.notNull().defaultTo('none'))
    .addColumn('webhook_token', 'text', (c) => c.unique())
    .addColumn('webhook_secret_enc', 'text')
    .addColumn('last_observed_at', 'bigint')
    .addColumn('status_since', 'bigint')
    .addColumn('reminded_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .addColumn('parent_id', 'text')
    .execute();
  // The scheduler's claim query reads only rows with a timer; keep that index small.
  await sql`CREATE INDEX operations_due ON operations (next_check_at) WHERE next_check_at IS NOT NULL`.execute(db);
  await db.schema.createIndex('operations_tenant_list').on('operations').columns(['tenant_id', 'created_at', 'id']).execute();
  // Correlation of webhooks, polls and reconciliation: one operation per seller task.
  await sql`CREATE UNIQUE INDEX operations_agent_task ON operations (agent_id, task_id) WHERE task_id IS NOT NULL`.execute(db);
  // One operation per (agent, idempotency_key): a repeated create is the same operation, never a second buy.
  await db.schema.createIndex('operations_idem').unique().on('operations').columns(['agent_id', 'idempotency_key']).execute();

  await db.schema
    .createTable('operation_events')
    .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
      dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('operation_id', 'text', (c) => c.notNull().references('operations.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('from_status', 'text')
    .addColumn('to_status', 'text')
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('operation_events_op').on('operation_events').columns(['operation_id', 'id']).execute();
  await db.schema.createIndex('operation_events_tenant').on('operation_events').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('api_idempotency')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('api_idempotency_pk', ['tenant_id', 'key'])
    .execute();
}
