/** Governed campaigns (README.md, Using it): create one across sellers under a plan, list them, show one. */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { CampaignService } from '../../engine/governance/campaigns.js';
import type { Store } from '../../store/index.js';
import { actorOf, requireApiKey, requireRole, tenantOf } from '../auth.js';
import { idempotent } from '../idempotency.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { Governance } from './operations.js';

/** One buy of a campaign: a create_media_buy at a seller, governed by the campaign's plan. */
const Buy = z
  .object({
    agent_id: z.string().min(1).max(100),
    request: z.record(z.string(), z.unknown()),
    webhook: z.enum(['rfc9421', 'none']).optional(),
  })
  .strict();

export const CampaignInput = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    governance: Governance,
    buys: z.array(Buy).min(1).max(50),
  })
  .strict();

const ListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().max(500).optional(),
  })
  .strict();

const IdParams = z.object({ id: z.string().min(1).max(100) });

export function campaignRoutes(app: FastifyInstance, deps: { store: Store; campaigns: CampaignService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireApiKey(deps.store);

  r.post(
    '/v1/campaigns',
    { schema: { body: CampaignInput, tags: ['governance'], summary: 'Start a governed campaign: buys across sellers under one plan' }, preHandler: [auth, requireRole('operator')] },
    (req, reply) => {
      const tenant = tenantOf(req);
      const clientKey = req.headers['idempotency-key'];
      return idempotent(deps.store, req, reply, tenant.id, async () => ({
        statusCode: 202,
        body: await deps.campaigns.create(tenant.id, req.body, actorOf(req), typeof clientKey === 'string' ? clientKey : undefined),
      }));
    },
  );

  r.get('/v1/campaigns', { schema: { querystring: ListQuery, tags: ['governance'], summary: 'List campaigns, newest first' }, preHandler: [auth, requireRole('viewer')] }, async (req) => {
    const { rows, campaigns } = await deps.campaigns.list(tenantOf(req).id, req.query.limit + 1, req.query.cursor ? decodeCursor(req.query.cursor) : undefined);
    const page = campaigns.slice(0, req.query.limit);
    const last = rows[page.length - 1];
    return { campaigns: page, next_cursor: rows.length > req.query.limit && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null };
  });

  r.get('/v1/campaigns/:id', { schema: { params: IdParams, tags: ['governance'], summary: 'A campaign: its state, budget and buys' }, preHandler: [auth, requireRole('viewer')] }, async (req) =>
    deps.campaigns.view(tenantOf(req).id, req.params.id),
  );
}
