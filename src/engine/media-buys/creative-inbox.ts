/**
 * A rejected creative brought to a person (README, Creatives): an inbox item on
 * the `sync_creatives` operation that sent it (`needs_input`, `input_request.kind:
 * creative_rejected`), naming each creative the seller rejected and why.
 *
 * A rejection is first recorded on the creative as `owed` (in the commit that
 * learnt of it, which holds only the buy's lock), then asked on its operation here,
 * in a commit that locks the operation first and the buy second (the order every
 * write of both keeps: src/store/creatives-repo.ts). A crash in between leaves it
 * owed, and the buy's next review asks it. An operation that has not ended yet
 * (a sync still `submitted`) is asked when it ends (creative-recorder.ts), since
 * its own statuses would otherwise overwrite the question.
 *
 * The question's clock is the operation's timer (src/engine/input-timers.ts): people
 * are reminded of it like of any other question until someone answers.
 *
 * The question lists every rejection of that operation not yet answered; a new
 * one while a person has not answered replaces the question (a new id: an answer
 * to the old one is refused as superseded, never taken for the new one).
 */
import type { Logger } from 'pino';
import { creativeRejectedRequest } from '../../domain/creative-request.js';
import { nextCreativeCheck, NO_REASON, type CreativePolicy } from '../../domain/creative-review.js';
import type { RejectedCreative } from '../../domain/input-request.js';
import { sameQuestion } from '../../domain/input-question.js';
import { withNextCheck } from '../../domain/media-buy-timers.js';
import { isTerminal, type OperationStatus } from '../../domain/status.js';
import type { EventRow, NotificationRow, OperationRow, Store } from '../../store/index.js';
import { trackedOf } from '../../store/creatives-repo.js';
import { inWriteTransaction, type Tx } from '../../store/tx.js';
import type { ChangeBus } from '../change-bus.js';
import type { Clock } from '../clock.js';
import { parseInputRequest } from '../input-requests.js';
import { heldTimer } from '../input-timers.js';
import type { ReminderPolicy } from '../../domain/input-timers.js';

/** The operation's change when a question was asked. */
export interface Asked {
  row: OperationRow;
  events: EventRow[];
  notifications: NotificationRow[];
}

export interface CreativeInboxDeps {
  store: Store;
  bus: ChangeBus;
  clock: Clock;
  log: Logger;
  policy: CreativePolicy;
  /** People are reminded of an unanswered rejection like of any question (ADCP_ORCH_INPUT_REMINDER_MS). */
  reminders: ReminderPolicy;
}

export class CreativeInbox {
  constructor(private readonly deps: CreativeInboxDeps) {}

  /**
   * Asks every rejection of the buy still owed, one commit per operation. Called after a
   * review's commits and by a review that finds some left by a crash.
   */
  async askOwed(buyId: string): Promise<void> {
    const { store, bus, clock } = this.deps;
    const owed = (await store.creatives.forBuy(buyId)).filter((c) => c.inbox_state === 'owed');
    for (const opId of new Set(owed.map((c) => c.operation_id))) {
      try {
        const asked = await inWriteTransaction(store.db, async (trx) => {
          // The operation's row lock first (a write that plans nothing only locks and reads it).
          const locked = await store.operations.mutateIn(trx, opId, null, (row) => ({ value: row }), clock.now());
          return locked.outcome === 'unchanged' ? this.askIn(trx, locked.row, buyId) : undefined;
        });
        if (asked) bus.publish({ operation: asked.row, events: asked.events, notifications: asked.notifications });
      } catch (err) {
        // Still owed: the buy's next review asks again.
        this.deps.log.warn({ err, buy_id: buyId, operation_id: opId }, 'bringing a rejected creative to the inbox failed; the next review tries again');
      }
    }
  }

  /**
   * In a transaction that holds `op`'s row lock: locks the buy, puts the operation's
   * unanswered rejections in one question on it (if it has ended), and marks them asked.
   * Returns the operation's change when a question was asked (its notifications travel with the caller's commit).
   */
  async askIn(trx: Tx, op: OperationRow, buyId: string): Promise<Asked | undefined> {
    const { store, clock } = this.deps;
    if (!isTerminal(op.status as OperationStatus)) return undefined;
    const now = clock.now();
    let rejected: RejectedCreative[] = [];
    const buy = await store.mediaBuys.mutateIn(
      trx,
      buyId,
      null,
      async (b, t) => {
        const creatives = await store.creatives.forOperation(op.id, t);
        const open = creatives.filter((c) => c.buy_id === b.id && c.status === 'rejected' && (c.inbox_state === 'owed' || c.inbox_state === 'asked'));
        rejected = open.map((c) => ({ creative_id: c.creative_id, name: c.name, rejection_reason: c.rejection_reason ?? NO_REASON, package_ids: JSON.parse(c.package_ids) as string[] }));
        for (const c of open) if (c.inbox_state === 'owed') await store.creatives.updateIn(t, b.id, c.creative_id, { inbox_state: 'asked' }, now);
        const all = (await store.creatives.forBuy(b.id, t)).map(trackedOf);
        const next = b.ended_at === null ? nextCreativeCheck(all, this.deps.policy, now, clock.random) : null;
        const timers = withNextCheck({ status_check_at: b.status_check_at, report_due_at: b.report_due_at, delivery_poll_at: b.delivery_poll_at, creative_check_at: next });
        return { patch: timers.next_check_at !== b.next_check_at || next !== b.creative_check_at ? timers : undefined, value: b };
      },
      now,
    );
    if (buy.outcome === 'not_found' || buy.outcome === 'lease_lost' || rejected.length === 0) return undefined;
    const request = creativeRejectedRequest(rejected, { id: buy.value.id, media_buy_id: buy.value.media_buy_id }, now);
    const asked = await store.operations.mutateIn(
      trx,
      op.id,
      null,
      (current) => {
        const waiting = current.needs_input === 1 && !current.answer ? parseInputRequest(current) : null;
        // The same question already waits: nothing to ask again.
        if (waiting && waiting.kind === 'creative_rejected' && sameQuestion(waiting, request)) return { value: null };
        return {
          // The operation has ended: the question's clock (reminders) is its only timer.
          patch: { needs_input: 1, input_request: JSON.stringify(request), input_message: request.message, answer: null, ...heldTimer(request, this.deps.reminders) },
          events: [{ source: 'poll', kind: 'input_requested', from: current.status, to: current.status, detail: { input_request: request } }],
          value: null,
        };
      },
      now,
    );
    if (asked.outcome !== 'applied') return undefined;
    // The caller's row is this operation's (a write hook's, or the locked one): it answers as committed.
    Object.assign(op, asked.row);
    return { row: asked.row, events: asked.events, notifications: asked.notifications };
  }
}
