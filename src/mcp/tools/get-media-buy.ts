/** get_media_buy: one live media buy with its events (GET /v1/media-buys/:id). */
import { z } from 'zod';
import type { MediaBuyJson } from '../../domain/media-buy-json.js';
import { showMediaBuy } from '../../engine/media-buys/buy-reads.js';
import { mediaBuySummary } from '../media-buy-summary.js';
import { readTool } from '../tool.js';
import { MediaBuyId, MediaBuyOutput } from './media-buy-schemas.js';

export const getMediaBuy = readTool({
  name: 'get_media_buy',
  title: 'Get a media buy',
  description:
    'One live media buy as the seller last told us: status (pending_creatives, pending_start, active, paused, completed, rejected, canceled), flight, budget, packages, delivery so far (impressions, spend) with its pacing against the flight, the delivery reports received and missing, and its events (who paused or resumed it, what the seller reported).',
  role: 'viewer',
  input: z.object({ id: MediaBuyId }).strict(),
  output: MediaBuyOutput,
  run: (ctx, args) => showMediaBuy(ctx.services, ctx.auth.tenantId, args.id),
  summary: (json, ctx) => mediaBuySummary(json as MediaBuyJson, ctx.services.links),
});
