/**
 * Deferred orphans are not forgotten: when reconciliation leaves a listed task
 * alone because one of our sends to that agent is unresolved (its reply may bind
 * the task), it records what it waits on here, so that the agent is reconciled
 * again as soon as those sends resolve, by whichever instance, even after a restart.
 */
import type { Migration } from 'kysely';

export const reconcileRetry: Migration = {
  async up(db) {
    await db.schema
      .createTable('reconcile_deferrals')
      // One row per agent: a later run replaces it (or deletes it once nothing is deferred).
      .addColumn('agent_id', 'text', (c) => c.primaryKey())
      // JSON {task type: [operation ids]}: the unresolved sends the deferred orphans of that type wait on.
      .addColumn('waiting_on', 'text', (c) => c.notNull())
      // When the run that deferred started: an older run never overwrites or clears a newer one's record.
      .addColumn('deferred_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
