/**
 * Indexes for listing a tenant's live buys by seller, pacing state or campaign,
 * newest first (GET /v1/media-buys and the dashboard's Media buys page filters).
 * Without them a filter that matches few buys walked the tenant's whole
 * (tenant_id, created_at, id) index looking for a page of matches: about 90 ms
 * with 100,000 buys (bench/media-buys-page.ts), growing with the table. Status
 * already had its own (media_buys_tenant_status, migration 018).
 */
import type { Migration } from 'kysely';

export const mediaBuyListIndexes: Migration = {
  async up(db) {
    await db.schema.createIndex('media_buys_tenant_agent').on('media_buys').columns(['tenant_id', 'agent_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('media_buys_tenant_pacing').on('media_buys').columns(['tenant_id', 'pacing_state', 'created_at', 'id']).execute();
    await db.schema.createIndex('media_buys_tenant_campaign').on('media_buys').columns(['tenant_id', 'campaign_id', 'created_at', 'id']).execute();
  },
};
