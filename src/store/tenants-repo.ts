/** Tenants and their API keys. Keys are shown once, stored only as SHA-256 hashes. */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { isRole, keyNameProblem, type Role } from '../domain/roles.js';
import { CompiledQueries } from './compiled.js';
import { isUniqueViolation, type Db } from './db.js';

export interface Tenant {
  id: string;
  name: string;
}

/** What a key is, without the key: safe to list and to show. */
export interface ApiKeyInfo {
  id: string;
  tenant_id: string;
  name: string;
  /** Usually a Role; a stored role this version does not know is passed on as is and grants nothing. */
  role: string;
  prefix: string;
  created_at: number;
}

/** Who a request is: the key's tenant and the key itself. */
export interface KeyHolder {
  tenant: Tenant;
  key: ApiKeyInfo;
}

export interface NewApiKey {
  /** Adopt this key (given by the operator) instead of minting one. */
  key?: string;
  /** Default `key-<prefix>` (see apiKeyLabel; a random one when the prefix is empty). */
  name?: string;
  /** Default admin, so that a key made without asking can do what every key could before roles. */
  role?: Role;
  /**
   * When another key of the tenant has the name: `fail` (the default for a name given)
   * throws KeyNameTakenError; `suffix` (the default for a generated one) names it `<name>-<8 chars>`.
   */
  ifNameTaken?: 'fail' | 'suffix';
  now?: number;
}

export class KeyNameTakenError extends Error {
  constructor(readonly keyName: string) {
    super(`a key named '${keyName}' already exists for this tenant`);
  }
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

const KEY_COLUMNS = ['id', 'tenant_id', 'name', 'role', 'prefix', 'created_at'] as const;

export class TenantsRepo {
  /** findApiKey runs with every API request: compiled once (src/store/compiled.ts). */
  private readonly compiled: CompiledQueries;

  constructor(private readonly db: Db) {
    this.compiled = new CompiledQueries(db.direct);
  }

  async ensureTenant(name: string, now = Date.now()): Promise<Tenant> {
    const existing = await this.findTenant(name);
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

  async findTenant(name: string): Promise<Tenant | undefined> {
    return this.db.kysely.selectFrom('tenants').select(['id', 'name']).where('name', '=', name).executeTakeFirst();
  }

  /** Stores a key for the tenant (see NewApiKey); returns the plaintext key. */
  async createApiKey(tenantId: string, options: NewApiKey = {}): Promise<string> {
    return (await this.addApiKey(tenantId, options)).key;
  }

  /**
   * Stores a key and returns it with what was stored. Adopting a key that is already
   * stored changes nothing and returns the stored key as it is (`created: false`).
   */
  async addApiKey(tenantId: string, options: NewApiKey = {}): Promise<{ key: string; info: ApiKeyInfo; created: boolean }> {
    if (options.key !== undefined) {
      const existing = await this.findApiKey(options.key);
      if (existing) return { key: options.key, info: existing.key, created: false };
    }
    const key = options.key ?? newApiKey();
    const role = options.role ?? 'admin';
    if (!isRole(role)) throw new Error(`not a key role: ${String(role)}`);
    const prefix = apiKeyLabel(key);
    const id = randomUUID();
    // The default name is shown and recorded with every action: no part of an operator's key goes in it.
    const name = options.name ?? `key-${prefix || id.slice(0, 8)}`;
    const problem = keyNameProblem(name);
    if (problem) throw new Error(`key name ${problem}`);
    const ifNameTaken = options.ifNameTaken ?? (options.name === undefined ? 'suffix' : 'fail');
    const row = { id, tenant_id: tenantId, key_hash: hashApiKey(key), prefix, name, role, created_at: options.now ?? Date.now() };

    const insert = (values: typeof row) =>
      this.db.kysely
        .insertInto('api_keys')
        .values(values)
        .onConflict((oc) => oc.column('key_hash').doNothing())
        .returning(KEY_COLUMNS)
        .executeTakeFirst();
    let stored: ApiKeyInfo | undefined;
    try {
      stored = await insert(row);
    } catch (err) {
      // The key's own hash is handled by ON CONFLICT, so this is the (tenant, name) index.
      if (!isUniqueViolation(err)) throw err;
      if (ifNameTaken === 'fail') throw new KeyNameTakenError(name);
      stored = await insert({ ...row, name: `${name}-${id.slice(0, 8)}` });
    }
    if (stored) return { key, info: stored, created: true };
    // Adopted by another process between our look-up and our insert.
    const existing = await this.findApiKey(key);
    if (!existing) throw new Error('API key vanished while being stored');
    return { key, info: existing.key, created: false };
  }

  async listApiKeys(tenantId: string): Promise<ApiKeyInfo[]> {
    return this.db.kysely.selectFrom('api_keys').select(KEY_COLUMNS).where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('name').execute();
  }

  /** The tenant and key a presented key stands for, or undefined when it is not one of ours. */
  async findApiKey(key: string): Promise<KeyHolder | undefined> {
    const conn = this.db.kysely;
    const { rows } = await this.compiled.execute(conn, 'findApiKey', [hashApiKey(key)], ([hash]) =>
      conn
        .selectFrom('api_keys')
        .innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
        .select(['tenants.name as tenant_name', ...KEY_COLUMNS.map((c) => `api_keys.${c}` as const)])
        .where('api_keys.key_hash', '=', hash),
    );
    const row = rows[0];
    if (!row) return undefined;
    const { tenant_name, ...info } = row;
    return { tenant: { id: info.tenant_id, name: tenant_name }, key: info };
  }

  async findTenantByApiKey(key: string): Promise<Tenant | undefined> {
    return (await this.findApiKey(key))?.tenant;
  }
}
