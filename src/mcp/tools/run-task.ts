/** run_task: any AdCP task, run durably at an agent (POST /v1/operations). */
import { z } from 'zod';
import { Governance, TaskName, WebhookMode } from '../../api/routes/operations.js';
import { startTool } from '../tool.js';
import { OperationOutput } from './schemas.js';

export const runTask = startTool({
  name: 'run_task',
  title: 'Run an AdCP task',
  description:
    'Runs one AdCP task (get_products, update_media_buy, sync_creatives, list_creative_formats …) at an agent as a durable operation: stored before it is sent, resent safely after any crash, followed to its end by webhook and polling. With governance, a spend (create_media_buy, update_media_buy) is checked against the plan first and nothing is sent without approval. Answers the operation once it ends, needs a person or is queued at the seller (within about 20 s); then follow it with wait_for_operation. Supports MCP tasks: the task id is the operation id.',
  role: 'operator',
  input: z
    .object({
      agent_id: z.string().min(1).max(100),
      task: TaskName,
      params: z.record(z.string(), z.unknown()).describe('The task’s AdCP arguments; the orchestrator adds idempotency_key, push_notification_config and context'),
      governance: Governance.optional(),
      webhook: WebhookMode.optional().describe('How the seller must sign its webhooks (default rfc9421; none: polling only)'),
    })
    .strict(),
  output: OperationOutput,
  start: (ctx, args, options) =>
    ctx.services.starter.start(
      {
        tenantId: ctx.auth.tenantId,
        agentId: args.agent_id,
        task: args.task,
        params: args.params,
        governance: args.governance,
        webhook: args.webhook,
        actor: ctx.auth.keyName,
        clientKey: options.clientKey,
        reservation: options.reservation,
      },
      { waitMs: options.waitMs },
    ),
});
