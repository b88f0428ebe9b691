/**
 * A2A transport for the sandbox, via the SDK's A2A adapter (message/send
 * with a `{skill, input}` DataPart, tasks/get for the A2A task, agent card).
 *
 * The adapter mounts on an Express app. Express is not a direct dependency of
 * this project, but the MCP and A2A SDKs depend on it, so it is always
 * installed; it is loaded dynamically and typed minimally here to keep that
 * coupling in one place.
 *
 * Known limits of the SDK adapter (v0): no streaming, no A2A push
 * notifications, no A2A-native input-required continuation — which is why
 * input-required is answered with the sandbox_respond skill on A2A too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createA2AAdapter, type AdcpServer } from '@adcp/sdk/server';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

interface ExpressApp extends NodeHandler {
  use(path: string, ...handlers: unknown[]): unknown;
}

/**
 * Skills advertised on the agent card. The adapter's default list leaves out
 * get_adcp_capabilities, and the SDK's buyer client then takes the agent for
 * an AdCP v2 seller and rewrites requests into the 2.5 shape; listing it
 * keeps A2A buyers on v3.
 */
const SKILLS: Array<[string, string]> = [
  ['get_adcp_capabilities', 'AdCP capabilities of this seller.'],
  ['get_products', 'The sandbox catalogue; each product id selects a create_media_buy behaviour.'],
  ['create_media_buy', 'Create a media buy; behaviour chosen by packages[0].product_id.'],
  ['update_media_buy', 'Cancel a media buy this seller created: {media_buy_id, canceled: true, cancellation_reason?}.'],
  ['tasks/get', 'Poll a task by AdCP task_id.'],
  ['tasks_get', 'Alias of tasks/get.'],
  ['get_task_status', 'Alias of tasks/get (3.1 name).'],
  ['tasks/list', 'List tasks with filters and cursor pagination.'],
  ['list_tasks', 'Alias of tasks/list.'],
  ['sandbox_respond', 'Answer an input-required/auth-required task: {task_id, approve, message?, then?}.'],
];

export async function createA2AHandler(adcp: AdcpServer, a2aUrl: string): Promise<NodeHandler> {
  const moduleName = 'express';
  const mod = (await import(moduleName)) as { default: () => ExpressApp };
  const app = mod.default();
  const adapter = createA2AAdapter({
    server: adcp,
    agentCard: {
      name: 'AdCP sandbox seller',
      description:
        'Sandbox seller for testing buyers: create_media_buy behaviour is selected by the product id (see get_products).',
      url: a2aUrl,
      version: '1.0.0',
      skills: SKILLS.map(([id, description]) => ({ id, name: id, description, tags: ['adcp'] })),
    },
    // The adapter would log every invocation failure to console; the
    // sandbox's callers see failures in the reply already.
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  adapter.mount(app as never);
  return app;
}
