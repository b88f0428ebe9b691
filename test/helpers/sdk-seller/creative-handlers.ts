/**
 * sync_creatives and list_creatives, as framework domain handlers (validated on
 * the way in and out by the SDK). A sync stores each creative for review and
 * records the assignments to the caller's own packages; an assignment to a
 * package the caller does not have is reported per creative, not applied.
 */
import { ownerOf, type SellerAccount } from './accounts.js';
import { listedCreative, type CreativeLibrary } from './creatives.js';
import type { MediaBuyBook } from './media-buys.js';

type Json = Record<string, unknown>;
type Ctx = { account?: SellerAccount };

export function creativeHandlers(deps: { book: MediaBuyBook; creatives: CreativeLibrary }) {
  const { book, creatives } = deps;

  const syncCreatives = async (params: Json, ctx: Ctx): Promise<Json> => {
    const owner = ownerOf(ctx.account);
    const packages = new Set(book.ofOwner(owner).flatMap((b) => b.packages.map((p) => p.package_id)));
    const results = (params.creatives as Json[]).map((c) => ({ creative_id: String(c.creative_id), action: creatives.upsert(owner, c) }));
    const assigned = new Map<string, string[]>();
    const refused = new Map<string, Record<string, string>>();
    for (const a of (params.assignments as Array<{ creative_id: string; package_id: string }> | undefined) ?? []) {
      if (packages.has(a.package_id) && creatives.assign(owner, a.creative_id, a.package_id)) {
        assigned.set(a.creative_id, [...(assigned.get(a.creative_id) ?? []), a.package_id]);
      } else {
        refused.set(a.creative_id, { ...refused.get(a.creative_id), [a.package_id]: 'no such package for this account, or no such creative' });
      }
    }
    return {
      creatives: results.map((r) => ({
        ...r,
        // Advisory only: the review happens later.
        status: creatives.get(owner, r.creative_id)!.status,
        ...(assigned.has(r.creative_id) ? { assigned_to: assigned.get(r.creative_id) } : {}),
        ...(refused.has(r.creative_id) ? { assignment_errors: refused.get(r.creative_id) } : {}),
      })),
    };
  };

  const listCreatives = async (params: Json, ctx: Ctx): Promise<Json> => {
    const owner = ownerOf(ctx.account);
    const filters = (params.filters ?? {}) as { creative_ids?: string[]; statuses?: string[]; updated_after?: string; updated_before?: string; media_buy_ids?: string[] };
    const after = filters.updated_after ? Date.parse(filters.updated_after) : undefined;
    const before = filters.updated_before ? Date.parse(filters.updated_before) : undefined;
    const buyPackages = filters.media_buy_ids ? new Set(filters.media_buy_ids.flatMap((id) => book.get(id, owner)?.packages.map((p) => p.package_id) ?? [])) : undefined;
    const matching = creatives
      .ofOwner(owner)
      .filter((c) => !filters.creative_ids || filters.creative_ids.includes(c.creative_id))
      .filter((c) => !filters.statuses || filters.statuses.includes(c.status))
      .filter((c) => after === undefined || c.updated_at > after)
      .filter((c) => before === undefined || c.updated_at < before)
      .filter((c) => !buyPackages || [...c.packages].some((p) => buyPackages.has(p)));
    const pagination = (params.pagination ?? {}) as { max_results?: number; cursor?: string };
    const offset = pagination.cursor ? Number(pagination.cursor) || 0 : 0;
    const max = pagination.max_results ?? 50;
    const page = matching.slice(offset, offset + max);
    const more = offset + page.length < matching.length;
    return {
      query_summary: { total_matching: matching.length, returned: page.length },
      pagination: { has_more: more, ...(more ? { cursor: String(offset + page.length) } : {}) },
      creatives: page.map((c) => listedCreative(c, params.include_assignments === true)),
    };
  };

  return { syncCreatives, listCreatives };
}
