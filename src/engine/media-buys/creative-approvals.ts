/**
 * The buy's `creative_approvals` (per package, with rejection reasons) applied to
 * its creatives inside a status read's commit (status-apply.ts), by the same rules
 * as every observation of a creative (src/domain/creative-review.ts).
 */
import { approvalsOfBuy, nextCreativeCheck, observe, type CreativePolicy, type TrackedCreative } from '../../domain/creative-review.js';
import type { NewEventSpec } from '../../domain/media-buy-plans.js';
import type { MediaBuyRow, Store } from '../../store/index.js';
import { trackedOf } from '../../store/creatives-repo.js';
import type { Tx } from '../../store/tx.js';

type Json = Record<string, unknown>;

/** What one creative's change writes, applied to its row and to the rules' view of it. */
export async function writeChange(store: Store, t: Tx, buyId: string, c: TrackedCreative, patch: Json, now: number): Promise<TrackedCreative> {
  await store.creatives.updateIn(t, buyId, c.creative_id, patch, now);
  const next = { ...c, ...patch } as TrackedCreative & { approvals: unknown };
  if (typeof patch.approvals === 'string') next.approvals = JSON.parse(patch.approvals);
  return next as TrackedCreative;
}

/**
 * The buy's `creative_approvals` in a `get_media_buys` row, applied to its creatives
 * inside the status read's commit (status-apply.ts). Returns the buy events they
 * make and the buy's creative timer after them (undefined: unchanged). With
 * `askSoon`, a new rejection makes the timer due now, so that a review takes it to
 * the inbox at once (the commit here holds the buy's lock, not its operation's).
 */
export async function applyApprovals(
  store: Store,
  trx: Tx,
  buy: MediaBuyRow,
  seller: Json,
  opts: { policy: CreativePolicy; readStartedAt: number; source: string; now: number; random: () => number; askSoon: boolean },
): Promise<{ events: NewEventSpec[]; creative_check_at?: number | null }> {
  const rows = await store.creatives.forBuy(buy.id, trx);
  if (rows.length === 0) return { events: [] };
  const byCreative = approvalsOfBuy(seller);
  const events: NewEventSpec[] = [];
  const all: TrackedCreative[] = [];
  let owed = false;
  for (const row of rows) {
    let c = trackedOf(row);
    const approvals = byCreative.get(c.creative_id);
    const change = approvals ? observe(c, { creative_id: c.creative_id, approvals }, opts.readStartedAt, opts.source, opts.now) : null;
    if (change) {
      c = await writeChange(store, trx, buy.id, c, change.patch, opts.now);
      events.push(...change.events);
      if (change.patch.inbox_state === 'owed') owed = true;
    }
    all.push(c);
  }
  if (events.length === 0) return { events };
  const next = buy.ended_at === null ? nextCreativeCheck(all, opts.policy, opts.now, opts.random) : null;
  return { events, creative_check_at: owed && opts.askSoon ? opts.now : next };
}
