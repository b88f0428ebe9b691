/** Operations: create (any task, or the media-buy shorthand), list, show. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OPERATION_STATUSES } from '../../domain/status.js';
import type { OperationStarter } from '../../engine/operation-starter.js';
import { listOperations, operationWithEvents } from '../../engine/operation-reads.js';
import { REPORTING_AUTH, REPORTING_FREQUENCIES } from '../../domain/reporting-webhook.js';
import type { ReportingAsked } from '../../engine/media-buys/reporting-choice.js';
import type { Store } from '../../store/index.js';
import { actorOf, requireApiKey, requireRole, tenantOf } from '../auth.js';
import { idempotent } from '../idempotency.js';
import { operationAnswer, presentOperation, sendBody } from '../present.js';

export const WebhookMode = z.enum(['rfc9421', 'hmac', 'bearer', 'none']);
/** AdCP spec, governance: the governance agent and plan a spend is checked against before it is sent. */
export const Governance = z
  .object({
    agent_id: z.string().min(1).max(100),
    plan_id: z.string().min(1).max(255),
    /** Apply `conditions` that state their values at once and re-check, instead of asking a person. */
    apply_conditions: z.boolean().optional(),
  })
  .strict();

/** What every way of starting an operation takes besides the task and its parameters. */
const StartFields = {
  agent_id: z.string().min(1).max(100),
  webhook: WebhookMode.optional(),
  governance: Governance.optional(),
};

/** An AdCP task name as the API and the MCP tool run_task take it. */
export const TaskName = z.string().regex(/^[a-z][a-z0-9_/]{1,63}$/, 'must be an AdCP task name such as create_media_buy');

const OperationInput = z
  .object({
    ...StartFields,
    task: TaskName,
    params: z.record(z.string(), z.unknown()),
  })
  .strict();

/** Our reporting webhook (README, Media buys): its frequency, and how its fires authenticate. The MCP tool create_media_buy takes the same. */
export const ReportingRequest = z
  .object({ frequency: z.enum(REPORTING_FREQUENCIES).optional(), authentication: z.enum(REPORTING_AUTH).optional() })
  .strict();

const MediaBuyInput = z
  .object({
    ...StartFields,
    request: z.record(z.string(), z.unknown()),
    /** `required`: hold the buy for a person's approval before anything is sent (docs/ARCHITECTURE.md, People in the loop). */
    approval: z.enum(['required']).optional(),
    reporting: ReportingRequest.optional(),
  })
  .strict();

const ListQuery = z
  .object({
    status: z.enum(OPERATION_STATUSES).optional(),
    type: z.string().max(64).optional(),
    agent_id: z.string().max(100).optional(),
    needs_input: z.enum(['true', 'false']).optional(),
    stalled: z.enum(['true', 'false']).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().max(500).optional(),
  })
  .strict();

const IdParams = z.object({ id: z.string().min(1).max(100) });

const clientKeyOf = (h: string | string[] | undefined) => (typeof h === 'string' ? h : undefined);

export function operationRoutes(app: FastifyInstance, deps: { store: Store; starter: OperationStarter }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireApiKey(deps.store);
  const asViewer = [auth, requireRole('viewer')];
  const asOperator = [auth, requireRole('operator')];

  /** Both POST routes: create and start under the client's Idempotency-Key (the checks are the starter's). */
  const start = (
    req: FastifyRequest,
    reply: FastifyReply,
    body: { agent_id: string; webhook?: z.infer<typeof WebhookMode>; governance?: z.infer<typeof Governance>; approval?: 'required'; reporting?: ReportingAsked },
    task: string,
    params: Record<string, unknown>,
  ) => {
    const tenant = tenantOf(req);
    // The key is reserved in the commit that stores the operation (reserveInWork): one commit less before the call.
    return idempotent(deps.store, req, reply, tenant.id, async (reservation) => {
      const row = await deps.starter.start({
        tenantId: tenant.id,
        agentId: body.agent_id,
        task,
        params,
        webhook: body.webhook,
        governance: body.governance,
        approval: body.approval,
        clientKey: clientKeyOf(req.headers['idempotency-key']),
        actor: actorOf(req),
        reservation,
        ...(body.reporting ? { reportingAsked: body.reporting } : {}),
      });
      return { statusCode: 202, body: operationAnswer(row) };
    }, { reserveInWork: true });
  };

  r.post('/v1/operations', { schema: { body: OperationInput, tags: ['operations'], summary: 'Run an AdCP task durably' }, preHandler: asOperator }, (req, reply) =>
    start(req, reply, req.body, req.body.task, req.body.params),
  );

  r.post('/v1/media-buys', { schema: { body: MediaBuyInput, tags: ['operations'], summary: 'Create a media buy (create_media_buy)' }, preHandler: asOperator }, (req, reply) =>
    start(req, reply, req.body, 'create_media_buy', req.body.request),
  );

  r.get('/v1/operations', { schema: { querystring: ListQuery, tags: ['operations'], summary: 'List operations, newest first' }, preHandler: asViewer }, async (req) => {
    const q = req.query;
    return listOperations(deps.store, tenantOf(req).id, {
      status: q.status,
      type: q.type,
      agentId: q.agent_id,
      needsInput: q.needs_input === undefined ? undefined : q.needs_input === 'true',
      stalled: q.stalled === undefined ? undefined : q.stalled === 'true',
      limit: q.limit,
      cursor: q.cursor,
    });
  });

  r.get('/v1/operations/:id', { schema: { params: IdParams, tags: ['operations'], summary: 'Show an operation with its events' }, preHandler: asViewer }, async (req, reply) => {
    const { row, events } = await operationWithEvents(deps.store, tenantOf(req).id, req.params.id);
    return sendBody(reply, 200, operationAnswer(row, events));
  });
}
