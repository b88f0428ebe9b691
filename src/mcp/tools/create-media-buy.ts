/** create_media_buy: a buy at a seller (POST /v1/media-buys). */
import { z } from 'zod';
import { Governance, ReportingRequest, WebhookMode } from '../../api/routes/operations.js';
import { startTool } from '../tool.js';
import { OperationOutput } from './schemas.js';

export const createMediaBuy = startTool({
  name: 'create_media_buy',
  title: 'Create a media buy',
  description:
    'Buys media at a seller (AdCP create_media_buy) as a durable operation: stored before it is sent, never sent twice. With governance, the buy is checked against the plan first and nothing is spent without the governance agent’s approval; with approval "required" (or over the tenant’s approval threshold) it is held for a person and nothing is sent until they approve. When a person must act, the answer says so with the dashboard link. Answers the operation once it ends, needs a person or is queued at the seller (within about 20 s); then follow it with wait_for_operation. Supports MCP tasks: the task id is the operation id.',
  role: 'operator',
  input: z
    .object({
      agent_id: z.string().min(1).max(100).describe('A seller agent’s id (list_agents)'),
      request: z.record(z.string(), z.unknown()).describe('The AdCP create_media_buy request: account, brand, packages with product_id, pricing_option_id and budget, start_time, end_time …'),
      governance: Governance.optional(),
      approval: z.enum(['required']).optional().describe('"required": hold the buy for a person’s approval before anything is sent'),
      webhook: WebhookMode.optional().describe('How the seller must sign its webhooks (default rfc9421; none: polling only)'),
      reporting: ReportingRequest.optional().describe(
        'The delivery reports the seller is asked to send us once the buy is live: frequency (hourly, daily, monthly; default the tenant’s, daily) and how they authenticate (hmac, the default, or bearer: every AdCP schema requires a secret there; a governed buy’s is part of what its governance agent checks)',
      ),
    })
    .strict(),
  output: OperationOutput,
  start: (ctx, args, options) =>
    ctx.services.starter.start(
      {
        tenantId: ctx.auth.tenantId,
        agentId: args.agent_id,
        task: 'create_media_buy',
        params: args.request,
        governance: args.governance,
        approval: args.approval,
        webhook: args.webhook,
        ...(args.reporting ? { reportingAsked: args.reporting } : {}),
        actor: ctx.auth.keyName,
        clientKey: options.clientKey,
        reservation: options.reservation,
      },
      { waitMs: options.waitMs },
    ),
});
