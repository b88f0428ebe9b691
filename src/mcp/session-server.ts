/**
 * The MCP server one session talks to, built for the key that opened it: the tools
 * its role may use (tools/list), tools/call (src/mcp/call-tool.ts), the resources
 * (operations, live media buys) with their subscriptions, and tasks backed by
 * operations (the SDK's task handlers over OperationTaskStore).
 *
 * Built on the SDK's low-level Server rather than McpServer: McpServer answers a call
 * of a task-capable tool made without a task by polling until the task ends, which for
 * a buy held for a person's approval would be never; here such a call answers within
 * ADCP_ORCH_MCP_WAIT_MS. And a tool the role may not use is refused with our
 * `forbidden` error, as the API refuses it, not as an unknown name.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type Tool as McpToolDefinition,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { RequestAuth } from '../api/auth.js';
import { roleAtLeast } from '../domain/roles.js';
import { callTool } from './call-tool.js';
import type { McpServices, ToolContext } from './context.js';
import { SessionResources } from './resources.js';
import { OperationTaskStore } from './task-store.js';
import { inputOf, type Tool } from './tool.js';
import { TOOLS } from './tools/index.js';

export const SERVER_INFO = { name: 'adcp-orchestrator', version: '0.1.0' };

const INSTRUCTIONS =
  'adcp-orchestrator buys advertising from AdCP seller agents on behalf of this tenant. Every call to a seller is a durable operation: stored before it is sent, never sent twice, followed to its end across restarts. Spend may be governed (checked against a plan by a governance agent) and may be held for a person: when a person must decide, the answer says so and gives the dashboard link; tell the user, and read the operation again later (wait_for_operation answers at once while a person is awaited, and follows it once they have decided). Pass an idempotency_key on every call that changes something, so a retry after a lost connection never buys twice.';

export interface SessionServer {
  server: Server;
  /** Ends the session's feed subscription. */
  close(): void;
}

export function buildSessionServer(auth: RequestAuth, services: McpServices): SessionServer {
  const scope: Omit<ToolContext, 'signal'> = { auth, services };
  const server = new Server(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: false },
      resources: { subscribe: true, listChanged: false },
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    },
    instructions: INSTRUCTIONS,
    taskStore: new OperationTaskStore(scope),
  });
  const resources = new SessionResources(scope, (uri) => server.sendResourceUpdated({ uri }));
  const listed = TOOLS.filter((t) => roleAtLeast(auth.role, t.role)).map(describe);

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(request, extra, scope));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await resources.list() }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: resources.templates() }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => resources.read(request.params.uri));
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    await resources.subscribe(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    await resources.unsubscribe(request.params.uri);
    return {};
  });
  return { server, close: () => resources.close() };
}

/** JSON Schemas are computed once per tool, not per session. */
const described = new Map<string, McpToolDefinition>();

function describe(tool: Tool): McpToolDefinition {
  const cached = described.get(tool.name);
  if (cached) return cached;
  const definition = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: z.toJSONSchema(inputOf(tool), { target: 'draft-7', io: 'input' }) as McpToolDefinition['inputSchema'],
    outputSchema: z.toJSONSchema(tool.output, { target: 'draft-7', io: 'output' }) as McpToolDefinition['outputSchema'],
    annotations: {
      title: tool.title,
      readOnlyHint: tool.kind === 'read',
      destructiveHint: tool.kind === 'change' && tool.destructive === true,
      // With the same idempotency_key, a repeat does nothing more; without one it may.
      idempotentHint: false,
      openWorldHint: tool.kind === 'start',
    },
    execution: { taskSupport: tool.kind === 'start' ? ('optional' as const) : ('forbidden' as const) },
  };
  described.set(tool.name, definition);
  return definition;
}
