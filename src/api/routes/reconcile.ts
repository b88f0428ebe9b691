/** POST /v1/reconcile: reconcile with every seller of the tenant, or one agent, now (PROTOCOL.md §6). */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Reconciler } from '../../engine/reconciler.js';
import type { Store } from '../../store/index.js';
import { requireApiKey, requireRole, tenantOf } from '../auth.js';
import { ApiError } from '../errors.js';

const ReconcileInput = z.object({ agent_id: z.string().min(1).max(100).optional() }).strict();

export function reconcileRoutes(app: FastifyInstance, deps: { store: Store; reconciler: Reconciler }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const asOperator = [requireApiKey(deps.store), requireRole('operator')];

  r.post(
    '/v1/reconcile',
    {
      // No body at all (Fastify hands the validator null) means "every seller", like {}.
      schema: { body: ReconcileInput.nullish(), tags: ['reconcile'], summary: 'Reconcile with sellers now; returns one report per agent' },
      preHandler: asOperator,
    },
    async (req) => {
      const tenant = tenantOf(req);
      const agentId = req.body?.agent_id;
      if (agentId === undefined) return { reports: await deps.reconciler.reconcileAll(tenant.id) };
      // Another tenant's agent is as absent as one that never existed.
      const agent = await deps.store.agents.getForTenant(tenant.id, agentId);
      if (!agent) throw new ApiError(404, 'agent_not_found', `agent ${agentId} not found`);
      return { reports: [await deps.reconciler.reconcileAgent(agent)] };
    },
  );
}
