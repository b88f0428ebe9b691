/** list_media_buys: the tenant's live media buys, newest first, filtered (GET /v1/media-buys). */
import { z } from 'zod';
import { MediaBuyFilters } from '../../api/routes/media-buys.js';
import { listMediaBuys as list, type MediaBuyPage } from '../../engine/media-buys/buy-reads.js';
import { mediaBuyPageSummary } from '../media-buy-summary.js';
import { readTool } from '../tool.js';
import { MediaBuyPageOutput } from './media-buy-schemas.js';

export const listMediaBuys = readTool({
  name: 'list_media_buys',
  title: 'List media buys',
  description:
    'The tenant’s live media buys (made by create_media_buy once the seller accepted them), newest first: each with its status, spend of budget, pacing (under, over, on_track, not_started) and reports received or missing. Filter by status, agent, campaign or pacing (e.g. pacing "under" for the buys that spend too slowly); paged with cursor.',
  role: 'viewer',
  input: MediaBuyFilters.extend({
    limit: z.number().int().min(1).max(500).default(50),
    cursor: z.string().max(500).optional().describe('next_cursor of the previous page'),
  }).strict(),
  output: MediaBuyPageOutput,
  run: (ctx, q) =>
    list(ctx.services, ctx.auth.tenantId, { status: q.status, agentId: q.agent_id, campaignId: q.campaign_id, pacing: q.pacing, limit: q.limit, cursor: q.cursor }),
  summary: (json) => mediaBuyPageSummary(json as MediaBuyPage),
});
