/** list_agents: the tenant's sellers and governance agents (GET /v1/agents). */
import { z } from 'zod';
import { presentAgent } from '../../api/present.js';
import { readTool } from '../tool.js';
import { AgentListOutput } from './schemas.js';

export const listAgents = readTool({
  name: 'list_agents',
  title: 'List agents',
  description:
    'The AdCP agents this tenant works with: sellers (buy from them with create_media_buy or run_task) and governance agents (plans are synced to them; a governed buy is checked against their plan before anything is spent). Each has an id to pass as agent_id.',
  role: 'viewer',
  input: z.object({}).strict(),
  output: AgentListOutput,
  async run(ctx) {
    const rows = await ctx.services.store.agents.list(ctx.auth.tenantId);
    return { agents: rows.map(presentAgent) };
  },
  summary(json) {
    const agents = (json as { agents: Array<{ id: string; name: string; role: string }> }).agents;
    if (agents.length === 0) return 'No agents are registered for this tenant yet; an admin registers them (POST /v1/agents or the CLI).';
    return `${agents.length} agent(s): ${agents.map((a) => `${a.name} (${a.role}, id ${a.id})`).join('; ')}.`;
  },
});
