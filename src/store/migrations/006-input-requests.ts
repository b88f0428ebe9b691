/**
 * People in the loop (docs/ARCHITECTURE.md, People in the loop): what an operation asks a person, the answer
 * given, the seller's A2A continuation, and the tenant's own settings (the spend
 * approval threshold).
 */
import { sql, type Migration } from 'kysely';

export const inputRequests: Migration = {
  async up(db) {
    await db.schema
      .alterTable('operations')
      // JSON {kind, message, reason?, allowed, fields?, requested_at, expires_at?} while needs_input is 1.
      .addColumn('input_request', 'text')
      .execute();
    await db.schema
      .alterTable('operations')
      // JSON {a2a_task_id, a2a_context_id, received_at}: the open A2A task of the reply that asked,
      // the only handle a person's answer may be sent on (AdCP spec, task status). Null over MCP.
      .addColumn('continuation', 'text')
      .execute();
    await db.schema
      .alterTable('operations')
      // JSON of the answer (who, what, when) and, while it is being sent on the continuation,
      // the exact message so that a resend after a crash carries the same message id and bytes.
      .addColumn('answer', 'text')
      .execute();
    // The inbox reads what waits for a person, oldest first.
    await sql`CREATE INDEX operations_waiting ON operations (tenant_id, created_at) WHERE needs_input = 1`.execute(db);

    await db.schema
      .createTable('tenant_settings')
      .addColumn('tenant_id', 'text', (c) => c.primaryKey())
      // JSON {approval_over?: {amount, currency}}
      .addColumn('settings', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text', (c) => c.notNull())
      .execute();
  },
};
