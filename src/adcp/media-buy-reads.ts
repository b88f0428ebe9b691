/**
 * The seller's reads of live media buys (the AdCP spec, media buys): the buys'
 * status (`get_media_buys`) and their delivery (`get_media_buy_delivery`), as the
 * request shapes the spec gives them. Both are synchronous tasks answered at
 * once; the reply is read like any other (src/adcp/client.ts).
 */
import type { AdcpClient, AgentEndpoint, CallOptions, TaskReply } from './types.js';

/** Every buy status: a delivery read names them all (the seller's default is only `active`). */
export const ALL_BUY_STATUSES: readonly string[] = ['pending_creatives', 'pending_start', 'active', 'paused', 'completed', 'rejected', 'canceled'];

export interface BuyReadQuery {
  /** The account the buys were created under (the create request's `account`), when known. */
  account?: unknown;
  mediaBuyIds: string[];
}

/** `get_media_buys` for these buys, with the delivery snapshot (pacing index, delivery status) where the seller has one. */
export function getMediaBuysArgs(q: BuyReadQuery): Record<string, unknown> {
  return { ...(q.account !== undefined ? { account: q.account } : {}), media_buy_ids: q.mediaBuyIds, include_snapshot: true };
}

/** `get_media_buy_delivery` for these buys, lifetime to date, whatever their status. */
export function getMediaBuyDeliveryArgs(q: BuyReadQuery): Record<string, unknown> {
  return { ...(q.account !== undefined ? { account: q.account } : {}), media_buy_ids: q.mediaBuyIds, status_filter: ALL_BUY_STATUSES };
}

export function getMediaBuys(adcp: AdcpClient, agent: AgentEndpoint, q: BuyReadQuery, opts?: CallOptions): Promise<TaskReply> {
  return adcp.callTask(agent, 'get_media_buys', getMediaBuysArgs(q), opts);
}

export function getMediaBuyDelivery(adcp: AdcpClient, agent: AgentEndpoint, q: BuyReadQuery, opts?: CallOptions): Promise<TaskReply> {
  return adcp.callTask(agent, 'get_media_buy_delivery', getMediaBuyDeliveryArgs(q), opts);
}
