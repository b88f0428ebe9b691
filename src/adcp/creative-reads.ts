/**
 * The seller's read of creatives under review (the AdCP spec, creatives):
 * `list_creatives` filtered to the creatives we follow and to those changed since
 * they were sent (`updated_after`), one page at a time. A synchronous task answered
 * at once; the reply is read like any other (src/adcp/client.ts).
 */
import type { AdcpClient, AgentEndpoint, CallOptions, TaskReply } from './types.js';

/** The spec allows list pages of up to 100. */
export const LIST_PAGE_SIZE = 100;

export interface CreativeReadQuery {
  /** The account the creatives were synced under (the buy's `account`), when known. */
  account?: unknown;
  creativeIds: string[];
  /** Only creatives the seller changed after this (ISO 8601). */
  updatedAfter?: string;
  cursor?: string;
}

export function listCreativesArgs(q: CreativeReadQuery): Record<string, unknown> {
  return {
    ...(q.account !== undefined ? { account: q.account } : {}),
    filters: { creative_ids: q.creativeIds, ...(q.updatedAfter ? { updated_after: q.updatedAfter } : {}) },
    pagination: { max_results: LIST_PAGE_SIZE, ...(q.cursor ? { cursor: q.cursor } : {}) },
  };
}

export function listCreatives(adcp: AdcpClient, agent: AgentEndpoint, q: CreativeReadQuery, opts?: CallOptions): Promise<TaskReply> {
  return adcp.callTask(agent, 'list_creatives', listCreativesArgs(q), opts);
}
