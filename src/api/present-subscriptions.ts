/** Subscriptions and deliveries as the API shows them. Neither the secret nor the sealed URL ever passes through here. */
import type { AttemptRow, DeliveryRow } from '../store/subscription-deliveries-repo.js';
import type { SubscriptionRow } from '../store/subscriptions-repo.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export function presentSubscription(s: SubscriptionRow) {
  return {
    id: s.id,
    url: s.url_display,
    events: s.events === null ? null : (JSON.parse(s.events) as string[]),
    format: s.format,
    status: s.disabled_at === null ? ('active' as const) : ('disabled' as const),
    disabled_at: iso(s.disabled_at),
    disabled_reason: s.disabled_reason,
    created_at: iso(s.created_at),
    created_by: s.created_by,
  };
}

export function presentAttempt(a: AttemptRow) {
  return {
    attempt: a.attempt,
    at: iso(a.started_at),
    duration_ms: a.duration_ms,
    http_status: a.http_status,
    error: a.error,
    outcome: a.outcome,
    next_attempt_at: iso(a.next_attempt_at),
    sent_by: a.sent_by,
  };
}

export function presentDelivery(d: DeliveryRow, attempts: AttemptRow[]) {
  return {
    id: d.id,
    subscription_id: d.subscription_id,
    notification_id: d.notification_id,
    type: d.type,
    operation_id: d.operation_id,
    status: d.status,
    attempt_count: d.attempt_count,
    last_status: d.last_status,
    last_error: d.last_error,
    next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
    created_at: iso(d.created_at),
    updated_at: iso(d.updated_at),
    delivered_at: iso(d.delivered_at),
    redelivered_at: iso(d.redelivered_at),
    redelivered_by: d.redelivered_by,
    attempts: attempts.map(presentAttempt),
  };
}
