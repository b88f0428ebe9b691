/**
 * GET /subscriptions, GET /subscriptions/:id (its deliveries) and the redeliver
 * form. Redelivery is the same store call and the same rules as
 * POST /v1/subscriptions/:id/deliveries/:delivery_id/redeliver (admin only).
 */
import type { FastifyInstance } from 'fastify';
import { roleAtLeast } from '../../domain/roles.js';
import { DashboardReads } from '../../store/dashboard-reads.js';
import type { UiDeps } from '../deps.js';
import { noticeFrom, sendHtml, sendPage } from '../page.js';
import { requireCsrf, requireSession, requireUiRole } from '../session.js';
import { messagePage } from '../views/message.js';
import { subscriptionPage, subscriptionsPage } from '../views/subscriptions.js';

const PAGE_SIZE = 50;
const STATUSES = new Set(['pending', 'delivered', 'failed']);

const REFUSALS: Record<string, { status: number; message: string }> = {
  not_found: { status: 404, message: 'There is no such delivery of this subscription.' },
  subscription_disabled: { status: 409, message: 'The subscription is disabled; nothing is sent to it.' },
  already_delivered: { status: 409, message: 'This delivery succeeded. Sent again under the same webhook-id, receivers would drop it as a duplicate.' },
};

export function subscriptionsPages(app: FastifyInstance, deps: UiDeps): void {
  const wake = deps.wakeSubscriptions;
  if (!wake) return;
  const reads = new DashboardReads(deps.store.db);
  const session = requireSession(deps.store, () => deps.clock.now());

  app.get('/subscriptions', { preHandler: session }, async (req, reply) => {
    const rows = await deps.store.subscriptions.list(req.auth!.tenantId);
    return sendPage(req, reply, deps, reads, { title: 'Subscriptions', section: 'subscriptions', body: subscriptionsPage(rows, deps.clock.now()) });
  });

  app.get('/subscriptions/:id', { preHandler: session }, async (req, reply) => {
    const auth = req.auth!;
    const { id } = req.params as { id: string };
    const q = (req.query ?? {}) as { status?: string; cursor?: string };
    const subscription = await deps.store.subscriptions.get(auth.tenantId, id);
    if (!subscription) {
      return sendHtml(reply, messagePage({ title: 'Subscription not found', message: `There is no subscription ${id} in tenant ${auth.tenantName}.`, link: { href: '/subscriptions', text: 'All subscriptions' } }), 404);
    }
    const status = q.status && STATUSES.has(q.status) ? q.status : undefined;
    const cursor = q.cursor && /^\d{1,16}$/.test(q.cursor) ? Number(q.cursor) : undefined;
    const rows = await deps.store.subscriptionDeliveries.list(auth.tenantId, id, { status, limit: PAGE_SIZE + 1, beforeSeq: cursor });
    const deliveries = rows.slice(0, PAGE_SIZE);
    const last = deliveries[deliveries.length - 1];
    const body = subscriptionPage({
      subscription,
      deliveries,
      attempts: await deps.store.subscriptionDeliveries.attempts(deliveries.map((d) => d.id)),
      status,
      nextCursor: rows.length > PAGE_SIZE && last ? String(last.notification_seq) : undefined,
      paged: cursor !== undefined,
      now: deps.clock.now(),
      csrf: req.uiSession!.csrf,
      canRedeliver: roleAtLeast(auth.role, 'admin'),
      notice: noticeFrom(req),
    });
    return sendPage(req, reply, deps, reads, { title: `Subscription ${id.slice(0, 8)}`, section: 'subscriptions', body });
  });

  app.post('/subscriptions/:id/deliveries/:deliveryId/redeliver', { preHandler: [session, requireCsrf(), requireUiRole('admin')] }, async (req, reply) => {
    const auth = req.auth!;
    const { id, deliveryId } = req.params as { id: string; deliveryId: string };
    const result = await deps.store.subscriptionDeliveries.redeliver(auth.tenantId, id, deliveryId, auth.keyName, deps.clock.now());
    const back = `/subscriptions/${encodeURIComponent(id)}`;
    if (result.kind !== 'scheduled') {
      const refusal = REFUSALS[result.kind]!;
      return sendHtml(reply, messagePage({ title: 'Not redelivered', message: refusal.message, link: { href: back, text: 'Back to the subscription' } }), refusal.status);
    }
    wake();
    req.log.info({ subscription_id: id, delivery_id: deliveryId, actor: auth.keyName }, 'redelivery requested from the dashboard');
    return reply.code(303).header('location', `${back}?notice=redelivered`).send();
  });
}
