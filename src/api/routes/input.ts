/** POST /v1/operations/:id/input: a person answers what an operation waits for (docs/ARCHITECTURE.md, People in the loop). */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DECISIONS } from '../../domain/input-request.js';
import type { AnswerService } from '../../engine/answer-service.js';
import type { Store } from '../../store/index.js';
import { actorOf, requireApiKey, requireRole, tenantOf } from '../auth.js';
import { idempotent } from '../idempotency.js';
import { presentOperation } from '../present.js';

export const AnswerInput = z
  .object({
    decision: z.enum(DECISIONS),
    message: z.string().trim().min(1).max(2000).optional(),
    params: z.record(z.string(), z.unknown()).optional(),
    /** The question answered (`input_request.id`): an answer to a question since replaced is 409 question_superseded. */
    question_id: z.string().trim().min(1).max(200).optional(),
  })
  .strict();

const IdParams = z.object({ id: z.string().min(1).max(100) });

export function inputRoutes(app: FastifyInstance, deps: { store: Store; answers: AnswerService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/v1/operations/:id/input',
    {
      schema: {
        params: IdParams,
        body: AnswerInput,
        tags: ['operations'],
        summary: 'Answer what an operation waits for: approve, reject or respond (with corrected params)',
      },
      preHandler: [requireApiKey(deps.store), requireRole('approver')],
    },
    (req, reply) => {
      const tenant = tenantOf(req);
      return idempotent(deps.store, req, reply, tenant.id, async () => {
        const row = await deps.answers.answer(tenant.id, req.params.id, req.body, actorOf(req));
        return { statusCode: 202, body: presentOperation(row) };
      });
    },
  );
}
