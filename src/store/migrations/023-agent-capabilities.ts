/**
 * What each agent says of itself (`get_adcp_capabilities`, src/adcp/capabilities.ts):
 * the declaration as we read it (JSON, null when it has none or none we trust), when we
 * last asked, why it was refused or could not be read, and the AdCP version we speak with
 * it as a result (src/adcp/dialect.ts; null until first asked: spoken to as 3.0).
 */
import type { Migration } from 'kysely';

export const agentCapabilities: Migration = {
  async up(db) {
    await db.schema.alterTable('agents').addColumn('capabilities', 'text').execute();
    await db.schema.alterTable('agents').addColumn('capabilities_fetched_at', 'bigint').execute();
    await db.schema.alterTable('agents').addColumn('capabilities_error', 'text').execute();
    await db.schema.alterTable('agents').addColumn('adcp_version', 'text').execute();
  },
};
