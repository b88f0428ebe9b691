/** POST /v1/reconcile: reconcile with every seller of the tenant, or one agent, now (AdCP spec, polling, timeouts, retries, reconciliation). */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Reconciler } from '../../engine/reconciler.js';
import type { Store } from '../../store/index.js';
import { requireApiKey, requireRole, tenantOf } from '../auth.js';
import { ApiError } from '../errors.js';

const ReconcileInput = z.object({ agent_id: z.string().min(1).max(100).optional() }).strict();

const ReconcileReport = z
  .object({
    agent_id: z.string(),
    orphaned_on_server: z.array(z.string()).describe('seller task ids we had no operation for, now adopted'),
    missing_from_server: z.array(z.string()).describe('seller task ids of our pending operations that the seller no longer lists as pending (each is polled at once)'),
    missing_from_server_operations: z.array(z.string()).describe('our operation ids of those tasks, index for index with missing_from_server'),
    total_pending_server: z.number().int(),
    total_pending_local: z.number().int(),
    started_at: z.string(),
    finished_at: z.string(),
    deferred_orphans: z
      .array(z.string())
      .describe('seller task ids left alone for now because one of our sends to this agent is unresolved (its reply may bind them); the agent is reconciled again as soon as those sends resolve'),
  })
  .describe('one agent reconciled');

const ReconcileFailure = z
  .object({
    agent_id: z.string(),
    error: z.object({ code: z.string(), message: z.string() }),
    started_at: z.string(),
    finished_at: z.string(),
  })
  .describe('one agent that could not be reconciled (seller unreachable, bad listing)');

const ReconcileResponse = z.object({ reports: z.array(z.union([ReconcileReport, ReconcileFailure])) });

export function reconcileRoutes(app: FastifyInstance, deps: { store: Store; reconciler: Reconciler }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const asOperator = [requireApiKey(deps.store), requireRole('operator')];

  r.post(
    '/v1/reconcile',
    {
      // No body at all (Fastify hands the validator null) means "every seller", like {}.
      schema: {
        body: ReconcileInput.nullish(),
        response: { 200: ReconcileResponse },
        tags: ['reconcile'],
        summary: 'Reconcile with sellers now; returns one report per agent',
      },
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
