/**
 * A pause, resume or cancel of a buy (`update_media_buy`, a child of its create) that
 * ended, applied to the buy in the commit that ends it (buy-recorder.ts): what the
 * seller's reply says the buy now is (its status, revision, the actions it allows, the
 * packages it changed), so the next action is judged on it at once — a resume right
 * after a pause must find the buy paused, not wait for a status read. A status read
 * still follows soon, as before, to confirm it with the seller's own listing.
 */
import { mergePackages, type PackageState } from '../../domain/media-buy-delivery.js';
import { statusPart, timersAfterStatusRead, type NewEventSpec } from '../../domain/media-buy-plans.js';
import { isMediaBuyStatus, isTerminalBuyStatus, type MediaBuyStatus } from '../../domain/media-buy-status.js';
import { STATUS_AFTER_REPORT_MS, withNextCheck } from '../../domain/media-buy-timers.js';
import { readUpdateReply } from '../../domain/update-reply.js';
import type { MediaBuyRow, OperationRow, Store } from '../../store/index.js';
import type { BuyPlan, MediaBuyPatch } from '../../store/media-buys-repo.js';
import type { Tx } from '../../store/tx.js';
import type { ApplyContext } from './report-apply.js';

type Json = Record<string, unknown>;

/** The statuses a resumed buy can go back to. */
const RESUMABLE: ReadonlySet<string> = new Set(['pending_creatives', 'pending_start', 'active']);

export async function planUpdateEnded(ctx: ApplyContext, trx: Tx, buy: MediaBuyRow, op: OperationRow, now: number): Promise<BuyPlan<null>> {
  const request = JSON.parse(op.request_body) as Json;
  const events: NewEventSpec[] = [
    { source: 'call', kind: op.status === 'completed' ? 'update_confirmed' : 'update_failed', detail: { operation_id: op.id, status: op.status, ...updateFacts(request, op) } },
  ];
  const patch: MediaBuyPatch = {};
  if (op.status === 'completed') {
    const facts = readUpdateReply(request, op.result ? (JSON.parse(op.result) as Json) : {});
    const status = facts.status ?? (facts.resumed ? await statusBeforePause(ctx.store, trx, buy) : undefined);
    const changed = statusPart(buy, status, 'call');
    if (changed) {
      Object.assign(patch, changed.patch);
      // Whether the seller said it, or we took it from what was asked (and, for a resume, the buy's history).
      events.push(...changed.events.map((e) => ({ ...e, detail: { operation_id: op.id, stated: facts.stated } })));
    }
    if (facts.revision !== undefined) patch.revision = facts.revision;
    if (facts.valid_actions) patch.valid_actions = JSON.stringify(facts.valid_actions);
    if (facts.packages) patch.packages = JSON.stringify(mergePackages(JSON.parse(buy.packages) as PackageState[], facts.packages));
  }
  const after = { ...buy, ...patch } as MediaBuyRow;
  if (buy.ended_at === null) {
    // An ended buy (canceled) has one delivery read left, then tracking ends; a live one
    // has its status read soon, which confirms (or, for a refused update, tells) what it is.
    Object.assign(
      patch,
      isTerminalBuyStatus(after.status)
        ? timersAfterStatusRead(after, after.status, ctx.tracking, now, ctx.random)
        : withNextCheck({ status_check_at: now + STATUS_AFTER_REPORT_MS, report_due_at: buy.report_due_at, delivery_poll_at: buy.delivery_poll_at, creative_check_at: buy.creative_check_at }),
    );
  }
  return { patch, events: events.map((e) => ({ ...e, at: now })), value: null };
}

/**
 * A resume whose reply names no status: the buy goes back to what it was before it was
 * paused (its history says), the best we know until the status read a second later.
 * Keeping it `paused` would be false (the seller confirmed the resume) and would refuse
 * a pause asked right after as `already_paused`. A buy that was never seen to change
 * into `paused` keeps its status; the read settles it.
 */
async function statusBeforePause(store: Store, trx: Tx, buy: MediaBuyRow): Promise<MediaBuyStatus | undefined> {
  if (buy.status !== 'paused') return undefined;
  const before = await store.mediaBuys.statusBeforeIn(trx, buy.id, 'paused');
  return isMediaBuyStatus(before) && RESUMABLE.has(before) ? before : undefined;
}

/** What an update asked for (pause, resume, cancel), from its stored request: shown on the buy's event. */
function updateFacts(request: Json, op: OperationRow): Json {
  const facts: Json = {};
  if (typeof request.paused === 'boolean') facts.paused = request.paused;
  if (request.canceled === true) facts.canceled = true;
  if (op.error) facts.error = JSON.parse(op.error);
  return facts;
}
