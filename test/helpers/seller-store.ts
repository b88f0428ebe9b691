/** The set-up most store tests share: a store on a fresh database, one tenant and one MCP seller agent. */
import { openStore, type Store } from '../../src/store/index.js';
import type { TestDatabase } from './databases.js';

export interface SellerStore {
  store: Store;
  tenantId: string;
  agentId: string;
}

export async function openSellerStore(database: TestDatabase, options?: Parameters<typeof openStore>[1]): Promise<SellerStore> {
  const store = await openStore(database.url, options);
  const tenantId = (await store.tenants.ensureTenant('acme')).id;
  const agentId = (await store.agents.insert({ tenantId, name: 's', role: 'seller', url: 'http://127.0.0.1:1/mcp', protocol: 'mcp' })).id;
  return { store, tenantId, agentId };
}

/** Closes what openSellerStore opened and drops the database (either may be missing after a failed set-up). */
export async function closeSellerStore(store: Store | undefined, database: TestDatabase | undefined): Promise<void> {
  await store?.close();
  await database?.drop();
}
