/**
 * The media-buy handlers: create, update (pause, resume, cancel), and the two
 * reads. They are registered as the framework's own domain handlers, so every
 * request reaches them only after the SDK validated it against the AdCP schema,
 * and every reply leaves only after the SDK validated it too. What they check
 * themselves is what a schema cannot: products we sell, governed accounts
 * carrying a governance_context, buys that exist and belong to the caller.
 */
import { adcpError } from '@adcp/sdk/server';
import type { McpToolResponse } from '@adcp/sdk/server';
import { CURRENCY, PRICING_OPTION, SUBMITTED_PRODUCT, isKnownProduct } from './catalog.js';
import type { CreativeLibrary } from './creatives.js';
import { packageDelivery, totalBudget, type BookedBuy, type MediaBuyBook } from './media-buys.js';
import { assertValidResponse } from './schema.js';
import type { TaskBook } from './tasks.js';
import { ownerOf, type SellerAccount } from './accounts.js';

type Json = Record<string, unknown>;
type Ctx = { account?: SellerAccount };

export interface MediaBuyDeps {
  book: MediaBuyBook;
  tasks: TaskBook;
  creatives: CreativeLibrary;
  now: () => number;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const ALL_STATUSES = ['pending_creatives', 'pending_start', 'active', 'paused', 'completed', 'rejected', 'canceled'];

/** Governed accounts (the project's convention, shared with its sandbox): account_id `gov_…`. */
const isGoverned = (account: SellerAccount | undefined): boolean => account?.account_id?.startsWith('gov_') === true;

export function mediaBuyHandlers(deps: MediaBuyDeps) {
  const { book, tasks } = deps;

  /** The create's success reply, complete in itself: it is also a submitted task's result, which no framework wraps. */
  const created = (buy: BookedBuy, context: unknown): Json => {
    const reply: Json = {
      media_buy_id: buy.media_buy_id,
      status: buy.status,
      revision: buy.revision,
      confirmed_at: iso(buy.created_at),
      valid_actions: book.validActions(buy),
      packages: buy.packages.map((p) => ({ package_id: p.package_id, product_id: p.product_id, pricing_option_id: p.pricing_option_id, budget: p.budget, paused: p.paused })),
      ...(context !== undefined ? { context } : {}),
    };
    assertValidResponse('create_media_buy', reply);
    return reply;
  };

  const createMediaBuy = async (params: Json, ctx: Ctx): Promise<Json | McpToolResponse> => {
    if (isGoverned(ctx.account) && (typeof params.governance_context !== 'string' || params.governance_context === '')) {
      return adcpError('PERMISSION_DENIED', {
        message: `account ${ctx.account!.account_id} is governed: create_media_buy needs the governance_context of an approved check_governance`,
        field: 'governance_context',
      });
    }
    const packages = Array.isArray(params.packages) ? (params.packages as Json[]) : [];
    if (packages.length === 0) return adcpError('INVALID_REQUEST', { message: 'this seller books packages; proposals are not offered', field: 'packages' });
    for (const [i, p] of packages.entries()) {
      if (!isKnownProduct(p.product_id)) return adcpError('PRODUCT_NOT_FOUND', { message: `no product ${String(p.product_id)}`, field: `packages[${i}].product_id` });
      if (p.pricing_option_id !== PRICING_OPTION) return adcpError('INVALID_REQUEST', { message: `pricing option ${String(p.pricing_option_id)} is not offered`, field: `packages[${i}].pricing_option_id` });
    }
    const owner = ownerOf(ctx.account);
    if (packages[0]!.product_id === SUBMITTED_PRODUCT) {
      const push = params.push_notification_config as Json | undefined;
      const task = tasks.submit(owner, 'create_media_buy', push, () => created(book.book(owner, params), params.context));
      return { status: 'submitted', task_id: task.task_id, message: 'The buy is queued for review; it is booked shortly.' };
    }
    return created(book.book(owner, params), undefined);
  };

  const updateMediaBuy = async (params: Json, ctx: Ctx): Promise<Json | McpToolResponse> => {
    const buy = book.get(String(params.media_buy_id), ownerOf(ctx.account));
    if (!buy) return adcpError('MEDIA_BUY_NOT_FOUND', { message: `no media buy ${String(params.media_buy_id)} for this account`, field: 'media_buy_id' });
    if (params.canceled === true) {
      // Throws the SDK's NOT_CANCELLABLE for an ended buy.
      book.transition(buy, 'canceled', 'canceled', typeof params.cancellation_reason === 'string' ? params.cancellation_reason : undefined);
    } else if (typeof params.paused === 'boolean') {
      // Throws the SDK's INVALID_STATE for a move the lifecycle forbids; asking for the state it is in changes nothing.
      book.transition(buy, params.paused ? 'paused' : 'active', params.paused ? 'paused' : 'resumed');
    } else {
      return adcpError('UNSUPPORTED_FEATURE', { message: 'this seller pauses, resumes and cancels buys; nothing else can be updated' });
    }
    return { media_buy_id: buy.media_buy_id, status: buy.status, revision: buy.revision, implementation_date: iso(deps.now()), valid_actions: book.validActions(buy) };
  };

  /** The buys a read names (its ids, else its status filter, `active` by default), and the ids it named that we do not have. */
  const select = (params: Json, ctx: Ctx, defaultStatuses: string[]): { buys: BookedBuy[]; unknown: string[] } => {
    const owner = ctx.account ? ownerOf(ctx.account) : undefined;
    const pool = owner === undefined ? book.all() : book.ofOwner(owner);
    const ids = params.media_buy_ids as string[] | undefined;
    const statuses = (params.status_filter as string[] | string | undefined) ?? (ids ? ALL_STATUSES : defaultStatuses);
    const allowed = new Set(Array.isArray(statuses) ? statuses : [statuses]);
    const named = ids ? pool.filter((b) => ids.includes(b.media_buy_id)) : pool;
    return { buys: named.filter((b) => allowed.has(b.status)), unknown: ids ? ids.filter((id) => !pool.some((b) => b.media_buy_id === id)) : [] };
  };

  const notFound = (ids: string[]): Json[] => ids.map((id) => ({ code: 'MEDIA_BUY_NOT_FOUND', message: `no media buy ${id} for this account`, field: 'media_buy_ids' }));

  const getMediaBuys = async (params: Json, ctx: Ctx): Promise<Json> => {
    const { buys, unknown } = select(params, ctx, ['active']);
    return {
      media_buys: buys.map((b) => ({
        media_buy_id: b.media_buy_id,
        status: b.status,
        currency: CURRENCY,
        total_budget: totalBudget(b),
        start_time: b.start_time,
        end_time: b.end_time,
        confirmed_at: iso(b.created_at),
        created_at: iso(b.created_at),
        updated_at: iso(b.updated_at),
        revision: b.revision,
        valid_actions: book.validActions(b),
        ...(b.canceled ? { cancellation: { canceled_at: iso(b.canceled.at), canceled_by: 'buyer', ...(b.canceled.reason ? { reason: b.canceled.reason } : {}) } } : {}),
        packages: b.packages.map((p) => {
          const assigned = deps.creatives.assignedTo(b.owner, p.package_id);
          return {
            package_id: p.package_id,
            product_id: p.product_id,
            budget: p.budget,
            currency: CURRENCY,
            paused: p.paused,
            ...(assigned.length > 0
              ? { creative_approvals: assigned.map((c) => ({ creative_id: c.creative_id, approval_status: c.status, ...(c.rejection_reason ? { rejection_reason: c.rejection_reason } : {}) })) }
              : {}),
            ...(params.include_snapshot === true
              ? { snapshot: { as_of: iso(deps.now()), staleness_seconds: 0, impressions: p.delivered.impressions, spend: p.delivered.spend, clicks: p.delivered.clicks, delivery_status: p.paused || b.status !== 'active' ? 'not_delivering' : 'delivering' } }
              : {}),
          };
        }),
      })),
      ...(unknown.length > 0 ? { errors: notFound(unknown) } : {}),
    };
  };

  const getMediaBuyDelivery = async (params: Json, ctx: Ctx): Promise<Json | McpToolResponse> => {
    const { buys, unknown } = select(params, ctx, ['active']);
    const named = (params.media_buy_ids as string[] | undefined) ?? [];
    if (named.length > 0 && unknown.length === named.length) return adcpError('MEDIA_BUY_NOT_FOUND', { message: 'none of the media buys named is this account’s', field: 'media_buy_ids' });
    const now = deps.now();
    const start = buys.length > 0 ? Math.min(...buys.map((b) => b.created_at)) : now;
    const rows = buys.map((b) => {
      const packages = b.packages.map((p) => packageDelivery({ package_id: p.package_id, ...p.delivered, paused: p.paused }));
      const totals = { impressions: sumOf(b, 'impressions'), spend: Math.round(sumOf(b, 'spend') * 100) / 100, clicks: sumOf(b, 'clicks') };
      return { media_buy_id: b.media_buy_id, status: b.status, pricing_model: 'cpm', totals, by_package: packages };
    });
    return {
      reporting_period: { start: iso(start), end: iso(Math.max(now, start)) },
      currency: CURRENCY,
      media_buy_deliveries: rows,
      aggregated_totals: {
        impressions: rows.reduce((s, r) => s + r.totals.impressions, 0),
        spend: Math.round(rows.reduce((s, r) => s + r.totals.spend, 0) * 100) / 100,
        clicks: rows.reduce((s, r) => s + r.totals.clicks, 0),
        media_buy_count: rows.length,
      },
      ...(unknown.length > 0 ? { errors: notFound(unknown) } : {}),
    };
  };

  return { createMediaBuy, updateMediaBuy, getMediaBuys, getMediaBuyDelivery };
}

function sumOf(b: BookedBuy, key: 'impressions' | 'spend' | 'clicks'): number {
  return b.packages.reduce((s, p) => s + p.delivered[key], 0);
}
