/** get_campaign: a campaign's state, budget and buys (GET /v1/campaigns/:id). */
import { z } from 'zod';
import type { CampaignJson } from '../../engine/governance/campaigns.js';
import { EngineError } from '../../engine/errors.js';
import type { DashboardLinks } from '../links.js';
import { readTool } from '../tool.js';
import { CampaignOutput } from './schemas.js';

export function campaignSummary(c: CampaignJson, links: DashboardLinks): string {
  const waiting = (c.buys as Array<{ id?: unknown; needs_input?: unknown }>).filter((b) => b.needs_input === true && typeof b.id === 'string');
  const people = waiting.length > 0 ? ` ${waiting.length} buy(s) wait for a person: ${waiting.map((b) => links.operation(String(b.id))).join(', ')} (inbox: ${links.inbox()}).` : '';
  return `Campaign ${c.id} under plan ${c.plan_id} is ${c.status}: ${c.summary.total} buy(s), ${c.summary.done} done, ${c.summary.running} running, ${c.summary.waiting_on_people} waiting on people, ${c.summary.denied} denied, ${c.summary.failed} failed, ${c.summary.canceled} canceled; budget planned ${c.budget.planned}, committed ${c.budget.committed}.${people} Dashboard: ${links.campaign(c.id)}.`;
}

export const getCampaign = readTool({
  name: 'get_campaign',
  title: 'Get a campaign',
  description: 'A governed campaign: its status (running, waiting_on_people, done), budget planned vs committed against the plan, and each buy as its operation.',
  role: 'viewer',
  input: z.object({ id: z.string().min(1).max(100) }).strict(),
  output: CampaignOutput,
  async run(ctx, args) {
    const campaigns = ctx.services.governance?.campaigns;
    if (!campaigns) throw new EngineError('governance_not_supported', 'this server runs no governance flow', 501);
    return campaigns.view(ctx.auth.tenantId, args.id);
  },
  summary: (json, ctx) => campaignSummary(json as CampaignJson, ctx.services.links),
});
