/**
 * GET /campaigns (a page of the tenant's campaigns, newest first) and GET /campaigns/:id
 * (one campaign and its buys). Read-only: both only read the store. A page of campaigns
 * and all their buys take two queries, however many campaigns the page holds, and
 * one more for what their live media buys delivered.
 */
import type { FastifyInstance } from 'fastify';
import { buysOf, buysOfMany } from '../../engine/governance/campaigns.js';
import { DashboardReads } from '../../store/dashboard-reads.js';
import type { UiDeps } from '../deps.js';
import { isFragmentRequest, liveUrl, sendFragment, sendHtml, sendPage } from '../page.js';
import { requireSession } from '../session.js';
import { campaignPage, campaignRegion, campaignsPage, campaignsRegion, type CampaignsListView, type CampaignView } from '../views/campaigns.js';
import { messagePage } from '../views/message.js';
import { encodeCursor } from './operations.js';

export const CAMPAIGNS_PAGE_SIZE = 50;

function decodeCursor(s: unknown): { createdAt: number; id: string } | undefined {
  if (typeof s !== 'string' || s.length > 500) return undefined;
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (typeof createdAt === 'number' && typeof id === 'string') return { createdAt, id };
  } catch {
    /* not one of ours: the first page */
  }
  return undefined;
}

export function campaignsPages(app: FastifyInstance, deps: UiDeps): void {
  const reads = new DashboardReads(deps.store.db);
  const session = requireSession(deps.store, () => deps.clock.now());
  const agentNames = async (tenantId: string) => new Map((await deps.store.agents.list(tenantId)).map((a) => [a.id, a.name]));

  app.get('/campaigns', { preHandler: session }, async (req, reply) => {
    const auth = req.auth!;
    const cursor = decodeCursor((req.query as { cursor?: unknown } | undefined)?.cursor);
    // Taken before the rows are read, so a change in between reaches the page live.
    const live = isFragmentRequest(req) ? '' : await liveUrl(req, deps);
    const found = await deps.store.campaigns.list(auth.tenantId, CAMPAIGNS_PAGE_SIZE + 1, cursor);
    const rows = found.slice(0, CAMPAIGNS_PAGE_SIZE);
    const [buys, delivered] = await Promise.all([buysOfMany(deps.store, rows), deps.store.mediaBuys.deliveredByCampaigns(rows.map((c) => c.id))]);
    const last = rows[rows.length - 1];
    const view: CampaignsListView = {
      items: rows.map((campaign) => ({ campaign, buys: buys.get(campaign.id) ?? [], delivered: delivered.get(campaign.id) })),
      agentNames: await agentNames(auth.tenantId),
      cursor: cursor ? encodeCursor(cursor) : undefined,
      nextCursor: found.length > CAMPAIGNS_PAGE_SIZE && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : undefined,
      now: deps.clock.now(),
    };
    if (isFragmentRequest(req)) return sendFragment(req, reply, reads, campaignsRegion(view));
    return sendPage(req, reply, deps, reads, { title: 'Campaigns', section: 'campaigns', live, body: campaignsPage(view) });
  });

  app.get('/campaigns/:id', { preHandler: session }, async (req, reply) => {
    const auth = req.auth!;
    const { id } = req.params as { id: string };
    const live = isFragmentRequest(req) ? '' : await liveUrl(req, deps, { campaign: id });
    const campaign = id.length <= 100 ? await deps.store.campaigns.getForTenant(auth.tenantId, id) : undefined;
    if (!campaign) {
      const page = messagePage({ title: 'Campaign not found', message: `There is no campaign ${id} in tenant ${auth.tenantName}.`, link: { href: '/campaigns', text: 'All campaigns' } });
      return sendHtml(reply, page, 404);
    }
    const buys = await buysOf(deps.store, campaign);
    const [delivered, mediaBuys, names] = await Promise.all([
      deps.store.mediaBuys.deliveredByCampaigns([campaign.id]),
      deps.store.mediaBuys.byOperations(buys.map((b) => b.id)),
      agentNames(auth.tenantId),
    ]);
    const view: CampaignView = {
      campaign,
      buys,
      delivered: delivered.get(campaign.id),
      mediaBuys: new Map(mediaBuys.filter((m) => m.tenant_id === auth.tenantId).map((m) => [m.operation_id, m])),
      agentNames: names,
      now: deps.clock.now(),
    };
    if (isFragmentRequest(req)) return sendFragment(req, reply, reads, campaignRegion(view));
    return sendPage(req, reply, deps, reads, { title: campaign.name ?? `Campaign ${campaign.id.slice(0, 12)}`, section: 'campaigns', live, body: campaignPage(view) });
  });
}
