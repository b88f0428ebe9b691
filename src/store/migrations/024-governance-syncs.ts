/**
 * Governance with the seller (README, Governance): a governance agent's
 * `seller_credentials` (what a seller presents when it calls that agent; sealed
 * like every stored secret), and what `sync_governance` registered at each
 * governance-aware seller: one row per (seller agent, account), naming the
 * governance agent the seller was told of. AdCP binds one governance agent to an
 * account (replace semantics), so the account is the key and the agent a column:
 * another agent, another URL or rotated credentials mean the registration is
 * stale and is sent again before the next governed buy there.
 */
import type { Migration } from 'kysely';

export const governanceSyncs: Migration = {
  async up(db) {
    await db.schema.alterTable('agents').addColumn('seller_credentials_enc', 'text').execute();
    await db.schema
      .createTable('governance_syncs')
      .addColumn('seller_agent_id', 'text', (c) => c.notNull())
      // The account reference as sent, canonical JSON (keys sorted): `{"account_id":"…"}` or `{"brand":…,"operator":…}`.
      .addColumn('account_key', 'text', (c) => c.notNull())
      .addColumn('tenant_id', 'text', (c) => c.notNull())
      .addColumn('governance_agent_id', 'text', (c) => c.notNull())
      .addColumn('governance_url', 'text', (c) => c.notNull())
      // A keyed digest (SecretBox.digest) of the URL and credentials sent: tells a rotation apart, holds no secret.
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('idempotency_key', 'text', (c) => c.notNull())
      // The governed operation whose flow sent it.
      .addColumn('operation_id', 'text', (c) => c.notNull())
      .addColumn('synced_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('governance_syncs_pk', ['seller_agent_id', 'account_key'])
      .execute();
  },
};
