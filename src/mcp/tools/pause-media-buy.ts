/** pause_media_buy: update_media_buy with paused: true at the seller (POST /v1/media-buys/:id/pause). */
import { z } from 'zod';
import { startTool } from '../tool.js';
import { MediaBuyId } from './media-buy-schemas.js';
import { OperationOutput } from './schemas.js';

export const pauseMediaBuy = startTool({
  name: 'pause_media_buy',
  title: 'Pause a media buy',
  description:
    'Pauses a live media buy at the seller: an update_media_buy with paused: true, sent as a durable operation (stored before it is sent, never sent twice). It commits no new spend, so it is not governed. Answers that operation once the seller replied (within about 20 s); the buy shows status paused once the seller confirms it (get_media_buy). A buy already paused or ended is refused. Supports MCP tasks: the task id is the operation id.',
  role: 'operator',
  input: z.object({ id: MediaBuyId }).strict(),
  output: OperationOutput,
  start: (ctx, args, options) =>
    ctx.services.mediaBuys.pause({
      tenantId: ctx.auth.tenantId,
      buyId: args.id,
      actor: ctx.auth.keyName,
      clientKey: options.clientKey,
      reservation: options.reservation,
      waitMs: options.waitMs,
    }),
  note: (ctx, args) =>
    `It pauses media buy ${args.id}, which shows paused once the seller's status confirms it (get_media_buy). The buy's page: ${ctx.services.links.mediaBuy(args.id)}.`,
});
