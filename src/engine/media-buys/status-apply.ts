/**
 * Applying what the seller says of a buy in a `get_media_buys` row (a background
 * status read, or a person's refresh): status, revision, the actions it allows
 * now, flight, budget and packages; pacing is judged again with what changed
 * (a new budget, the packages' `pacing_index`), unless the figures still count a
 * report the seller said was not whole (src/domain/pacing.ts). Timers follow the status
 * (src/domain/media-buy-plans.ts).
 */
import { buyPacing, mergePackages, type PackageState } from '../../domain/media-buy-delivery.js';
import { statusPart, timersAfterStatusRead, type NewEventSpec } from '../../domain/media-buy-plans.js';
import { readablePart } from '../../domain/media-buy-unreadable.js';
import { DEFAULT_PACING, figuresArePartial, nextPacing, type Pacing, type PacingState } from '../../domain/pacing.js';
import type { MediaBuyRow } from '../../store/index.js';
import type { BuyPlan, MediaBuyPatch } from '../../store/media-buys-repo.js';
import type { Tx } from '../../store/tx.js';
import { applyApprovals } from './creative-approvals.js';
import type { ApplyContext } from './report-apply.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The row for our buy in a `get_media_buys` reply, if the seller listed it. */
export function buyInReply(data: Json, mediaBuyId: string): Json | undefined {
  const list = Array.isArray(data.media_buys) ? data.media_buys : [];
  return list.find((b): b is Json => isObject(b) && b.media_buy_id === mediaBuyId);
}

/**
 * `readStartedAt` is when the read was asked (default `now`): a creative sent again
 * after it is not judged by it (creative-tracker.ts). With `askSoon`, a creative
 * rejection it brings makes the buy's creative timer due now, for a review to take
 * it to the inbox (a caller that does not do so itself).
 */
export async function planStatusRead(
  ctx: ApplyContext,
  trx: Tx,
  buy: MediaBuyRow,
  seller: Json,
  source: string,
  now: number,
  opts: { readStartedAt?: number; askSoon?: boolean } = {},
): Promise<BuyPlan<'read'>> {
  // The seller lists the buy: if it had stopped answering for it, that is over (told once).
  const readable = readablePart(buy, source, now);
  const patch: MediaBuyPatch = { ...readable.patch };
  const events: NewEventSpec[] = [...readable.events];
  const status = statusPart(buy, seller.status, source);
  if (status) {
    Object.assign(patch, status.patch);
    events.push(...status.events);
    if (seller.status === 'canceled' && isObject(seller.cancellation)) events[events.length - 1]!.detail = { cancellation: seller.cancellation };
  }
  if (typeof seller.revision === 'number' && Number.isInteger(seller.revision)) patch.revision = seller.revision;
  if (Array.isArray(seller.valid_actions)) patch.valid_actions = JSON.stringify(seller.valid_actions.filter((a) => typeof a === 'string'));
  const start = time(seller.start_time);
  if (start !== undefined) patch.flight_start = start;
  const end = time(seller.end_time);
  if (end !== undefined) patch.flight_end = end;
  if (typeof seller.total_budget === 'number' && Number.isFinite(seller.total_budget) && seller.total_budget >= 0) patch.budget_amount = seller.total_budget;
  if (typeof seller.currency === 'string' && /^[A-Z]{3}$/.test(seller.currency)) patch.currency = seller.currency;
  const packages = mergePackages(JSON.parse(buy.packages) as PackageState[], seller.packages);
  patch.packages = JSON.stringify(packages);
  if (ctx.tracking.creatives) {
    // The packages' creative_approvals: each creative's review on this buy, with its rejection reason.
    const creatives = await applyApprovals(ctx.store, trx, buy, seller, {
      policy: ctx.tracking.creatives,
      readStartedAt: opts.readStartedAt ?? now,
      source,
      now,
      random: ctx.random,
      askSoon: opts.askSoon ?? false,
    });
    events.push(...creatives.events);
    if (creatives.creative_check_at !== undefined) patch.creative_check_at = creatives.creative_check_at;
  }

  const after = { ...buy, ...patch } as MediaBuyRow;
  const thresholds = (await ctx.store.settings.forTenantIn(buy.tenant_id, trx)).pacing ?? DEFAULT_PACING;
  const figures = { impressions: buy.impressions, spend: buy.spend, clicks: buy.clicks, through: buy.delivered_through, source: null, byPackage: {} };
  const judged = buyPacing(after, figures, packages, thresholds);
  const before: Pacing = { state: buy.pacing_state as PacingState, ratio: buy.pacing_ratio, expected_spend: buy.pacing_expected };
  // The figures are the last reports': while they count one the seller said was not whole, the state
  // judged when it came holds (pacing.ts). Looked up only when this read would change the state.
  const crosses = judged.state !== before.state;
  const partial = crosses && figuresArePartial(await ctx.store.reports.livePeriodsIn(trx, buy.id), await ctx.store.reports.latestSnapshotIn(trx, buy.id));
  const { pacing, alert } = nextPacing(before, judged, !partial);
  if (pacing.state !== buy.pacing_state || pacing.ratio !== buy.pacing_ratio) {
    Object.assign(patch, { pacing_state: pacing.state, pacing_ratio: pacing.ratio, pacing_expected: pacing.expected_spend });
    if (pacing.state !== buy.pacing_state) {
      const detail = { state: pacing.state, from: buy.pacing_state, ratio: pacing.ratio, expected_spend: pacing.expected_spend };
      events.push({ source, kind: alert ? 'pacing_alert' : 'pacing_changed', detail });
    }
  }
  Object.assign(patch, timersAfterStatusRead(after, after.status, ctx.tracking, now, ctx.random));
  return { patch, events: events.map((e) => ({ ...e, at: now })), value: 'read' };
}

function time(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : undefined;
}
