/** Registered agents. The bearer token is stored sealed and never leaves this layer unsealed except to call the agent. */
import { randomUUID } from 'node:crypto';
import { AgentCache } from './agent-cache.js';
import type { Db } from './db.js';
import type { AgentsTable } from './schema.js';

export type AgentRow = AgentsTable;

export interface NewAgent {
  tenantId: string;
  name: string;
  role: 'seller' | 'governance';
  url: string;
  protocol: 'mcp' | 'a2a';
  authTokenSealed?: string | null;
  webhookSigning?: unknown;
  /** A governance agent's credentials for sellers, already sealed. */
  sellerCredentialsSealed?: string | null;
}

export class AgentsRepo {
  /** Rows by id for the hot paths (every send and poll); see agent-cache.ts for how it stays fresh. */
  private readonly cache: AgentCache;

  constructor(private readonly db: Db) {
    this.cache = new AgentCache(db.dataVersion);
  }

  async insert(agent: NewAgent, now = Date.now()): Promise<AgentRow> {
    const row: AgentRow = {
      id: randomUUID(),
      tenant_id: agent.tenantId,
      name: agent.name,
      role: agent.role,
      url: agent.url,
      protocol: agent.protocol,
      auth_token_enc: agent.authTokenSealed ?? null,
      webhook_signing: agent.webhookSigning === undefined ? null : JSON.stringify(agent.webhookSigning),
      created_at: now,
      ...(agent.sellerCredentialsSealed ? { seller_credentials_enc: agent.sellerCredentialsSealed } : {}),
    };
    await this.db.kysely.insertInto('agents').values(row).execute();
    this.cache.clear();
    return row;
  }

  async get(id: string): Promise<AgentRow | undefined> {
    const cached = this.cache.get(id);
    if (cached) return cached;
    const row = await this.db.kysely.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
    if (row) this.cache.put(row);
    return row;
  }

  async getForTenant(tenantId: string, id: string): Promise<AgentRow | undefined> {
    const row = await this.get(id);
    return row && row.tenant_id === tenantId ? row : undefined;
  }

  async findByUrl(tenantId: string, url: string): Promise<AgentRow | undefined> {
    return this.db.kysely.selectFrom('agents').selectAll().where('tenant_id', '=', tenantId).where('url', '=', url).executeTakeFirst();
  }

  async findByName(tenantId: string, name: string): Promise<AgentRow | undefined> {
    return this.db.kysely.selectFrom('agents').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
  }

  /** Points an agent at a new address (sandbox agents get a fresh port each start). */
  async updateEndpoint(id: string, url: string, webhookSigning?: unknown): Promise<void> {
    await this.db.kysely
      .updateTable('agents')
      .set({ url, ...(webhookSigning === undefined ? {} : { webhook_signing: JSON.stringify(webhookSigning) }) })
      .where('id', '=', id)
      .execute();
    this.cache.clear();
  }

  /** Replaces the agent's bearer token (already sealed), or removes it with null. */
  async updateCredentials(id: string, authTokenSealed: string | null): Promise<void> {
    await this.db.kysely.updateTable('agents').set({ auth_token_enc: authTokenSealed }).where('id', '=', id).execute();
    this.cache.clear();
  }

  /** Replaces a governance agent's credentials for sellers (already sealed), or removes them with null. */
  async updateSellerCredentials(id: string, sealed: string | null): Promise<void> {
    await this.db.kysely.updateTable('agents').set({ seller_credentials_enc: sealed }).where('id', '=', id).execute();
    this.cache.clear();
  }

  /**
   * What the agent said of itself when we last asked (src/engine/agent-capabilities.ts):
   * its `capabilities` JSON (left out of the update, kept as it was: an ask that failed does
   * not forget what it said before), the error of the ask, and the version we now speak with it.
   */
  async updateCapabilities(id: string, update: { capabilities?: string | null; fetchedAt: number; error: string | null; adcpVersion: string }): Promise<void> {
    await this.db.kysely
      .updateTable('agents')
      .set({
        ...(update.capabilities !== undefined ? { capabilities: update.capabilities } : {}),
        capabilities_fetched_at: update.fetchedAt,
        capabilities_error: update.error,
        adcp_version: update.adcpVersion,
      })
      .where('id', '=', id)
      .execute();
    this.cache.clear();
  }

  /** Agents not asked for their capabilities since `before` (epoch ms), oldest first: the refresh's work. */
  async capabilitiesDue(before: number, limit: number): Promise<AgentRow[]> {
    return this.db.kysely
      .selectFrom('agents')
      .selectAll()
      .where((eb) => eb.or([eb('capabilities_fetched_at', 'is', null), eb('capabilities_fetched_at', '<', before)]))
      .orderBy('capabilities_fetched_at')
      .limit(limit)
      .execute();
  }

  async list(tenantId: string): Promise<AgentRow[]> {
    return this.db.kysely.selectFrom('agents').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
  }

  async listAll(role?: string): Promise<AgentRow[]> {
    let q = this.db.kysely.selectFrom('agents').selectAll();
    if (role) q = q.where('role', '=', role);
    return q.orderBy('created_at').execute();
  }
}
