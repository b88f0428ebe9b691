/**
 * Reconciliation (AdCP spec, polling, timeouts, retries, reconciliation): the stored reports, and job leases so that with
 * several instances on one database only one reconciles a given agent at a time.
 */
import { sql, type Migration } from 'kysely';

export const reconcile: Migration = {
  async up(db) {
    await db.schema
      .createTable('reconcile_reports')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      // Null while the run is in progress (or if the process died during it).
      .addColumn('finished_at', 'bigint')
      .addColumn('report', 'text')
      .addColumn('error', 'text')
      .execute();
    await db.schema.createIndex('reconcile_reports_agent').on('reconcile_reports').columns(['agent_id', 'started_at']).execute();
    await db.schema.createIndex('reconcile_reports_tenant').on('reconcile_reports').columns(['tenant_id', 'started_at']).execute();

    await db.schema
      .createTable('job_leases')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'bigint', (c) => c.notNull())
      .execute();

    // Reconcile pages through an agent's pending operations that have a seller task:
    // keep that scan to the rows it wants, not the whole (mostly terminal) history.
    await sql`CREATE INDEX operations_agent_pending_task ON operations (agent_id, id)
      WHERE task_id IS NOT NULL AND status IN ('submitted', 'working', 'input-required', 'auth-required', 'unknown')`.execute(db);
  },
};
