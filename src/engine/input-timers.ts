/**
 * Reminders and expiry of what waits for a person (docs/ARCHITECTURE.md, People in the loop), kept as the
 * operation's timer row like every other timer: claimed with a lease, never only
 * in memory, so a restart loses none and repeats none. The rules (when the next
 * reminder is owed, what an expiry does) are in src/domain/input-timers.ts.
 *
 * Two kinds of waiting rows:
 * - held before anything was sent (a spend approval: `requested`, nothing to
 *   poll). The request's clock is the row's only timer, `check_kind` =
 *   `input_timer`, and the scheduler hands such rows to `run` here, never to the
 *   send path: only a person's `approve` sends a held buy. The deadline of a held
 *   buy does not run while it is held (approving it starts the seller's time).
 * - waiting on the seller's side (`input-required`, `auth-required`). The row
 *   keeps its poll timer, pulled in to the request's next moment (see
 *   nextCheckFor); when it is claimed, the operation service first lets
 *   `noteClaimed` record what is owed, then polls as usual.
 *
 * An expiry with `then: 'reject'` ends the operation through the same plan as a
 * person's reject (src/engine/rejection.ts), by the timer; with `then: 'stall'`
 * the operation is marked stalled (people are told) and still waits for an answer.
 */
import type { Logger } from 'pino';
import type { InputRequest, InputRequestKind, RecordedAnswer } from '../domain/input-request.js';
import {
  dueInputTimers,
  isDue,
  nextInputTimerAt,
  nextReminderAt,
  type DueInputTimers,
  type InputExpiryPolicy,
  type ReminderPolicy,
} from '../domain/input-timers.js';
import { isTerminal, NEEDS_INPUT_STATUSES, type AdcpTaskStatus, type OperationStatus } from '../domain/status.js';
import type { EventRow, Store } from '../store/index.js';
import type { Tx } from '../store/tx.js';
import type { Lease, MutateResult, MutationPlan, NewEvent, OperationPatch, OperationRow } from '../store/operations-repo.js';
import type { ChangeBus } from './change-bus.js';
import type { Clock } from './clock.js';
import type { Metrics } from './metrics.js';
import { rejectionPlan } from './rejection.js';

/** `check_kind` of a row whose only timer is the clock of the request it waits on. */
export const INPUT_TIMER_CHECK = 'input_timer';

export interface InputTimersDeps {
  store: Store;
  bus: ChangeBus;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
  reminders: ReminderPolicy;
}

type Outcome = 'ended' | 'noted' | 'idle';

/** The columns the clock of a waiting request reads. */
export type InputTimerRow = Pick<OperationRow, 'status'> &
  Partial<Pick<OperationRow, 'needs_input' | 'input_request' | 'answer' | 'reminded_at' | 'input_reminders' | 'input_expired_at'>>;

export function reminderPolicyOf(timing: { inputReminderMs?: number }): ReminderPolicy {
  return { firstAfterMs: timing.inputReminderMs ?? 300_000 };
}

/**
 * Kinds of request asked on an operation that has already ended: its task is done,
 * only the question is open (a rejected creative on the sync that sent it).
 */
const ASKED_AFTER_THE_END: ReadonlySet<InputRequestKind> = new Set(['creative_rejected']);

/** The request whose clock runs: the operation waits for a person and no answer is on its way. */
export function waitingRequest(row: InputTimerRow): InputRequest | null {
  if (row.needs_input !== 1 || !row.input_request || row.answer) return null;
  const request = JSON.parse(row.input_request) as InputRequest;
  if (isTerminal(row.status as OperationStatus) && !ASKED_AFTER_THE_END.has(request.kind)) return null;
  return request;
}

/** The latest the row's timer may be for its request's clock (its next reminder or expiry); null when nothing waits. */
export function inputTimerAt(row: InputTimerRow, policy: ReminderPolicy): number | null {
  const request = waitingRequest(row);
  return request ? nextInputTimerAt(request, row, policy) : null;
}

/**
 * The timer of an operation whose only clock is its request's: held before anything
 * was sent, or ended with a question still open (ASKED_AFTER_THE_END).
 */
export function heldTimer(request: InputRequest, policy: ReminderPolicy): Pick<OperationPatch, 'next_check_at' | 'check_kind'> {
  return { next_check_at: nextInputTimerAt(request, {}, policy), check_kind: INPUT_TIMER_CHECK };
}

/**
 * An observation that may ask a person something, with the tenant's expiry rules
 * (settings `input_expiry`) that the request it makes is stamped with. Read on
 * `trx` when the caller is inside a write transaction (one statement).
 */
export async function withInputExpiry<O extends { status: AdcpTaskStatus; inputExpiry?: InputExpiryPolicy | null }>(
  store: Store,
  operationId: string,
  obs: O,
  trx?: Tx,
): Promise<O> {
  if (!NEEDS_INPUT_STATUSES.has(obs.status) || obs.inputExpiry !== undefined) return obs;
  const settings = await store.settings.forOperation(operationId, trx);
  return { ...obs, inputExpiry: settings.input_expiry ?? null };
}

export class InputTimers {
  constructor(private readonly deps: InputTimersDeps) {}

  /** A claimed row whose only timer is its request's clock. Sends nothing, whatever the row is. */
  async run(row: OperationRow): Promise<void> {
    await this.apply(row, true);
  }

  /**
   * A claimed row with a poll timer, before it is polled: records the reminder or
   * expiry owed now (keeping the lease for the poll). Null when the expiry ended
   * the operation (or the lease was lost): there is nothing left to poll.
   */
  async noteClaimed(row: OperationRow): Promise<OperationRow | null> {
    const request = waitingRequest(row);
    if (!request || !isDue(dueInputTimers(request, row, this.deps.reminders, this.deps.clock.now()))) return row;
    const result = await this.apply(row, false);
    if (result.outcome === 'applied' || result.outcome === 'unchanged') return result.value === 'ended' ? null : result.row;
    return null;
  }

  private async apply(row: OperationRow, ownsTimer: boolean): Promise<MutateResult<Outcome>> {
    const { store, bus, clock, log } = this.deps;
    const now = clock.now();
    const result = await store.operations.mutate(row.id, leaseOf(row), (current) => this.plan(current, now, ownsTimer), now);
    if (result.outcome === 'lease_lost') log.info({ operation_id: row.id }, 'lease lost before writing; discarded');
    if (result.outcome !== 'applied') return result;
    if (result.events.length > 0) bus.publish({ operation: result.row, events: result.events, notifications: result.notifications });
    this.count(result.row, result.events);
    return result;
  }

  private plan(current: OperationRow, now: number, ownsTimer: boolean): MutationPlan<Outcome> {
    const request = waitingRequest(current);
    if (!request) {
      // Answered, canceled or moved on meanwhile: this clock has nothing left to do.
      return ownsTimer ? { patch: { next_check_at: null, check_kind: null, ...released() }, value: 'idle' } : { value: 'idle' };
    }
    const due = dueInputTimers(request, current, this.deps.reminders, now);
    if (due.expire === 'reject') {
      const { patch, events } = this.rejection(current, request, due, now);
      return { patch: { ...patch, ...released() }, events, value: 'ended' };
    }
    const patch: OperationPatch = {};
    const events: NewEvent[] = [];
    if (due.remind) {
      patch.reminded_at = now;
      patch.input_reminders = due.reminder;
      const next = nextReminderAt(request, { ...current, ...patch }, this.deps.reminders);
      events.push({
        source: 'timer',
        kind: 'reminder',
        from: current.status,
        to: current.status,
        detail: {
          kind: request.kind,
          reminder: due.reminder,
          waiting_ms: due.waitingMs,
          message: request.message,
          next_reminder_at: iso(next),
          ...(request.expires_at ? { expires_at: request.expires_at } : {}),
        },
      });
    }
    if (due.expire === 'stall') {
      const reason = `the ${describeKind(request.kind)} request expired at ${request.expires_at} unanswered: a person should look (it can still be answered)`;
      patch.input_expired_at = now;
      patch.stalled = 1;
      patch.stalled_reason = reason;
      events.push({
        source: 'timer',
        kind: 'stalled',
        from: current.status,
        to: current.status,
        detail: { reason, expired: true, kind: request.kind, expires_at: request.expires_at, waiting_ms: due.waitingMs },
      });
    }
    if (ownsTimer) {
      const next = nextInputTimerAt(request, { ...current, ...patch }, this.deps.reminders);
      Object.assign(patch, { next_check_at: Math.max(next, now + 1), check_kind: INPUT_TIMER_CHECK }, released());
    }
    return { patch: Object.keys(patch).length > 0 ? patch : undefined, events, value: events.length > 0 ? 'noted' : 'idle' };
  }

  /** Nobody answered in time and the tenant's rule says reject: ended as a person's reject would end it, by the timer. */
  private rejection(current: OperationRow, request: InputRequest, due: DueInputTimers, now: number) {
    const expiresAt = request.expires_at!;
    const recorded: RecordedAnswer = { decision: 'reject', message: 'expired', actor: 'timer', at: iso(now), kind: request.kind, expired_at: expiresAt };
    return rejectionPlan(
      current,
      recorded,
      {
        source: 'timer',
        reason: 'expired',
        error: { code: 'INPUT_EXPIRED', message: `the ${describeKind(request.kind)} request expired at ${expiresAt} unanswered; rejected by the tenant's input_expiry rule` },
        lead: { source: 'timer', kind: 'input_expired', from: current.status, to: current.status, detail: { kind: request.kind, expires_at: expiresAt, then: 'reject', waiting_ms: due.waitingMs } },
        detail: { expires_at: expiresAt },
      },
      now,
    );
  }

  private count(row: OperationRow, events: EventRow[]): void {
    const { metrics, log } = this.deps;
    for (const e of events) {
      const detail = (e.detail ? JSON.parse(e.detail) : {}) as { kind?: string; expired?: boolean };
      const kind = detail.kind ?? 'unknown';
      if (e.kind === 'reminder') metrics.inputReminder(kind);
      if (e.kind === 'transition' && e.to_status) metrics.transition(row.type, e.from_status ?? '', e.to_status, e.source);
      const expired = e.kind === 'input_expired' ? 'reject' : e.kind === 'stalled' && detail.expired ? 'stall' : null;
      if (expired) {
        metrics.inputExpired(kind, expired);
        log.info({ operation_id: row.id, kind, then: expired }, 'input request expired unanswered');
      }
    }
  }
}

function describeKind(kind: string): string {
  return kind.replace('_', ' ');
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function leaseOf(row: OperationRow): Lease {
  return { owner: row.lease_owner ?? '', epoch: row.lease_epoch };
}

function released(): OperationPatch {
  return { lease_owner: null, lease_until: null, attempt: 0 };
}
