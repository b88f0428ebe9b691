/**
 * GET /media-buys (the tenant's live buys, a live list with filters and keyset pages)
 * and GET /media-buys/:id (one buy: header, chart, packages, creatives, reports, events, and an
 * operator's actions; a stable deep link: media_buy.* notifications point here).
 * Both only read. Registered when the app has live media buys (deps.mediaBuys).
 */
import type { FastifyInstance } from 'fastify';
import { isMediaBuyStatus } from '../../domain/media-buy-status.js';
import { PACING_STATES, type PacingState } from '../../domain/pacing.js';
import { roleAtLeast } from '../../domain/roles.js';
import { decodeCursor, encodeCursor, type PageCursor } from '../../engine/page-cursor.js';
import { BuyPageReads } from '../../store/buy-page-reads.js';
import { DashboardReads } from '../../store/dashboard-reads.js';
import type { MediaBuyService } from '../../engine/media-buys/buy-service.js';
import type { UiDeps } from '../deps.js';
import { isFragmentRequest, liveUrl, sendFragment, sendHtml, sendPage } from '../page.js';
import { requireSession } from '../session.js';
import { buyPage, buyRegion } from '../views/media-buy/page.js';
import type { MediaBuyView } from '../views/media-buy/view.js';
import { mediaBuysPage, mediaBuysRegion, type BuyListFilters, type MediaBuysListView } from '../views/media-buys-list.js';
import { messagePage } from '../views/message.js';
import { buyActionRoutes, buyNoticeFrom } from './media-buy-actions.js';

export const BUYS_PAGE_SIZE = 50;
/** Events shown on a buy's page, of the buy and of its operation each (newest). */
export const EVENTS_SHOWN = 100;
const REQUESTS_SHOWN = 20;

const text = (v: unknown, max: number) => (typeof v === 'string' && v.trim() !== '' && v.length <= max ? v.trim() : undefined);
const isPacing = (v: string): v is PacingState => (PACING_STATES as readonly string[]).includes(v);

/** Filters from the query string; values that cannot be right are dropped, and the page says so. */
export function buyFiltersFrom(query: Record<string, unknown>): { filters: BuyListFilters; cursor?: PageCursor; cursorText?: string; dropped: string[] } {
  const dropped: string[] = [];
  const status = text(query.status, 40);
  if (status && !isMediaBuyStatus(status)) dropped.push(`status "${status}"`);
  const pacing = text(query.pacing, 40);
  if (pacing && !isPacing(pacing)) dropped.push(`pacing "${pacing}"`);
  const filters: BuyListFilters = {
    status: status && isMediaBuyStatus(status) ? status : undefined,
    agent: text(query.agent, 100),
    campaign: text(query.campaign, 100),
    pacing: pacing && isPacing(pacing) ? pacing : undefined,
  };
  const cursorText = text(query.cursor, 500);
  let cursor: PageCursor | undefined;
  if (cursorText) {
    try {
      cursor = decodeCursor(cursorText);
    } catch {
      dropped.push('a page link that is not one of ours');
    }
  }
  return { filters, cursor, cursorText: cursor ? cursorText : undefined, dropped };
}

export function mediaBuysPages(app: FastifyInstance, deps: UiDeps & { mediaBuys: MediaBuyService }): void {
  const reads = new DashboardReads(deps.store.db);
  const pageReads = new BuyPageReads(deps.store.db);
  const session = requireSession(deps.store, () => deps.clock.now());

  app.get('/media-buys', { preHandler: session }, async (req, reply) => {
    const auth = req.auth!;
    const { filters, cursor, cursorText, dropped } = buyFiltersFrom((req.query ?? {}) as Record<string, unknown>);
    // Taken before the rows are read, so a change in between reaches the page live.
    const live = isFragmentRequest(req) ? '' : await liveUrl(req, deps, { buys: true });
    const found = await deps.mediaBuys.list(auth.tenantId, { status: filters.status, agentId: filters.agent, campaignId: filters.campaign, pacing: filters.pacing }, BUYS_PAGE_SIZE + 1, cursor);
    const rows = found.slice(0, BUYS_PAGE_SIZE);
    const last = rows[rows.length - 1];
    const campaignIds = rows.flatMap((b) => (b.campaign_id ? [b.campaign_id] : []));
    const fragment = isFragmentRequest(req);
    const [agents, campaigns, recentCampaigns] = await Promise.all([
      deps.store.agents.list(auth.tenantId),
      pageReads.campaignsByIds(auth.tenantId, campaignIds),
      // The filter form is not refreshed live: a fragment needs no campaign choices.
      fragment ? Promise.resolve([]) : deps.store.campaigns.list(auth.tenantId, 50),
    ]);
    const view: MediaBuysListView = {
      filters,
      rows,
      agents,
      campaigns,
      recentCampaigns,
      cursor: cursorText,
      nextCursor: found.length > BUYS_PAGE_SIZE && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : undefined,
      now: deps.clock.now(),
      notice: dropped.length ? `Ignored ${dropped.join(' and ')}.` : undefined,
    };
    if (fragment) return sendFragment(req, reply, reads, mediaBuysRegion(view));
    return sendPage(req, reply, deps, reads, { title: 'Media buys', section: 'media-buys', live, body: mediaBuysPage(view) });
  });

  app.get('/media-buys/:id', { preHandler: session }, async (req, reply) => {
    const auth = req.auth!;
    const { id } = req.params as { id: string };
    const live = isFragmentRequest(req) ? '' : await liveUrl(req, deps, { buy: id });
    const buy = id.length <= 100 ? await deps.store.mediaBuys.getForTenant(auth.tenantId, id) : undefined;
    if (!buy) {
      const page = messagePage({ title: 'Media buy not found', message: `There is no media buy ${id} in tenant ${auth.tenantName}.`, link: { href: '/media-buys', text: 'All media buys' } });
      return sendHtml(reply, page, 404);
    }
    const [reports, buyEvents, opEvents, operation, requests, agent, campaign, creatives] = await Promise.all([
      deps.store.reports.forBuy(buy.id),
      pageReads.recentBuyEvents(buy.id, EVENTS_SHOWN),
      pageReads.recentOperationEvents(buy.operation_id, EVENTS_SHOWN),
      deps.store.operations.getForTenant(auth.tenantId, buy.operation_id),
      pageReads.recentChildren(buy.operation_id, REQUESTS_SHOWN),
      deps.store.agents.getForTenant(auth.tenantId, buy.agent_id),
      buy.campaign_id ? deps.store.campaigns.getForTenant(auth.tenantId, buy.campaign_id) : Promise.resolve(undefined),
      deps.store.creatives.forBuy(buy.id),
    ]);
    const view: MediaBuyView = {
      buy,
      reports,
      buyEvents: buyEvents.rows,
      operation,
      operationEvents: opEvents.rows,
      eventsLeftOut: buyEvents.total - buyEvents.rows.length + (opEvents.total - opEvents.rows.length),
      requests,
      creatives,
      agent,
      campaign,
      now: deps.clock.now(),
      csrf: req.uiSession!.csrf,
      canAct: roleAtLeast(auth.role, 'operator'),
      notice: buyNoticeFrom(req),
    };
    if (isFragmentRequest(req)) return sendFragment(req, reply, reads, buyRegion(view));
    return sendPage(req, reply, deps, reads, { title: `Media buy ${buy.media_buy_id}`, section: 'media-buys', live, body: buyPage(view) });
  });

  buyActionRoutes(app, deps);
}
