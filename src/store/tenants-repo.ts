/** Tenants and their API keys. Keys are shown once, stored only as SHA-256 hashes. */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from './db.js';

export interface Tenant {
  id: string;
  name: string;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function newApiKey(): string {
  return `aok_${randomBytes(32).toString('base64url')}`;
}

/**
 * What is kept in clear to tell keys apart: the first 8 characters of a key we
 * minted (4 of its 43 random ones; the rest stays unguessable), nothing of a key
 * the operator chose (ADCP_ORCH_API_KEY may be as short as 16 characters, and 8
 * of them would be half of it).
 */
export function apiKeyLabel(key: string): string {
  return /^aok_[A-Za-z0-9_-]{43}$/.test(key) ? key.slice(0, 8) : '';
}

export class TenantsRepo {
  constructor(private readonly db: Db) {}

  async ensureTenant(name: string, now = Date.now()): Promise<Tenant> {
    const existing = await this.db.kysely.selectFrom('tenants').select(['id', 'name']).where('name', '=', name).executeTakeFirst();
    if (existing) return existing;
    const tenant = { id: randomUUID(), name };
    await this.db.kysely
      .insertInto('tenants')
      .values({ ...tenant, created_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    // Another instance may have created it at the same moment: read back the winner.
    return this.db.kysely.selectFrom('tenants').select(['id', 'name']).where('name', '=', name).executeTakeFirstOrThrow();
  }

  /** Stores a key for the tenant; pass `key` to adopt one given by the operator. Returns the plaintext key. */
  async createApiKey(tenantId: string, key = newApiKey(), now = Date.now()): Promise<string> {
    await this.db.kysely
      .insertInto('api_keys')
      .values({ id: randomUUID(), tenant_id: tenantId, key_hash: hashApiKey(key), prefix: apiKeyLabel(key), created_at: now })
      .onConflict((oc) => oc.column('key_hash').doNothing())
      .execute();
    return key;
  }

  async findTenantByApiKey(key: string): Promise<Tenant | undefined> {
    return this.db.kysely
      .selectFrom('api_keys')
      .innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
      .select(['tenants.id as id', 'tenants.name as name'])
      .where('api_keys.key_hash', '=', hashApiKey(key))
      .executeTakeFirst();
  }
}
