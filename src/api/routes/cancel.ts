/** POST /v1/operations/:id/cancel: stop an operation, and cancel at the seller where AdCP allows. */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { CancelService } from '../../engine/cancel-operation.js';
import type { Store } from '../../store/index.js';
import { actorOf, requireApiKey, requireRole, tenantOf } from '../auth.js';
import { idempotent } from '../idempotency.js';
import { presentCancel } from '../present.js';

/** Why, in a person's words (the API's body and the MCP tool cancel_operation). */
export const CancelReason = z.string().trim().min(1, 'must not be empty').max(1000);

const CancelBody = z
  .object({ reason: CancelReason.optional() })
  .strict()
  .default({});

export function cancelRoutes(app: FastifyInstance, deps: { store: Store; cancel: CancelService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/v1/operations/:id/cancel',
    {
      schema: {
        params: z.object({ id: z.string().min(1).max(100) }),
        body: CancelBody,
        tags: ['operations'],
        summary: 'Cancel an operation (at the seller too, where AdCP allows: a created media buy)',
      },
      preHandler: [requireApiKey(deps.store), requireRole('operator')],
    },
    (req, reply) => {
      const tenant = tenantOf(req);
      return idempotent(deps.store, req, reply, tenant.id, async () => {
        const outcome = await deps.cancel.cancel({ tenantId: tenant.id, operationId: req.params.id, actor: actorOf(req), reason: req.body?.reason });
        return { statusCode: 202, body: presentCancel(outcome) };
      });
    },
  );
}
