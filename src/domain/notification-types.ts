/**
 * Which changes people are told about (docs/ARCHITECTURE.md, Telling users): the pure mapping from an
 * event in an operation's history to the notification type it raises, if any.
 *
 * Most events are bookkeeping (a resend, a failed poll, progress while `working`)
 * and raise nothing. A status change raises one when the new status is one a
 * person acts on or waits for; `auth-required` counts as input required (the
 * seller waits on the buyer either way; see docs/ARCHITECTURE.md, People in the loop). A task-id conflict is reported as
 * a conflict like a second, different terminal status: both need a person.
 */
import { CREATIVE_NOTIFICATION_TYPES } from './creatives.js';
import { MEDIA_BUY_NOTIFICATION_TYPES } from './media-buy-status.js';

export const NOTIFICATION_TYPES = [
  'operation.created',
  'operation.submitted',
  'operation.input_required',
  'operation.answered',
  'operation.completed',
  'operation.failed',
  'operation.rejected',
  'operation.canceled',
  'operation.stalled',
  'operation.conflict',
  'campaign.completed',
  // Raised by a media buy's own events (src/domain/media-buy-status.ts), not an operation's.
  ...MEDIA_BUY_NOTIFICATION_TYPES,
  // Raised by a buy's events about its creatives' reviews (src/domain/creatives.ts), with `data.media_buy`.
  ...CREATIVE_NOTIFICATION_TYPES,
] as const;

export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export function isNotificationType(value: unknown): value is NotificationType {
  return typeof value === 'string' && (NOTIFICATION_TYPES as readonly string[]).includes(value);
}

/** The parts of an event the mapping looks at. */
export interface EventFacts {
  kind: string;
  to_status: string | null;
}

const ON_TRANSITION_TO: Readonly<Record<string, NotificationType>> = {
  submitted: 'operation.submitted',
  'input-required': 'operation.input_required',
  'auth-required': 'operation.input_required',
  completed: 'operation.completed',
  failed: 'operation.failed',
  rejected: 'operation.rejected',
  canceled: 'operation.canceled',
};

const ON_KIND: Readonly<Record<string, NotificationType>> = {
  created: 'operation.created',
  // An operation adopted from the seller's task list is new to us and to people.
  adopted: 'operation.created',
  answered: 'operation.answered',
  stalled: 'operation.stalled',
  deadline_passed: 'operation.stalled',
  conflict: 'operation.conflict',
  task_conflict: 'operation.conflict',
  // Still waiting for a person: told again, flagged as a reminder (see notification-body.ts).
  reminder: 'operation.input_required',
  // A person is asked without a status change: a buy held for spend approval (still `requested`),
  // a seller that asks again after an answer, an answer the seller refused on its continuation.
  input_requested: 'operation.input_required',
  continuation_refused: 'operation.input_required',
};

export function notificationTypeFor(event: EventFacts): NotificationType | null {
  if (event.kind === 'transition') return (event.to_status && ON_TRANSITION_TO[event.to_status]) || null;
  return ON_KIND[event.kind] ?? null;
}
