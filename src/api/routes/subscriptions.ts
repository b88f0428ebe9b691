/**
 * Outbound subscriptions (README.md, Subscriptions; docs/ARCHITECTURE.md, Telling users): create, list, show, delete, and
 * each one's deliveries with their attempts; redeliver one. Creating, deleting
 * and redelivering need the admin role, reading needs viewer.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { NOTIFICATION_TYPES } from '../../domain/notification-types.js';
import { checkTarget, displayUrl, TargetRefused } from '../../notify/subscription-target.js';
import { newSubscriptionSecret } from '../../notify/webhook-signer.js';
import type { Store } from '../../store/index.js';
import type { SecretBox } from '../../store/secret-box.js';
import { actorOf, requireApiKey, requireRole, tenantOf } from '../auth.js';
import { ApiError } from '../errors.js';
import { idempotent } from '../idempotency.js';
import { presentDelivery, presentSubscription } from '../present-subscriptions.js';

/** A subscription may ask for any notification type (docs/ARCHITECTURE.md, Telling users). */
const SUBSCRIBABLE_TYPES = NOTIFICATION_TYPES;

const SubscriptionInput = z
  .object({
    url: z.string().min(1).max(2048),
    events: z
      .array(z.enum(SUBSCRIBABLE_TYPES, { message: `must be one of ${SUBSCRIBABLE_TYPES.join(', ')}` }))
      .min(1, 'give at least one type, or leave events out for all of them')
      .max(SUBSCRIBABLE_TYPES.length)
      .optional(),
    format: z.enum(['standard', 'slack']).default('standard'),
  })
  .strict();

const IdParams = z.object({ id: z.string().min(1).max(100) });
const DeliveryParams = z.object({ id: z.string().min(1).max(100), delivery_id: z.string().min(1).max(100) });
const DeliveriesQuery = z
  .object({
    status: z.enum(['pending', 'delivered', 'failed']).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().regex(/^\d{1,16}$/, 'cursor is not one this API returned').optional(),
  })
  .strict();

export interface SubscriptionRouteDeps {
  store: Store;
  secrets: SecretBox;
  allowPrivateNetwork: boolean;
  /** Wakes the dispatcher (a redelivery is due now). */
  wake(): void;
}

/** The URL as a target: http(s), no credentials in it, and (unless allowed) nothing that resolves into a private network. */
async function targetOf(raw: string, allowPrivateNetwork: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError(400, 'invalid_url', 'url must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ApiError(400, 'invalid_url', 'url must be an http(s) URL');
  if (url.username || url.password) throw new ApiError(400, 'invalid_url', 'url must not carry a user name or password');
  if (url.hash) throw new ApiError(400, 'invalid_url', 'url must not have a #fragment');
  try {
    await checkTarget(url, allowPrivateNetwork);
  } catch (err) {
    if (err instanceof TargetRefused) throw new ApiError(400, err.code, err.message);
    throw err;
  }
  return url;
}

export function subscriptionRoutes(deps: SubscriptionRouteDeps) {
  return (app: FastifyInstance): void => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = requireApiKey(deps.store);
    const asAdmin = [auth, requireRole('admin')];
    const asViewer = [auth, requireRole('viewer')];
    const tags = ['subscriptions'];

    r.post(
      '/v1/subscriptions',
      { schema: { body: SubscriptionInput, tags, summary: 'Subscribe a URL to notifications (the secret is shown once)' }, preHandler: asAdmin },
      async (req, reply) => {
        const tenant = tenantOf(req);
        // The stored replay of this answer holds the secret: sealed, like every stored secret.
        return idempotent(
          deps.store,
          req,
          reply,
          tenant.id,
          async () => {
            const url = await targetOf(req.body.url, deps.allowPrivateNetwork);
            const secret = newSubscriptionSecret();
            const row = await deps.store.subscriptions.create({
              tenantId: tenant.id,
              urlSealed: deps.secrets.seal(url.href),
              urlDisplay: displayUrl(url, req.body.format),
              events: req.body.events ? [...new Set(req.body.events)] : null,
              format: req.body.format,
              secretSealed: deps.secrets.seal(secret),
              createdBy: actorOf(req),
            });
            req.log.info({ subscription_id: row.id, target: url.origin, actor: row.created_by }, 'subscription created');
            return { statusCode: 201, body: { ...presentSubscription(row), url: url.href, secret } };
          },
          deps.secrets,
        );
      },
    );

    r.get('/v1/subscriptions', { schema: { tags, summary: 'List subscriptions (never their secrets)' }, preHandler: asViewer }, async (req) => {
      const rows = await deps.store.subscriptions.list(tenantOf(req).id);
      return { subscriptions: rows.map(presentSubscription) };
    });

    const load = async (req: FastifyRequest, id: string) => {
      const row = await deps.store.subscriptions.get(tenantOf(req).id, id);
      if (!row) throw new ApiError(404, 'subscription_not_found', `subscription ${id} not found`);
      return row;
    };

    r.get('/v1/subscriptions/:id', { schema: { params: IdParams, tags, summary: 'Show a subscription' }, preHandler: asViewer }, async (req) =>
      presentSubscription(await load(req, req.params.id)),
    );

    r.delete('/v1/subscriptions/:id', { schema: { params: IdParams, tags, summary: 'Delete a subscription (pending deliveries end failed)' }, preHandler: asAdmin }, async (req, reply) => {
      const deleted = await deps.store.subscriptions.delete(tenantOf(req).id, req.params.id, actorOf(req));
      if (!deleted) throw new ApiError(404, 'subscription_not_found', `subscription ${req.params.id} not found`);
      req.log.info({ subscription_id: req.params.id, actor: actorOf(req) }, 'subscription deleted');
      return reply.code(204).send();
    });

    r.get(
      '/v1/subscriptions/:id/deliveries',
      { schema: { params: IdParams, querystring: DeliveriesQuery, tags, summary: 'Deliveries, newest first, each with its attempts' }, preHandler: asViewer },
      async (req) => {
        const sub = await load(req, req.params.id);
        const q = req.query;
        const rows = await deps.store.subscriptionDeliveries.list(sub.tenant_id, sub.id, {
          status: q.status,
          limit: q.limit + 1,
          beforeSeq: q.cursor === undefined ? undefined : Number(q.cursor),
        });
        const page = rows.slice(0, q.limit);
        const attempts = await deps.store.subscriptionDeliveries.attempts(page.map((d) => d.id));
        const last = page[page.length - 1];
        return {
          deliveries: page.map((d) => presentDelivery(d, attempts.get(d.id) ?? [])),
          next_cursor: rows.length > q.limit && last ? String(last.notification_seq) : null,
        };
      },
    );

    r.post(
      '/v1/subscriptions/:id/deliveries/:delivery_id/redeliver',
      { schema: { params: DeliveryParams, tags, summary: 'Send a failed delivery again (or a pending one now)' }, preHandler: asAdmin },
      async (req, reply) => {
        const tenant = tenantOf(req);
        const { id, delivery_id } = req.params;
        const result = await deps.store.subscriptionDeliveries.redeliver(tenant.id, id, delivery_id, actorOf(req));
        switch (result.kind) {
          case 'not_found':
            throw new ApiError(404, 'delivery_not_found', `delivery ${delivery_id} of subscription ${id} not found`);
          case 'subscription_disabled':
            throw new ApiError(409, 'subscription_disabled', 'the subscription is disabled; nothing is sent to it');
          case 'already_delivered':
            throw new ApiError(409, 'already_delivered', 'this delivery succeeded; sent again under the same webhook-id, receivers would drop it as a duplicate');
        }
        deps.wake();
        req.log.info({ subscription_id: id, delivery_id, actor: actorOf(req) }, 'redelivery requested');
        const attempts = await deps.store.subscriptionDeliveries.attempts([delivery_id]);
        return reply.code(202).send(presentDelivery(result.delivery, attempts.get(delivery_id) ?? []));
      },
    );
  };
}
