/**
 * Reading a tenant's live media buys as the API shows them (GET /v1/media-buys,
 * /v1/media-buys/:id, /v1/media-buys/:id/delivery) and the MCP tools and resources
 * show the same JSON: one listing with its keyset cursor, one buy with its events,
 * one buy's reports with their totals. Another tenant's buy is "not found".
 */
import { presentCreative } from '../../domain/creatives.js';
import { presentMediaBuy, presentReport, type MediaBuyJson, type ReportJson } from '../../domain/media-buy-json.js';
import type { MediaBuyStatus } from '../../domain/media-buy-status.js';
import type { PacingState } from '../../domain/pacing.js';
import type { Store } from '../../store/index.js';
import { decodeCursor, encodeCursor } from '../page-cursor.js';
import type { DeliveryView, MediaBuyService } from './buy-service.js';

export interface MediaBuyQuery {
  status?: MediaBuyStatus;
  agentId?: string;
  campaignId?: string;
  pacing?: PacingState;
  limit: number;
  /** A `next_cursor` this listing returned. */
  cursor?: string;
}

export interface MediaBuyPage {
  media_buys: MediaBuyJson[];
  next_cursor: string | null;
}

export interface DeliveryJson {
  reports: ReportJson[];
  totals: Omit<DeliveryView['totals'], 'through'> & { through: string | null };
}

export interface BuyReads {
  store: Store;
  mediaBuys: MediaBuyService;
}

/** Newest first, `limit` at a time. */
export async function listMediaBuys(deps: BuyReads, tenantId: string, q: MediaBuyQuery): Promise<MediaBuyPage> {
  const rows = await deps.mediaBuys.list(
    tenantId,
    { status: q.status, agentId: q.agentId, campaignId: q.campaignId, pacing: q.pacing },
    q.limit + 1,
    q.cursor ? decodeCursor(q.cursor) : undefined,
  );
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    media_buys: page.map((b) => presentMediaBuy(b)),
    next_cursor: rows.length > q.limit && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
  };
}

/** The buy with its creatives and its events (what people and the seller did to it, oldest first). */
export async function showMediaBuy(deps: BuyReads, tenantId: string, id: string): Promise<MediaBuyJson> {
  const buy = await deps.mediaBuys.get(tenantId, id);
  const [events, creatives] = await Promise.all([deps.store.mediaBuys.events(buy.id), deps.store.creatives.forBuy(buy.id)]);
  return presentMediaBuy(buy, events, creatives.map(presentCreative));
}

/** Its reports, oldest first, and totals that count each period once. */
export async function mediaBuyDelivery(deps: BuyReads, tenantId: string, id: string): Promise<DeliveryJson> {
  const view = await deps.mediaBuys.delivery(tenantId, id);
  return {
    reports: view.reports.map(presentReport),
    totals: { ...view.totals, through: view.totals.through === null ? null : new Date(view.totals.through).toISOString() },
  };
}
