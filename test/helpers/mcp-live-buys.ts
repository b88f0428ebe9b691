/**
 * Live media buys over MCP: the live-buy stack (a sandbox seller whose flight clock is
 * stopped, so tests drive every report with its hooks) with one key per role (named
 * `<role>-key`), MCP sessions opened with them, and a buy bought by the
 * create_media_buy tool. Every wait is on an event or a poll of the API, never a sleep.
 */
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Role } from '../../src/domain/roles.js';
import { connectMcp, type McpTestClient } from './mcp-client.js';
import { liveBuyRequest, startLiveBuyStack, type LiveBuyStack } from './live-buys.js';
import type { TestDatabase } from './databases.js';

export interface McpLiveBuyStack extends LiveBuyStack {
  keys: Record<Role, string>;
  connect(role: Role): Promise<McpTestClient>;
  /** Buys by tool (hourly reports) and answers the buy as list_media_buys shows it, with the tool's answer. */
  buyByTool(client: McpTestClient, extra?: Record<string, unknown>): Promise<{ buy: any; operation: any }>;
}

export async function startMcpLiveBuyStack(opts: { env?: Record<string, string>; database?: TestDatabase } = {}): Promise<McpLiveBuyStack> {
  const stack = await startLiveBuyStack(opts);
  const keys = {} as Record<Role, string>;
  for (const role of ['viewer', 'operator', 'approver', 'admin'] as const) {
    keys[role] = await stack.orch.app.store.tenants.createApiKey(stack.orch.tenantId, { name: `${role}-key`, role });
  }
  const clients: McpTestClient[] = [];
  const close = stack.close;
  return {
    ...stack,
    keys,
    async connect(role) {
      const client = await connectMcp(stack.orch.url, keys[role], `${role}-agent`);
      clients.push(client);
      return client;
    },
    async buyByTool(client, extra = {}) {
      const answer = await client.call('create_media_buy', { agent_id: stack.agentId, request: liveBuyRequest(['sandbox_instant']), reporting: { frequency: 'hourly' }, ...extra });
      const operation = answer.structuredContent as any;
      if (answer.isError || operation?.status !== 'completed') throw new Error(`buy by tool did not complete: ${JSON.stringify(answer)}`);
      // The buy is recorded in the commit that completes its create_media_buy.
      const page = (await client.call('list_media_buys', { agent_id: stack.agentId, limit: 500 })).structuredContent as any;
      const buy = page.media_buys.find((b: any) => b.operation_id === operation.id);
      if (!buy) throw new Error(`no media buy for operation ${operation.id}`);
      return { buy, operation };
    },
    async close() {
      for (const c of clients) await c.close().catch(() => undefined);
      await close();
    },
  };
}

/** The resource updates a session hears of, and a way to wait for the next one of a URI. */
export function resourceUpdates(client: McpTestClient) {
  const heard: string[] = [];
  let waiters: Array<() => void> = [];
  client.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    heard.push(n.params.uri);
    const woken = waiters;
    waiters = [];
    for (const w of woken) w();
  });
  return {
    heard,
    /** Resolves once `uri` has been heard more than `after` times. */
    async next(uri: string, after: number, timeoutMs = 15_000): Promise<void> {
      const count = () => heard.filter((u) => u === uri).length;
      while (count() <= after) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no update of ${uri} within ${timeoutMs} ms`)), timeoutMs);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    count: (uri: string) => heard.filter((u) => u === uri).length,
  };
}

/** A resource's JSON as resources/read answers it. */
export async function readJson(client: McpTestClient, uri: string): Promise<any> {
  const read = await client.client.readResource({ uri });
  return JSON.parse((read.contents[0] as { text: string }).text);
}
