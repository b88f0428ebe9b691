/**
 * Looking a sync_creatives up by its natural key (the creative ids it names, in its
 * account) before resending it when the seller may not replay it: `list_creatives`
 * filtered to those ids.
 *
 * A sync is an upsert of creatives by id, so "did it take effect" is read from them:
 * none of ours created or changed at the seller since our first send means it did not
 * (or changed nothing, and a resend changes nothing either): a resend is safe. Any of
 * ours created or changed since then (or a seller that does not say when) may be its
 * doing: a person confirms, we never guess. There is no reply to rebuild from the list
 * (the per-creative actions, the assignments), so nothing is bound.
 */
import { LIST_PAGE_SIZE, listCreatives } from '../adcp/creative-reads.js';
import type { AdcpClient, AgentEndpoint } from '../adcp/types.js';
import type { LookupVerdict } from './outcome-lookup.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Clocks differ; a creative stamped a little before our send can still be our sync's. */
const CLOCK_SLACK_MS = 5 * 60_000;
const MAX_PAGES = 20;

/** The creative ids a sync_creatives request names. */
export function syncedCreativeIds(request: Json): string[] {
  const creatives = Array.isArray(request.creatives) ? request.creatives : [];
  return [...new Set(creatives.flatMap((c) => (isObject(c) && typeof c.creative_id === 'string' ? [c.creative_id] : [])))];
}

/** Whether the seller's record of a creative may show our sync: made or changed since `sentAt`, or undated. */
export function touchedSince(creative: Json, sentAt: number): boolean {
  const stamps = [creative.updated_date, creative.created_date].filter((d): d is string => typeof d === 'string').map(Date.parse);
  if (stamps.length === 0 || stamps.some(Number.isNaN)) return true;
  return Math.max(...stamps) >= sentAt - CLOCK_SLACK_MS;
}

export async function lookUpSyncedCreatives(adcp: AdcpClient, agent: AgentEndpoint, request: Json, sentAt: number, timeoutMs: number): Promise<LookupVerdict> {
  const ids = syncedCreativeIds(request);
  if (ids.length === 0) return { kind: 'unavailable', reason: 'the request names no creative to look up' };
  const wanted = new Set(ids);
  const touched: string[] = [];
  let pages = 0;
  try {
    for (let i = 0; i < ids.length; i += LIST_PAGE_SIZE) {
      let cursor: string | undefined;
      do {
        if (++pages > MAX_PAGES) return { kind: 'unavailable', reason: `more than ${MAX_PAGES} pages of creatives` };
        const reply = await listCreatives(adcp, agent, { account: request.account, creativeIds: ids.slice(i, i + LIST_PAGE_SIZE), cursor }, { timeoutMs });
        if (reply.error || reply.status !== 'completed') return { kind: 'unavailable', reason: `list_creatives answered ${reply.error?.code ?? reply.status}` };
        const creatives = Array.isArray(reply.data.creatives) ? reply.data.creatives : [];
        for (const c of creatives) {
          if (isObject(c) && typeof c.creative_id === 'string' && wanted.has(c.creative_id) && touchedSince(c, sentAt)) touched.push(c.creative_id);
        }
        const pagination = isObject(reply.data.pagination) ? reply.data.pagination : {};
        cursor = pagination.has_more === true && typeof pagination.cursor === 'string' ? pagination.cursor : undefined;
      } while (cursor);
    }
  } catch (err) {
    return { kind: 'unavailable', reason: `list_creatives failed: ${err instanceof Error ? err.message : String(err)}` };
  }
  return touched.length > 0 ? { kind: 'candidates', ids: [...new Set(touched)] } : { kind: 'absent' };
}
