/** The mapping from events to notification types (docs/ARCHITECTURE.md, Telling users), and the body a notification carries. */
import { describe, expect, it } from 'vitest';
import { notificationBody } from '../../../src/domain/notification-body.js';
import { NOTIFICATION_TYPES, notificationTypeFor, type NotificationType } from '../../../src/domain/notification-types.js';
import { presentOperation } from '../../../src/domain/operation-json.js';
import { OPERATION_STATUSES, type OperationStatus } from '../../../src/domain/status.js';
import { buyNotificationFor, MEDIA_BUY_NOTIFICATION_TYPES } from '../../../src/domain/media-buy-status.js';
import { CREATIVE_NOTIFICATION_TYPES } from '../../../src/domain/creatives.js';
import { newOperationRow } from '../../../src/store/operation-row.js';

/** What a transition to each status raises: every status is listed, so a new one must be decided here. */
const ON_TRANSITION: Record<OperationStatus, NotificationType | null> = {
  requested: null,
  calling_adcp: null,
  submitted: 'operation.submitted',
  working: null,
  'input-required': 'operation.input_required',
  'auth-required': 'operation.input_required',
  completed: 'operation.completed',
  failed: 'operation.failed',
  canceled: 'operation.canceled',
  rejected: 'operation.rejected',
  unknown: null,
};

/** Every event kind the code writes besides `transition`, with what it raises. */
const ON_KIND: Record<string, NotificationType | null> = {
  created: 'operation.created',
  adopted: 'operation.created',
  answered: 'operation.answered',
  stalled: 'operation.stalled',
  deadline_passed: 'operation.stalled',
  conflict: 'operation.conflict',
  task_conflict: 'operation.conflict',
  reminder: 'operation.input_required',
  resend: null,
  send_failed: null,
  poll_failed: null,
  illegal_transition: null,
  missing_from_server: null,
  // The original of a media buy canceled at the seller: the child update_media_buy reports the outcome.
  cancel_requested: null,
};

describe('notificationTypeFor', () => {
  it.each(OPERATION_STATUSES.map((s) => [s, ON_TRANSITION[s]] as const))('a transition to %s raises %s', (to, expected) => {
    expect(notificationTypeFor({ kind: 'transition', to_status: to })).toBe(expected);
  });

  it.each(Object.entries(ON_KIND))('an event of kind %s raises %s, whatever its statuses', (kind, expected) => {
    for (const to of [null, ...OPERATION_STATUSES]) expect(notificationTypeFor({ kind, to_status: to })).toBe(expected);
  });

  it('raises nothing for a transition without a target or an unknown kind', () => {
    expect(notificationTypeFor({ kind: 'transition', to_status: null })).toBeNull();
    expect(notificationTypeFor({ kind: 'something_new', to_status: 'completed' })).toBeNull();
  });

  it('every operation type but campaign.completed (written by campaigns code) is reachable from an event', () => {
    const reachable = new Set([...Object.values(ON_TRANSITION), ...Object.values(ON_KIND)].filter((t) => t !== null));
    expect(NOTIFICATION_TYPES.filter((t) => !reachable.has(t) && !t.startsWith('media_buy.') && !t.startsWith('creative.'))).toEqual(['campaign.completed']);
  });

  it("every creative type is reachable from one of a buy's creative events, and its bookkeeping raises nothing", () => {
    const reachable = new Set(['creative_approved', 'creative_rejected', 'creative_stalled'].map((kind) => buyNotificationFor({ kind, from_status: null, to_status: null })));
    expect(CREATIVE_NOTIFICATION_TYPES.filter((t) => !reachable.has(t))).toEqual([]);
    expect(NOTIFICATION_TYPES).toEqual(expect.arrayContaining([...CREATIVE_NOTIFICATION_TYPES]));
    for (const kind of ['creatives_sent', 'creative_status_changed', 'creative_rejection_updated', 'creative_rejection_answered', 'creative_not_sent', 'creative_assignment_failed']) {
      expect(buyNotificationFor({ kind, from_status: null, to_status: null })).toBeNull();
    }
  });

  it("every media_buy type is reachable from one of a buy's own events", () => {
    const events = [
      { kind: 'created', from_status: null, to_status: 'pending_start' },
      ...['pending_creatives', 'active', 'paused', 'completed', 'canceled', 'rejected'].map((to) => ({ kind: 'status_changed', from_status: 'pending_start', to_status: to })),
      { kind: 'status_changed', from_status: 'paused', to_status: 'active' },
      { kind: 'pacing_alert', from_status: null, to_status: null, detail: { state: 'under' } },
      { kind: 'pacing_alert', from_status: null, to_status: null, detail: { state: 'over' } },
      { kind: 'report_missing', from_status: null, to_status: null },
      { kind: 'governance_findings', from_status: null, to_status: null },
      { kind: 'status_unreadable', from_status: null, to_status: null },
      { kind: 'status_readable', from_status: null, to_status: null },
    ];
    const reachable = new Set(events.map((e) => buyNotificationFor(e)));
    expect(MEDIA_BUY_NOTIFICATION_TYPES.filter((t) => !reachable.has(t))).toEqual([]);
    // Bookkeeping raises nothing: a report received, a read, a pacing change that is no crossing.
    for (const kind of ['report_received', 'report_refused', 'report_unmatched', 'pacing_changed', 'refresh_requested', 'update_confirmed', 'delivery_unreadable', 'read_failed']) {
      expect(buyNotificationFor({ kind, from_status: null, to_status: null })).toBeNull();
    }
  });
});

describe('notificationBody', () => {
  const secret = 'hmac-secret-that-must-never-appear-0123456789';
  const row = newOperationRow(
    {
      id: 'op-1',
      tenant_id: 't-1',
      agent_id: 'a-1',
      type: 'create_media_buy',
      idempotency_key: 'k'.repeat(16),
      request_body: JSON.stringify({ brand: { domain: 'x.example' }, push_notification_config: { url: 'https://o/webhooks/adcp/tok', authentication: { schemes: ['HMAC-SHA256'], credentials: secret } } }),
      created_at: 1_700_000_000_000,
    },
    { status: 'input-required', needs_input: 1, input_message: 'approve the budget', webhook_mode: 'hmac', webhook_secret_enc: 'sealed:' + secret },
  );
  const event = { id: 7, at: 1_700_000_001_000, source: 'webhook', kind: 'transition', from_status: 'submitted', to_status: 'input-required', detail: JSON.stringify({ message: 'approve the budget', reason: 'over limit', estimated_time: '2 h' }), actor: null };

  it('carries the operation JSON without events, the event, and for input required the message, reason, estimated time and link', () => {
    const body = notificationBody(
      { id: 'ntf_x', type: 'operation.input_required', tenantId: 't-1', createdAt: event.at, operation: presentOperation(row), event, publicUrl: 'https://orch.example' },
      row,
    );
    expect(body).toEqual({
      id: 'ntf_x',
      type: 'operation.input_required',
      created_at: '2023-11-14T22:13:21.000Z',
      tenant_id: 't-1',
      data: {
        operation: presentOperation(row),
        event: { id: 7, at: '2023-11-14T22:13:21.000Z', source: 'webhook', kind: 'transition', from: 'submitted', to: 'input-required', detail: { message: 'approve the budget', reason: 'over limit', estimated_time: '2 h' }, actor: null },
        message: 'approve the budget',
        reason: 'over limit',
        estimated_time: '2 h',
        link: 'https://orch.example/operations/op-1',
      },
    });
    expect(body.data.operation).not.toHaveProperty('events');
    expect(JSON.stringify(body)).not.toContain(secret);
  });

  it('marks a reminder, falls back to the stored input message, and links nowhere without a public URL', () => {
    const reminder = { ...event, kind: 'reminder', from_status: 'input-required', detail: JSON.stringify({ waiting_ms: 300_000 }) };
    const body = notificationBody({ id: 'ntf_y', type: 'operation.input_required', tenantId: 't-1', createdAt: reminder.at, operation: presentOperation(row), event: reminder }, row);
    expect(body.data).toMatchObject({ message: 'approve the budget', reminder: true });
    expect(body.data).not.toHaveProperty('link');
    expect(body.data).not.toHaveProperty('reason');
  });

  it('names the media buy of a completed create_media_buy', () => {
    const done = { ...row, status: 'completed', needs_input: 0, result: JSON.stringify({ media_buy_id: 'mb_42', packages: [] }) };
    const completed = { ...event, to_status: 'completed', detail: null };
    const body = notificationBody({ id: 'ntf_z', type: 'operation.completed', tenantId: 't-1', createdAt: completed.at, operation: presentOperation(done), event: completed }, done);
    expect(body.data).toMatchObject({ media_buy_id: 'mb_42' });
    expect(body.data.operation).toMatchObject({ status: 'completed', result: { media_buy_id: 'mb_42' } });
  });
});
