/**
 * A2A for the governance agent, through the SDK's A2A adapter (message/send
 * with a `{skill, input}` DataPart, the agent card). Unlike the seller, whose
 * own executor keeps input-required tasks open, every governance task ends
 * when its tool returns: a human review is an AdCP `submitted` reply with a
 * `task_id`, polled with new `get_task_status` invocations.
 *
 * The adapter mounts on an Express app. Express is installed (the MCP and A2A
 * SDKs depend on it) but is not a direct dependency, so it is loaded
 * dynamically and typed with the little used here.
 */
import { createA2AAdapter, type AdcpServer } from '@adcp/sdk/server';
import type { NodeHandler } from '../a2a.js';

interface ExpressApp extends NodeHandler {
  use(path: string, ...handlers: unknown[]): unknown;
}

export async function createGovernanceA2AHandler(adcp: AdcpServer, a2aUrl: string, skills: Array<[string, string]>): Promise<NodeHandler> {
  const moduleName = 'express';
  const mod = (await import(moduleName)) as { default: () => ExpressApp };
  const app = mod.default();
  const adapter = createA2AAdapter({
    server: adcp,
    agentCard: {
      name: 'AdCP sandbox governance agent',
      description: 'Sandbox campaign-governance agent: plans, intent checks with signed approvals, outcomes, audit logs.',
      url: a2aUrl,
      version: '1.0.0',
      // get_adcp_capabilities is listed so that buyers take the agent for AdCP v3.
      skills: skills.map(([id, description]) => ({ id, name: id, description, tags: ['adcp', 'governance'] })),
    },
    // The adapter would log every invocation failure; callers see failures in the reply.
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  adapter.mount(app as never);
  return app;
}
