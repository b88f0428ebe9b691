/** Operations: create (any task, or the media-buy shorthand), list, show. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OPERATION_STATUSES } from '../../domain/status.js';
import { REPORTING_AUTH, REPORTING_FREQUENCIES } from '../../domain/reporting-webhook.js';
import type { ReportingAsked } from '../../engine/media-buys/reporting-choice.js';
import type { OperationService } from '../../engine/operation-service.js';
import type { SpendApproval } from '../../engine/spend-approval.js';
import type { GovernanceGuard } from '../../engine/governance/governed-ops.js';
import type { Store } from '../../store/index.js';
import { actorOf, requireApiKey, requireRole, tenantOf } from '../auth.js';
import { ApiError } from '../errors.js';
import { idempotent } from '../idempotency.js';
import { presentOperation } from '../present.js';
import { decodeCursor, encodeCursor } from '../cursor.js';

const WebhookMode = z.enum(['rfc9421', 'hmac', 'bearer', 'none']);
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

const OperationInput = z
  .object({
    ...StartFields,
    task: z.string().regex(/^[a-z][a-z0-9_/]{1,63}$/, 'must be an AdCP task name such as create_media_buy'),
    params: z.record(z.string(), z.unknown()),
  })
  .strict();

const MediaBuyInput = z
  .object({
    ...StartFields,
    request: z.record(z.string(), z.unknown()),
    /** `required`: hold the buy for a person's approval before anything is sent (docs/ARCHITECTURE.md, People in the loop). */
    approval: z.enum(['required']).optional(),
    /** Our reporting webhook (README, Media buys): its frequency, and how its fires authenticate. */
    reporting: z
      .object({ frequency: z.enum(REPORTING_FREQUENCIES).optional(), authentication: z.enum(REPORTING_AUTH).optional() })
      .strict()
      .optional(),
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

export function operationRoutes(app: FastifyInstance, deps: { store: Store; operations: OperationService; spendApproval?: SpendApproval; governanceGuard?: GovernanceGuard }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireApiKey(deps.store);
  const asViewer = [auth, requireRole('viewer')];
  const asOperator = [auth, requireRole('operator')];

  /** Both POST routes: refuse what is not supported, then create and start under the client's Idempotency-Key. */
  const start = (
    req: FastifyRequest,
    reply: FastifyReply,
    body: { agent_id: string; webhook?: z.infer<typeof WebhookMode>; governance?: z.infer<typeof Governance>; approval?: 'required'; reporting?: ReportingAsked },
    task: string,
    requested: Record<string, unknown>,
  ) => {
    const tenant = tenantOf(req);
    // The key is reserved in the commit that stores the operation (reserveInWork): one commit less before the call.
    return idempotent(deps.store, req, reply, tenant.id, async (reservation) => {
      let params = requested;
      let governance;
      if (body.governance) {
        // Accepting the field without the check would spend without the check the caller asked for.
        if (!deps.governanceGuard) throw new ApiError(501, 'governance_not_supported', 'this server runs no governance flow');
        const prepared = await deps.governanceGuard.prepare(tenant.id, body.agent_id, task, requested, body.governance, body.webhook);
        params = prepared.params;
        governance = prepared.governance;
      }
      const hold = await deps.spendApproval?.holdFor(tenant.id, task, params, body.approval);
      const row = await deps.operations.createAndStart({
        tenantId: tenant.id,
        agentId: body.agent_id,
        task,
        params,
        webhook: body.webhook,
        clientKey: clientKeyOf(req.headers['idempotency-key']),
        actor: actorOf(req),
        ...(hold ? { hold } : {}),
        ...(governance ? { governance } : {}),
        ...(reservation ? { reservation } : {}),
        ...(body.reporting ? { reportingAsked: body.reporting } : {}),
      });
      return { statusCode: 202, body: presentOperation(row) };
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
    const rows = await deps.store.operations.list(
      tenantOf(req).id,
      {
        status: q.status,
        type: q.type,
        agentId: q.agent_id,
        needsInput: q.needs_input === undefined ? undefined : q.needs_input === 'true',
        stalled: q.stalled === undefined ? undefined : q.stalled === 'true',
      },
      q.limit + 1,
      q.cursor ? decodeCursor(q.cursor) : undefined,
    );
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    return {
      operations: page.map((o) => presentOperation(o)),
      next_cursor: rows.length > q.limit && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
    };
  });

  r.get('/v1/operations/:id', { schema: { params: IdParams, tags: ['operations'], summary: 'Show an operation with its events' }, preHandler: asViewer }, async (req) => {
    const row = await deps.store.operations.getForTenant(tenantOf(req).id, req.params.id);
    if (!row) throw new ApiError(404, 'operation_not_found', `operation ${req.params.id} not found`);
    return presentOperation(row, await deps.store.operations.events(row.id));
  });
}
