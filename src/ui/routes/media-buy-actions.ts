/**
 * POST /media-buys/:id/pause, /resume, /refresh and /cancel: an operator's actions
 * on a live buy. Pause, resume and refresh go through the MediaBuyService, as
 * POST /v1/media-buys/:id/pause|resume|refresh do; cancel through the CancelService
 * on the buy's create_media_buy, as POST /v1/operations/:id/cancel does (it sends
 * update_media_buy canceled: true). Each is recorded with the key's name. A refusal
 * (the buy ended, is already paused…) is a page that says why, and changes nothing.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isTerminalBuyStatus } from '../../domain/media-buy-status.js';
import type { MediaBuyService } from '../../engine/media-buys/buy-service.js';
import { EngineError } from '../../engine/errors.js';
import type { UiDeps } from '../deps.js';
import { sendHtml } from '../page.js';
import { requireCsrf, requireSession, requireUiRole } from '../session.js';
import { messagePage } from '../views/message.js';

/** Fixed texts a redirect may ask the buy's page to show (?notice=…); nothing from the URL reaches the page as text. */
const NOTICES: Record<string, string> = {
  pause_sent: 'The pause was sent to the seller as an operation of its own (see Operations on this buy). The status changes when the seller confirms it.',
  resume_sent: 'The resume was sent to the seller as an operation of its own (see Operations on this buy). The status changes when the seller confirms it.',
  refresh_sent: "The buy's status and delivery were asked of the seller now; the page updates when they answer.",
  cancel_sent: 'The cancellation was sent to the seller as an operation of its own (see Operations on this buy).',
};

export function buyNoticeFrom(req: FastifyRequest): string | undefined {
  const key = (req.query as { notice?: string } | undefined)?.notice;
  return key ? NOTICES[key] : undefined;
}

type Action = 'pause' | 'resume' | 'refresh' | 'cancel';
const TITLES: Record<Action, string> = { pause: 'Not paused', resume: 'Not resumed', refresh: 'Not refreshed', cancel: 'Not canceled' };

export function buyActionRoutes(app: FastifyInstance, deps: UiDeps & { mediaBuys: MediaBuyService }): void {
  const guard = [requireSession(deps.store, () => deps.clock.now()), requireCsrf(), requireUiRole('operator')];

  const handle = (action: Action, run: (req: FastifyRequest, id: string) => Promise<unknown>) =>
    app.post(`/media-buys/:id/${action}`, { preHandler: guard }, async (req, reply) => {
      const { id } = req.params as { id: string };
      const back = `/media-buys/${encodeURIComponent(id)}`;
      try {
        await run(req, id);
        return reply.code(303).header('location', `${back}?notice=${action}_sent`).send();
      } catch (err) {
        if (!(err instanceof EngineError)) throw err;
        return sendHtml(reply, messagePage({ title: TITLES[action], message: err.message, link: { href: back, text: 'Back to the media buy' } }), err.httpStatus);
      }
    });

  const request = (req: FastifyRequest, buyId: string) => ({ tenantId: req.auth!.tenantId, buyId, actor: req.auth!.keyName });
  handle('pause', (req, id) => deps.mediaBuys.pause(request(req, id)));
  handle('resume', (req, id) => deps.mediaBuys.resume(request(req, id)));
  handle('refresh', (req, id) => deps.mediaBuys.refresh(request(req, id)));
  handle('cancel', async (req, id) => {
    const auth = req.auth!;
    const buy = await deps.mediaBuys.get(auth.tenantId, id);
    if (isTerminalBuyStatus(buy.status)) throw new EngineError('media_buy_ended', `media buy ${buy.id} is ${buy.status}: it can no longer be canceled`, 409, { status: buy.status });
    const form = (req.body ?? {}) as Record<string, unknown>;
    const reason = typeof form.reason === 'string' && form.reason.trim() !== '' ? form.reason.trim().slice(0, 1000) : undefined;
    return deps.cancel.cancel({ tenantId: auth.tenantId, operationId: buy.operation_id, actor: auth.keyName, ...(reason ? { reason } : {}) });
  });
}
