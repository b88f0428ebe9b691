/** create_campaign: buys across sellers under one governance plan (POST /v1/campaigns). */
import { CampaignInput } from '../../api/routes/campaigns.js';
import type { CampaignJson } from '../../engine/governance/campaigns.js';
import { EngineError } from '../../engine/errors.js';
import { changeTool } from '../tool.js';
import { campaignSummary } from './get-campaign.js';
import { CampaignOutput } from './schemas.js';

export const createCampaign = changeTool({
  name: 'create_campaign',
  title: 'Start a governed campaign',
  description:
    'Starts a campaign: up to 50 create_media_buy operations at sellers, each checked against one governance plan (which the governance agent must have accepted: sync_plan, get_plan) before anything is spent. Buys the governance agent approves on conditions, or that a tenant rule holds, wait for a person in the inbox. Follow it with get_campaign, or each buy with wait_for_operation.',
  role: 'operator',
  input: CampaignInput,
  output: CampaignOutput,
  async run(ctx, args, clientKey) {
    const campaigns = ctx.services.governance?.campaigns;
    if (!campaigns) throw new EngineError('governance_not_supported', 'this server runs no governance flow', 501);
    return campaigns.create(ctx.auth.tenantId, args, ctx.auth.keyName, clientKey);
  },
  summary: (json, ctx) => campaignSummary(json as CampaignJson, ctx.services.links),
});
