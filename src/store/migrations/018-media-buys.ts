/**
 * Live media buys (README, Media buys): a buy made by a completed
 * `create_media_buy`, its own event history, its delivery reports, the reporting
 * fires that brought them, and the delivery outcomes owed to its governance
 * agent. Timers are rows, claimed with leases like operations' (`next_check_at`,
 * `lease_owner`, `lease_until`, `lease_epoch`).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectName } from '../db.js';

export const mediaBuys = (dialect: DialectName): Migration => ({ up: (db) => up(db, dialect) });

async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const serial = dialect === 'postgres' ? 'bigserial' : 'integer';
  const amount = 'double precision';

  // The URL token of the reporting webhook we put in a create_media_buy request (null when the
  // caller brought their own): the buy made from it is reached at that URL.
  await db.schema.alterTable('operations').addColumn('reporting_token', 'text').execute();
  // The reporting frequency "when known" reads the tenant's latest get_products answers for an agent.
  await sql`CREATE INDEX operations_product_reads ON operations (tenant_id, agent_id, completed_at) WHERE type = 'get_products'`.execute(db);

  await db.schema
    .createTable('media_buys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    // The create_media_buy that made it; one buy per operation.
    .addColumn('operation_id', 'text', (c) => c.notNull().unique())
    .addColumn('media_buy_id', 'text', (c) => c.notNull())
    .addColumn('campaign_id', 'text')
    // JSON of the create's `account` (an account reference): the seller's reads of the buy name it.
    .addColumn('account', 'text')
    // JSON {agent_id, plan_id} of a governed buy; its token (the approval's governance_context) sealed apart.
    .addColumn('governance', 'text')
    .addColumn('governance_context_enc', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('revision', 'integer')
    .addColumn('valid_actions', 'text')
    .addColumn('flight_start', 'bigint')
    .addColumn('flight_end', 'bigint')
    .addColumn('budget_amount', amount)
    .addColumn('currency', 'text')
    // JSON array of packages as last known (ids, products, budgets, pacing, delivered).
    .addColumn('packages', 'text', (c) => c.notNull())
    // Delivery as the ledger (or a newer poll) says, and pacing against the flight.
    .addColumn('impressions', amount, (c) => c.notNull().defaultTo(0))
    .addColumn('spend', amount, (c) => c.notNull().defaultTo(0))
    .addColumn('clicks', amount)
    .addColumn('delivered_through', 'bigint')
    .addColumn('delivery_source', 'text')
    .addColumn('delivery_updated_at', 'bigint')
    .addColumn('pacing_state', 'text', (c) => c.notNull())
    .addColumn('pacing_ratio', amount)
    .addColumn('pacing_expected', amount)
    // What the seller was asked for and what has come.
    .addColumn('report_frequency', 'text')
    .addColumn('reports_received', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_sequence', 'integer')
    .addColumn('next_expected_at', 'bigint')
    .addColumn('reports_missing', 'integer', (c) => c.notNull().defaultTo(0))
    // 1 while the seller is silent past its due time (one report_missing per silence).
    .addColumn('gap_open', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('final_received', 'integer', (c) => c.notNull().defaultTo(0))
    // Our reporting webhook: its URL token, its secret (sealed) and how fires authenticate.
    .addColumn('reporting_token', 'text', (c) => c.unique())
    .addColumn('reporting_secret_enc', 'text')
    .addColumn('reporting_auth', 'text', (c) => c.notNull())
    // The timers (src/domain/media-buy-timers.ts); next_check_at is the earliest of the three.
    .addColumn('next_check_at', 'bigint')
    .addColumn('status_check_at', 'bigint')
    .addColumn('report_due_at', 'bigint')
    .addColumn('delivery_poll_at', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('lease_epoch', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  // A seller's media_buy_id names one buy of one of our agents (two operations that found the same buy make one record).
  await db.schema.createIndex('media_buys_seller_id').on('media_buys').columns(['agent_id', 'media_buy_id']).unique().execute();
  await db.schema.createIndex('media_buys_tenant').on('media_buys').columns(['tenant_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('media_buys_tenant_status').on('media_buys').columns(['tenant_id', 'status', 'created_at', 'id']).execute();
  await db.schema.createIndex('media_buys_campaign').on('media_buys').columns(['campaign_id']).execute();
  // The claim scans only buys with a timer.
  await sql`CREATE INDEX media_buys_due ON media_buys (next_check_at) WHERE next_check_at IS NOT NULL`.execute(db);

  await db.schema
    .createTable('media_buy_events')
    .addColumn('id', serial, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('buy_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('from_status', 'text')
    .addColumn('to_status', 'text')
    .addColumn('detail', 'text')
    .addColumn('actor', 'text')
    .execute();
  await db.schema.createIndex('media_buy_events_buy').on('media_buy_events').columns(['buy_id', 'id']).execute();

  // Reporting fires as received: the durable dedupe (seller, idempotency_key) and what a crash leaves to apply.
  await db.schema
    .createTable('reporting_fires')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('sender', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    // The buy whose URL it came to (the fire may carry others of the same seller and tenant).
    .addColumn('buy_id', 'text', (c) => c.notNull())
    // received → applied
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('applied_at', 'bigint')
    .addUniqueConstraint('reporting_fires_once', ['sender', 'idempotency_key'])
    .execute();
  await sql`CREATE INDEX reporting_fires_received ON reporting_fires (received_at) WHERE state = 'received'`.execute(db);

  await db.schema
    .createTable('media_buy_reports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('buy_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    // webhook | poll
    .addColumn('source', 'text', (c) => c.notNull())
    // period | snapshot (src/domain/report-ledger.ts)
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('notification_type', 'text')
    .addColumn('sequence_number', 'integer')
    .addColumn('period_start', 'bigint', (c) => c.notNull())
    .addColumn('period_end', 'bigint', (c) => c.notNull())
    .addColumn('impressions', amount, (c) => c.notNull())
    .addColumn('spend', amount, (c) => c.notNull())
    .addColumn('clicks', amount)
    .addColumn('currency', 'text')
    .addColumn('by_package', 'text', (c) => c.notNull())
    .addColumn('status', 'text')
    .addColumn('is_adjusted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('dedupe_key', 'text', (c) => c.notNull())
    .addColumn('superseded_by', 'text')
    .addColumn('fire_id', 'text')
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('media_buy_reports_once', ['buy_id', 'dedupe_key'])
    .execute();
  await db.schema.createIndex('media_buy_reports_buy').on('media_buy_reports').columns(['buy_id', 'period_start']).execute();

  // report_plan_outcome `delivery` owed to a governed buy's governance agent: an outbox, one row per report.
  await db.schema
    .createTable('media_buy_outcomes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('buy_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('report_id', 'text', (c) => c.notNull().unique())
    .addColumn('governance_agent_id', 'text', (c) => c.notNull())
    // The exact arguments (governance_context sealed in place): every attempt sends the same key and bytes.
    .addColumn('request', 'text', (c) => c.notNull())
    // pending → accepted | findings | refused
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('outcome_id', 'text')
    .addColumn('findings', 'text')
    .addColumn('error', 'text')
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('lease_epoch', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('reported_at', 'bigint')
    .execute();
  await sql`CREATE INDEX media_buy_outcomes_due ON media_buy_outcomes (next_attempt_at) WHERE status = 'pending'`.execute(db);
  await db.schema.createIndex('media_buy_outcomes_buy').on('media_buy_outcomes').columns(['buy_id', 'created_at']).execute();
}
