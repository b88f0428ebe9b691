/** Shared by the page routes: the signed-in context, fragment-or-page answers, and notices. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DashboardReads } from '../store/dashboard-reads.js';
import type { UiDeps } from './deps.js';
import type { SafeHtml } from './html.js';
import { html } from './html.js';
import { inboxCount, layout, type PageContext, type Section } from './views/layout.js';

export function sectionsFor(deps: UiDeps): Section[] {
  return ['operations', 'inbox', ...(deps.mediaBuys ? (['media-buys'] as const) : []), 'campaigns', 'agents', ...(deps.wakeSubscriptions ? (['subscriptions'] as const) : [])];
}

export async function pageContext(req: FastifyRequest, deps: UiDeps, reads: DashboardReads): Promise<PageContext> {
  const auth = req.auth!;
  return { auth, csrf: req.uiSession!.csrf, waiting: await reads.countWaiting(auth.tenantId), sections: sectionsFor(deps) };
}

/** A live refresh (htmx) gets only the region it asked for; a navigation gets the whole page. */
export function isFragmentRequest(req: FastifyRequest): boolean {
  return req.headers['hx-request'] === 'true' && req.headers['hx-history-restore-request'] !== 'true';
}

export function sendHtml(reply: FastifyReply, body: string | SafeHtml, status = 200): FastifyReply {
  return reply.code(status).header('vary', 'HX-Request').type('text/html; charset=utf-8').send(typeof body === 'string' ? body : body.value);
}

/** A live refresh's region, with the inbox count beside it (swapped into the top bar out of band). */
export async function sendFragment(req: FastifyRequest, reply: FastifyReply, reads: DashboardReads, region: SafeHtml): Promise<FastifyReply> {
  const waiting = await reads.countWaiting(req.auth!.tenantId);
  return sendHtml(reply, html`${region}${inboxCount(waiting, true)}`);
}

export async function sendPage(
  req: FastifyRequest,
  reply: FastifyReply,
  deps: UiDeps,
  reads: DashboardReads,
  opts: { title: string; section: Section; live?: string; body: SafeHtml },
): Promise<FastifyReply> {
  return sendHtml(reply, layout(await pageContext(req, deps, reads), opts));
}

/** The stream URL for a page rendered now: it resumes right after what the page shows. */
export async function liveUrl(req: FastifyRequest, deps: UiDeps, only: { operation?: string; campaign?: string; buy?: string; buys?: true } = {}): Promise<string> {
  const after = await deps.live.position(req.auth!.tenantId);
  const filter = only.operation
    ? `&operation=${encodeURIComponent(only.operation)}`
    : only.campaign
      ? `&campaign=${encodeURIComponent(only.campaign)}`
      : only.buy
        ? `&buy=${encodeURIComponent(only.buy)}`
        : only.buys
          ? '&buys=1'
          : '';
  return `/live?after=${after}${filter}`;
}

/** Fixed texts a redirect may ask a page to show (?notice=…); nothing from the URL reaches the page as text. */
const NOTICES: Record<string, string> = {
  canceled: 'The operation was canceled. The timeline records who canceled it and why.',
  cancel_sent: 'The cancellation was sent to the seller as an operation of its own (see Related operations).',
  answered: 'Your answer was taken. The timeline records it with your name.',
  redelivered: 'The delivery was queued to be sent again.',
};

export function noticeFrom(req: FastifyRequest): string | undefined {
  const key = (req.query as { notice?: string } | undefined)?.notice;
  return key ? NOTICES[key] : undefined;
}
