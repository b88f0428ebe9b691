/**
 * Agent rows are cached per process and never served stale: a write through this store
 * empties the cache, a write by another connection to the same SQLite file (what the
 * `agents` CLI is) is seen through PRAGMA data_version, and without such a counter
 * (PostgreSQL) an entry lives at most a second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentCache, TTL_MS } from '../../src/store/agent-cache.js';
import { openStore, type Store } from '../../src/store/index.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';

describe('agent rows cached per process (SQLite file)', () => {
  let database: TestDatabase;
  let store: Store;
  let other: Store;
  let tenantId: string;

  beforeAll(async () => {
    database = tempSqlite();
    store = await openStore(database.url);
    other = await openStore(database.url); // another process's connection to the same file
    tenantId = (await store.tenants.ensureTenant('acme')).id;
  });
  afterAll(async () => {
    await other?.close();
    await store?.close();
    await database?.drop();
  });

  it('a read after a write through this store sees the write', async () => {
    const agent = await store.agents.insert({ tenantId, name: 'a', role: 'seller', url: 'http://127.0.0.1:1/mcp', protocol: 'mcp', authTokenSealed: 'sealed-1' });
    expect((await store.agents.get(agent.id))!.auth_token_enc).toBe('sealed-1');
    await store.agents.updateCredentials(agent.id, 'sealed-2');
    expect((await store.agents.get(agent.id))!.auth_token_enc).toBe('sealed-2');
    await store.agents.updateEndpoint(agent.id, 'http://127.0.0.1:2/mcp');
    expect((await store.agents.getForTenant(tenantId, agent.id))!.url).toBe('http://127.0.0.1:2/mcp');
  });

  it('a write by another connection to the file is seen at the next read', async () => {
    const agent = await store.agents.insert({ tenantId, name: 'b', role: 'seller', url: 'http://127.0.0.1:1/mcp', protocol: 'mcp', authTokenSealed: 'old' });
    expect((await store.agents.get(agent.id))!.auth_token_enc).toBe('old'); // now cached
    await other.agents.updateCredentials(agent.id, 'new');
    expect((await store.agents.get(agent.id))!.auth_token_enc).toBe('new');
    await other.agents.updateEndpoint(agent.id, 'http://127.0.0.1:9/mcp');
    expect((await store.agents.get(agent.id))!.url).toBe('http://127.0.0.1:9/mcp');
  });

  it('the tenant check still applies to a cached row, and callers get copies', async () => {
    const agent = await store.agents.insert({ tenantId, name: 'c', role: 'seller', url: 'http://127.0.0.1:1/mcp', protocol: 'mcp' });
    const first = (await store.agents.get(agent.id))!;
    first.url = 'changed by a caller';
    expect((await store.agents.get(agent.id))!.url).toBe('http://127.0.0.1:1/mcp');
    expect(await store.agents.getForTenant('another-tenant', agent.id)).toBeUndefined();
  });
});

describe('agent cache without a change counter (PostgreSQL)', () => {
  it('drops an entry older than the TTL', () => {
    let now = 1_000_000;
    const cache = new AgentCache(undefined, () => now);
    const row = { id: 'a1', tenant_id: 't', name: 'a', role: 'seller', url: 'u', protocol: 'mcp', auth_token_enc: null, webhook_signing: null, created_at: 0 };
    cache.put(row);
    now += TTL_MS;
    expect(cache.get('a1')?.url).toBe('u');
    now += 1;
    expect(cache.get('a1')).toBeUndefined();
  });
});
