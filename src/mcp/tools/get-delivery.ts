/** get_delivery: a live media buy's delivery reports and their totals (GET /v1/media-buys/:id/delivery). */
import { z } from 'zod';
import { mediaBuyDelivery, type DeliveryJson } from '../../engine/media-buys/buy-reads.js';
import { deliverySummary } from '../media-buy-summary.js';
import { readTool } from '../tool.js';
import { DeliveryOutput, MediaBuyId } from './media-buy-schemas.js';

export const getDelivery = readTool({
  name: 'get_delivery',
  title: 'Get a media buy’s delivery',
  description:
    'The delivery reports of a live media buy, oldest first: each period’s impressions and spend (by package too), whether the seller sent it (webhook) or we asked for it (poll), and which later report restated it (superseded_by). The totals count each period once, restatements included.',
  role: 'viewer',
  input: z.object({ id: MediaBuyId }).strict(),
  output: DeliveryOutput,
  run: (ctx, args) => mediaBuyDelivery(ctx.services, ctx.auth.tenantId, args.id),
  summary: (json, ctx, args) => deliverySummary(args.id, json as DeliveryJson, ctx.services.links),
});
