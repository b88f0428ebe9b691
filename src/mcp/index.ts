/**
 * The MCP server (README, "AI agents (MCP)"): AI buyer agents use the orchestrator as
 * tools over MCP Streamable HTTP at /mcp, a layer beside src/api/ over the same engine
 * services. Assembled once per process by src/app.ts.
 */
import type { FastifyInstance } from 'fastify';
import type { McpServices } from './context.js';
import { DashboardLinks } from './links.js';
import { OperationWatch } from './operation-watch.js';
import { mcpRoutes } from './routes.js';
import { McpSessions } from './sessions.js';

export interface McpLayer {
  /** Registers /mcp on the API's Fastify app. */
  routes(app: FastifyInstance): Promise<void>;
  sessions: McpSessions;
  /** Ends every session (and its streams) so the HTTP server can close. */
  close(): Promise<void>;
}

export type McpDeps = Omit<McpServices, 'watch' | 'links'> & {
  /** The dashboard's base URL (ADCP_ORCH_PUBLIC_URL, else this server's address). */
  dashboardBase: () => string;
};

export function createMcp(deps: McpDeps): McpLayer {
  const { dashboardBase, ...rest } = deps;
  const services: McpServices = { ...rest, watch: new OperationWatch(deps.store, deps.live), links: new DashboardLinks(dashboardBase) };
  const sessions = new McpSessions(services);
  return {
    routes: mcpRoutes({ store: deps.store, sessions, outage: deps.outage }),
    sessions,
    close: () => sessions.closeAll(),
  };
}
