/** resume_media_buy: update_media_buy with paused: false at the seller (POST /v1/media-buys/:id/resume). */
import { z } from 'zod';
import { startTool } from '../tool.js';
import { MediaBuyId } from './media-buy-schemas.js';
import { OperationOutput } from './schemas.js';

export const resumeMediaBuy = startTool({
  name: 'resume_media_buy',
  title: 'Resume a media buy',
  description:
    'Resumes a paused media buy at the seller: an update_media_buy with paused: false, sent as a durable operation (stored before it is sent, never sent twice). It commits no new spend, so it is not governed. Answers that operation once the seller replied (within about 20 s); the buy shows its status again once the seller confirms it (get_media_buy). A buy that is not paused is refused. Supports MCP tasks: the task id is the operation id.',
  role: 'operator',
  input: z.object({ id: MediaBuyId }).strict(),
  output: OperationOutput,
  start: (ctx, args, options) =>
    ctx.services.mediaBuys.resume({
      tenantId: ctx.auth.tenantId,
      buyId: args.id,
      actor: ctx.auth.keyName,
      clientKey: options.clientKey,
      reservation: options.reservation,
      waitMs: options.waitMs,
    }),
  note: (ctx, args) =>
    `It resumes media buy ${args.id}, which is no longer paused once the seller's status confirms it (get_media_buy). The buy's page: ${ctx.services.links.mediaBuy(args.id)}.`,
});
