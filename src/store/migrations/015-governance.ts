/**
 * Governance before every spend (AdCP spec, governance): the governed flow's state on
 * the operation it guards, and campaigns, whose buys are governed operations
 * with the campaign as their `parent_id`.
 */
import { sql, type Migration } from 'kysely';

export const governance: Migration = {
  async up(db) {
    await db.schema
      .alterTable('operations')
      // JSON GovernedState (src/domain/governed-flow.ts): the plan, the latest check, the approval
      // the seller is sent with, the outcome report. Null for an operation nobody governs.
      .addColumn('governance', 'text')
      .execute();
    // GET /v1/plans/:plan_id reads what the governance agent last accepted from its sync_plans operations.
    await sql`CREATE INDEX operations_plan_syncs ON operations (tenant_id, agent_id, completed_at) WHERE type = 'sync_plans'`.execute(db);

    await db.schema
      .createTable('campaigns')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('governance_agent_id', 'text', (c) => c.notNull())
      .addColumn('plan_id', 'text', (c) => c.notNull())
      // running | done: done once every buy has ended and every outcome is settled at the governance agent.
      .addColumn('status', 'text', (c) => c.notNull())
      // JSON array of the buys' operation ids, in the order they were asked for.
      .addColumn('buy_ids', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('completed_at', 'bigint')
      .addColumn('created_by', 'text')
      .execute();
    await db.schema.createIndex('campaigns_tenant').on('campaigns').columns(['tenant_id', 'created_at', 'id']).execute();
    // The completion watcher looks only at campaigns still running.
    await sql`CREATE INDEX campaigns_running ON campaigns (created_at) WHERE status = 'running'`.execute(db);
  },
};
