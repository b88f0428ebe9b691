/** get_plan: what a governance agent last accepted of a plan (GET /v1/plans/:plan_id). */
import { z } from 'zod';
import { EngineError } from '../../engine/errors.js';
import type { PlanView } from '../../engine/governance/plan-book.js';
import { readTool } from '../tool.js';
import { PlanOutput } from './schemas.js';

export const getPlan = readTool({
  name: 'get_plan',
  title: 'Get a plan',
  description:
    'What the governance agent last accepted of a plan: status (active: governed buys may be checked against it; error: see last_sync.errors; syncing: a sync_plan is still in flight), version and the plan as accepted.',
  role: 'viewer',
  input: z.object({ plan_id: z.string().min(1).max(255), agent_id: z.string().min(1).max(100).optional() }).strict(),
  output: PlanOutput,
  async run(ctx, args) {
    const plans = ctx.services.governance?.plans;
    if (!plans) throw new EngineError('governance_not_supported', 'this server runs no governance flow', 501);
    return plans.show(ctx.auth.tenantId, args.plan_id, args.agent_id);
  },
  summary(json) {
    const p = json as PlanView;
    const errors = p.last_sync?.errors.length ? ` The last sync reported errors: ${JSON.stringify(p.last_sync.errors).slice(0, 500)}.` : '';
    return `Plan ${p.plan_id} at agent ${p.agent_id} is ${p.status}${p.version !== null ? `, version ${p.version}` : ''}.${p.syncing_operation ? ` A sync is in flight: operation ${p.syncing_operation}.` : ''}${errors}`;
  },
});
