/**
 * What `sync_governance` registered at each governance-aware seller (migration 024):
 * the flow's sync step (src/engine/governance/seller-sync.ts) reads it before a
 * governed buy and writes it once the seller said `synced`.
 */
import type { Db } from './db.js';
import type { GovernanceSyncsTable } from './schema.js';

export type GovernanceSyncRow = GovernanceSyncsTable;

export class GovernanceSyncsRepo {
  constructor(private readonly db: Db) {}

  async get(sellerAgentId: string, accountKey: string): Promise<GovernanceSyncRow | undefined> {
    return this.db.kysely.selectFrom('governance_syncs').selectAll().where('seller_agent_id', '=', sellerAgentId).where('account_key', '=', accountKey).executeTakeFirst();
  }

  /** The seller's registration of this account, as it now stands (replace semantics: the last sync wins). */
  async put(row: GovernanceSyncRow): Promise<void> {
    const { seller_agent_id: _s, account_key: _a, ...rest } = row;
    await this.db.kysely
      .insertInto('governance_syncs')
      .values(row)
      .onConflict((oc) => oc.columns(['seller_agent_id', 'account_key']).doUpdateSet(rest))
      .execute();
  }

  /** A seller's registrations, newest first (the agent's JSON, tests). */
  async forSeller(sellerAgentId: string): Promise<GovernanceSyncRow[]> {
    return this.db.kysely.selectFrom('governance_syncs').selectAll().where('seller_agent_id', '=', sellerAgentId).orderBy('synced_at', 'desc').execute();
  }
}
