/**
 * What ending an operation `rejected` writes, whoever rejects it: a person's
 * `reject` (src/engine/answer-service.ts) or the tenant's expiry rule when a
 * request was left unanswered (src/engine/input-timers.ts). One plan, so an
 * expired request ends exactly as a rejected one does: nothing more is sent, and
 * a seller that had the request is recorded as not told.
 */
import type { RecordedAnswer } from '../domain/input-request.js';
import type { NewEvent, OperationPatch, OperationRow } from '../store/operations-repo.js';

export const SELLER_NOT_TOLD =
  'AdCP has no call to cancel a pending task (update_media_buy needs a media buy, and none was made), so the seller was not told: ' +
  "its task stays waiting on its side until it expires; nothing was bought";

/** The columns of an operation that ends here, locally, waiting for nothing. */
export function ended(status: 'rejected' | 'canceled', now: number): OperationPatch {
  return {
    status,
    status_since: now,
    completed_at: now,
    needs_input: 0,
    input_request: null,
    input_message: null,
    continuation: null,
    next_check_at: null,
    check_kind: null,
    stalled: 0,
    stalled_reason: null,
  };
}

export interface Rejection {
  /** `user` for a person's answer, `timer` for an expiry. */
  source: 'user' | 'timer';
  /** Why, as the transition's `detail.reason` shows it. */
  reason: string;
  /** The stored error: code and message. */
  error: { code: string; message: string };
  /** Said before the transition: what led to it (the answer, or the expiry). */
  lead: NewEvent;
  /** More of the transition's detail. */
  detail?: Record<string, unknown>;
}

export function rejectionPlan(current: OperationRow, recorded: RecordedAnswer, rejection: Rejection, now: number): { patch: OperationPatch; events: NewEvent[] } {
  const { source } = rejection;
  const actor = source === 'user' ? recorded.actor : undefined;
  const events: NewEvent[] = [
    rejection.lead,
    { source, kind: 'transition', from: current.status, to: 'rejected', actor, detail: { reason: rejection.reason, ...rejection.detail } },
  ];
  // A buy held before sending never reached the seller; a seller's question did.
  if (current.status !== 'requested') {
    events.push({ source, kind: 'seller_not_told', from: 'rejected', to: 'rejected', detail: { reason: SELLER_NOT_TOLD } });
  }
  return {
    patch: { ...ended('rejected', now), error: JSON.stringify(rejection.error), answer: JSON.stringify(recorded) },
    events,
  };
}
