/**
 * Live media buys (README, Media buys): list, show, delivery reports,
 * pause / resume / refresh at the seller, and creatives sent to it (README,
 * Creatives). `:id` is our id (`buy_…`), not the seller's `media_buy_id`; another
 * tenant's buy answers 404.
 * (`POST /v1/media-buys`, which creates the create_media_buy operation, is in operations.ts.)
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MEDIA_BUY_STATUSES } from '../../domain/media-buy-status.js';
import { PACING_STATES } from '../../domain/pacing.js';
import type { MediaBuyService } from '../../engine/media-buys/buy-service.js';
import { listMediaBuys, mediaBuyDelivery, showMediaBuy } from '../../engine/media-buys/buy-reads.js';
import type { CreativeService } from '../../engine/media-buys/creative-service.js';
import type { OperationRow, Store } from '../../store/index.js';
import { actorOf, requireApiKey, requireRole, tenantOf } from '../auth.js';
import { idempotent } from '../idempotency.js';
import { presentOperation } from '../present.js';

/** The listing's filters, shared with the MCP tool list_media_buys (which adds its own limit and cursor). */
export const MediaBuyFilters = z
  .object({
    status: z.enum(MEDIA_BUY_STATUSES).optional(),
    agent_id: z.string().max(100).optional(),
    campaign_id: z.string().max(100).optional(),
    pacing: z.enum(PACING_STATES).optional(),
  })
  .strict();

const ListQuery = MediaBuyFilters.extend({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(500).optional(),
}).strict();

/** Our id of a buy (`buy_…`), not the seller's media_buy_id; the MCP tools take the same. */
export const MediaBuyId = z.string().min(1).max(100);
const IdParams = z.object({ id: MediaBuyId });
/** The action routes take no fields; an empty body (or none) is fine. */
const NoBody = z.object({}).strict().nullish();

/**
 * `POST /v1/media-buys/:id/creatives`: creatives as AdCP defines them (the seller judges their
 * format and assets), each naming itself, and their assignments to the buy's packages. The
 * cross-checks (ids present and unique, assignments to this buy's packages) are the engine's,
 * shared with a person's corrected creatives (src/domain/creative-request.ts).
 */
export const CreativesBody = z
  .object({
    creatives: z.array(z.object({}).passthrough()).min(1).max(100).describe('Creative assets (AdCP sync_creatives `creatives`): creative_id, name, format_id, assets…'),
    assignments: z
      .array(z.object({}).passthrough())
      .min(1)
      .optional()
      .describe('{creative_id, package_id, weight?, placement_ids?}: each a creative of this request and a package of this buy'),
  })
  .strict();

export function mediaBuyRoutes(app: FastifyInstance, deps: { store: Store; mediaBuys: MediaBuyService; creatives?: CreativeService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireApiKey(deps.store);
  const asViewer = [auth, requireRole('viewer')];
  const asOperator = [auth, requireRole('operator')];

  r.get('/v1/media-buys', { schema: { querystring: ListQuery, tags: ['media buys'], summary: 'List live media buys, newest first' }, preHandler: asViewer }, async (req) => {
    const q = req.query;
    return listMediaBuys(deps, tenantOf(req).id, { status: q.status, agentId: q.agent_id, campaignId: q.campaign_id, pacing: q.pacing, limit: q.limit, cursor: q.cursor });
  });

  r.get('/v1/media-buys/:id', { schema: { params: IdParams, tags: ['media buys'], summary: 'Show a media buy with its events' }, preHandler: asViewer }, async (req) => {
    return showMediaBuy(deps, tenantOf(req).id, req.params.id);
  });

  r.get(
    '/v1/media-buys/:id/delivery',
    { schema: { params: IdParams, tags: ['media buys'], summary: "A media buy's delivery reports, oldest first, and totals counting each period once" }, preHandler: asViewer },
    async (req) => mediaBuyDelivery(deps, tenantOf(req).id, req.params.id),
  );

  /** The action routes: run under the client's Idempotency-Key, answer 202 with the operation(s) started. */
  const action = (req: FastifyRequest, reply: FastifyReply, run: (clientKey: string | undefined) => Promise<OperationRow | OperationRow[]>) => {
    const tenant = tenantOf(req);
    const header = req.headers['idempotency-key'];
    return idempotent(deps.store, req, reply, tenant.id, async () => {
      const started = await run(typeof header === 'string' ? header : undefined);
      return { statusCode: 202, body: Array.isArray(started) ? { operations: started.map((o) => presentOperation(o)) } : presentOperation(started) };
    });
  };
  const request = (req: FastifyRequest, buyId: string, clientKey: string | undefined) => ({
    tenantId: tenantOf(req).id,
    buyId,
    actor: actorOf(req),
    ...(clientKey ? { clientKey } : {}),
  });

  r.post(
    '/v1/media-buys/:id/pause',
    { schema: { params: IdParams, body: NoBody, tags: ['media buys'], summary: 'Pause a media buy at the seller (update_media_buy paused: true)' }, preHandler: asOperator },
    (req, reply) => action(req, reply, (key) => deps.mediaBuys.pause(request(req, req.params.id, key))),
  );
  r.post(
    '/v1/media-buys/:id/resume',
    { schema: { params: IdParams, body: NoBody, tags: ['media buys'], summary: 'Resume a paused media buy (update_media_buy paused: false)' }, preHandler: asOperator },
    (req, reply) => action(req, reply, (key) => deps.mediaBuys.resume(request(req, req.params.id, key))),
  );
  r.post(
    '/v1/media-buys/:id/refresh',
    { schema: { params: IdParams, body: NoBody, tags: ['media buys'], summary: "Read a media buy's status and delivery from the seller now" }, preHandler: asOperator },
    (req, reply) => action(req, reply, (key) => deps.mediaBuys.refresh(request(req, req.params.id, key))),
  );

  const creatives = deps.creatives;
  if (!creatives) return;
  r.post(
    '/v1/media-buys/:id/creatives',
    {
      schema: { params: IdParams, body: CreativesBody, tags: ['media buys'], summary: "Send creatives to a media buy's seller (sync_creatives) and follow their review" },
      preHandler: asOperator,
    },
    (req, reply) => action(req, reply, (key) => creatives.sync({ ...request(req, req.params.id, key), creatives: req.body.creatives, ...(req.body.assignments ? { assignments: req.body.assignments } : {}) })),
  );
}
