/** refresh_media_buy: read a live media buy's status and delivery from the seller now (POST /v1/media-buys/:id/refresh). */
import { z } from 'zod';
import { presentOperation, type OperationJson } from '../../domain/operation-json.js';
import { changeTool } from '../tool.js';
import { MediaBuyId } from './media-buy-schemas.js';
import { OperationOutput } from './schemas.js';

export const refreshMediaBuy = changeTool({
  name: 'refresh_media_buy',
  title: 'Refresh a media buy from the seller',
  description:
    'Asks the seller now for a live media buy’s status (get_media_buys) and delivery (get_media_buy_delivery), as two durable operations whose answers update the buy as they complete, instead of waiting for the next report or status read. Changes nothing at the seller. Then read the buy with get_media_buy (or follow the operations with wait_for_operation).',
  role: 'operator',
  input: z.object({ id: MediaBuyId }).strict(),
  output: z.object({ operations: z.array(OperationOutput) }).loose(),
  async run(ctx, args, clientKey) {
    const ops = await ctx.services.mediaBuys.refresh({ tenantId: ctx.auth.tenantId, buyId: args.id, actor: ctx.auth.keyName, ...(clientKey ? { clientKey } : {}) });
    return { operations: ops.map((o) => presentOperation(o)) };
  },
  summary(json, ctx, args) {
    const ops = (json as { operations: OperationJson[] }).operations;
    const listed = ops.map((o) => `${o.id} (${o.type}, ${o.status})`).join(' and ');
    return `Asked the seller about media buy ${args.id} now: operation ${listed}. Their answers update the buy as they complete; read it with get_media_buy, or follow an operation with wait_for_operation. Dashboard: ${ctx.services.links.mediaBuy(args.id)}.`;
  },
});
