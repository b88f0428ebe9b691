/**
 * An orchestrator with the sandbox seller registered and one key per role (named
 * `<role>-key`), for the MCP tests; `connect(role)` opens an MCP session with that key.
 */
import type { Role } from '../../src/domain/roles.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import type { Database } from '../../src/store/schema.js';
import { connectMcp, type McpTestClient } from './mcp-client.js';
import { startOrchestrator, type TestOrchestrator } from './orchestrator.js';

export interface McpStack {
  seller: SandboxSeller;
  orch: TestOrchestrator;
  agentId: string;
  keys: Record<Role, string>;
  connect(role: Role): Promise<McpTestClient>;
  /** Rows in a table of the orchestrator's database. */
  count(table: keyof Database): Promise<number>;
  close(): Promise<void>;
}

export async function startMcpStack(env: Record<string, string> = {}): Promise<McpStack> {
  const seller = await startSandboxSeller({ port: 0, submittedDelayMs: 1500 });
  const orch = await startOrchestrator({ env: { ADCP_ORCH_MCP_WAIT_MS: '5000', ...env } });
  const agentId = await orch.registerAgent({ url: seller.url });
  const keys = {} as Record<Role, string>;
  for (const role of ['viewer', 'operator', 'approver', 'admin'] as const) {
    keys[role] = await orch.app.store.tenants.createApiKey(orch.tenantId, { name: `${role}-key`, role });
  }
  const clients: McpTestClient[] = [];
  return {
    seller,
    orch,
    agentId,
    keys,
    async connect(role) {
      const client = await connectMcp(orch.url, keys[role], `${role}-agent`);
      clients.push(client);
      return client;
    },
    count: async (table) => Number((await orch.app.store.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n),
    async close() {
      for (const c of clients) await c.close().catch(() => undefined);
      await orch.close();
      await seller.close();
    },
  };
}
