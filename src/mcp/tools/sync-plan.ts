/** sync_plan: plans to a governance agent, as a durable sync_plans operation (POST /v1/plans). */
import { z } from 'zod';
import { PlanList } from '../../api/routes/plans.js';
import { EngineError } from '../../engine/errors.js';
import { syncPlans } from '../../engine/governance/plan-sync.js';
import { startTool } from '../tool.js';
import { OperationOutput } from './schemas.js';

export const syncPlan = startTool({
  name: 'sync_plan',
  title: 'Sync plans to a governance agent',
  description:
    'Sends campaign plans (budget, flight, channels, rules) to a governance agent with AdCP sync_plans, as a durable operation. A governed buy is only accepted against a plan the agent accepted: check with get_plan. Supports MCP tasks: the task id is the operation id.',
  role: 'operator',
  input: z
    .object({
      agent_id: z.string().min(1).max(100).describe('A governance agent’s id (list_agents)'),
      plans: PlanList.describe('The plans, each with its plan_id and the fields the governance agent’s schema asks for'),
    })
    .strict(),
  output: OperationOutput,
  start(ctx, args, options) {
    if (!ctx.services.governance) throw new EngineError('governance_not_supported', 'this server runs no governance flow', 501);
    return syncPlans(
      ctx.services,
      { tenantId: ctx.auth.tenantId, agentId: args.agent_id, plans: args.plans, actor: ctx.auth.keyName, clientKey: options.clientKey, reservation: options.reservation },
      options.waitMs,
    );
  },
});
