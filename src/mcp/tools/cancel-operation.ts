/** cancel_operation: stop an operation, and cancel at the seller where AdCP allows (POST /v1/operations/:id/cancel). */
import { z } from 'zod';
import { presentCancel } from '../../api/present.js';
import { CancelReason } from '../../api/routes/cancel.js';
import { operationSummary } from '../operation-summary.js';
import { changeTool } from '../tool.js';
import { OperationId, OperationOutput } from './schemas.js';

export const cancelOperation = changeTool({
  name: 'cancel_operation',
  title: 'Cancel an operation',
  description:
    'Stops an operation. Work still pending ends canceled here (AdCP has no call to cancel a pending task, so the seller is not told); a media buy the seller already created is canceled at the seller by a new update_media_buy operation (seller_cancel in the answer). An operation that already ended otherwise cannot be canceled. Recorded with this key’s name.',
  role: 'operator',
  destructive: true,
  input: z.object({ id: OperationId, reason: CancelReason.optional() }).strict(),
  output: OperationOutput,
  async run(ctx, args) {
    const outcome = await ctx.services.cancel.cancel({ tenantId: ctx.auth.tenantId, operationId: args.id, actor: ctx.auth.keyName, reason: args.reason });
    return presentCancel(outcome);
  },
  summary: (json, ctx) => operationSummary(json as Parameters<typeof operationSummary>[0], ctx.services.links),
});
