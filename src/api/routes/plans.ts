/**
 * Planning (AdCP spec, governance): POST /v1/plans runs `sync_plans` at a governance
 * agent as a durable operation; GET /v1/plans/:plan_id shows what the agent
 * last accepted (version, status), read from those operations.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { PlanBook } from '../../engine/governance/plan-book.js';
import { syncPlans } from '../../engine/governance/plan-sync.js';
import type { OperationService } from '../../engine/operation-service.js';
import type { Store } from '../../store/index.js';
import { actorOf, requireApiKey, requireRole, tenantOf } from '../auth.js';
import { idempotent } from '../idempotency.js';
import { presentOperation } from '../present.js';

// Each plan goes to the agent as given (its own schema is the agent's to enforce, per plan);
// only what we need to follow it is required here.
const PlanItem = z.object({ plan_id: z.string().min(1).max(255) }).passthrough();

/** 1-100 plans, each plan_id once (the API's body and the MCP tool sync_plan's `plans`). */
export const PlanList = z
  .array(PlanItem)
  .min(1)
  .max(100)
  .refine((plans) => new Set(plans.map((p) => p.plan_id)).size === plans.length, { message: 'each plan_id may appear once' });

const SyncInput = z
  .object({
    agent_id: z.string().min(1).max(100),
    plans: PlanList,
  })
  .strict();

const PlanParams = z.object({ plan_id: z.string().min(1).max(255) });
const PlanQuery = z.object({ agent_id: z.string().min(1).max(100).optional() }).strict();

export function planRoutes(app: FastifyInstance, deps: { store: Store; operations: OperationService; plans: PlanBook }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireApiKey(deps.store);

  r.post(
    '/v1/plans',
    { schema: { body: SyncInput, tags: ['governance'], summary: 'Sync plans to a governance agent (sync_plans, durably)' }, preHandler: [auth, requireRole('operator')] },
    (req, reply) => {
      const tenant = tenantOf(req);
      return idempotent(deps.store, req, reply, tenant.id, async () => {
        const clientKey = req.headers['idempotency-key'];
        const row = await syncPlans(deps, {
          tenantId: tenant.id,
          agentId: req.body.agent_id,
          plans: req.body.plans,
          actor: actorOf(req),
          ...(typeof clientKey === 'string' ? { clientKey } : {}),
        });
        return { statusCode: 202, body: presentOperation(row) };
      });
    },
  );

  r.get(
    '/v1/plans/:plan_id',
    { schema: { params: PlanParams, querystring: PlanQuery, tags: ['governance'], summary: 'What the governance agent last accepted of a plan' }, preHandler: [auth, requireRole('viewer')] },
    async (req) => deps.plans.show(tenantOf(req).id, req.params.plan_id, req.query.agent_id),
  );
}
