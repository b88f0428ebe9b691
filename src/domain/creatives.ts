/**
 * Creatives of live media buys (README, Creatives): their statuses, what people
 * are told of them, and their JSON. Pure.
 *
 * A creative's `status` is the seller's review as the seller states it when asked
 * (`list_creatives`, the buy's `creative_approvals`): `processing`, `pending_review`,
 * `approved`, `rejected`, `archived` (AdCP creative status). The per-item status in a
 * `sync_creatives` reply is advisory in the spec (a UI hint, never a gate on spend):
 * it is recorded as `advisory_status` and never taken for a review.
 */

export const CREATIVE_STATUSES = ['processing', 'pending_review', 'approved', 'rejected', 'archived'] as const;
export type CreativeStatus = (typeof CREATIVE_STATUSES)[number];

/** Per-package approval states (AdCP creative approval status). */
export const APPROVAL_STATUSES = ['pending_review', 'approved', 'rejected'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export function isCreativeStatus(v: unknown): v is CreativeStatus {
  return typeof v === 'string' && (CREATIVE_STATUSES as readonly string[]).includes(v);
}

export function isApprovalStatus(v: unknown): v is ApprovalStatus {
  return typeof v === 'string' && (APPROVAL_STATUSES as readonly string[]).includes(v);
}

/** Still waiting for the seller's word: its review is tracked and its deadline counts. */
export function isUnderReview(status: string): boolean {
  return status === 'processing' || status === 'pending_review';
}

/** How the sync_creatives operation that sent it last stands. */
export type SyncState = 'sending' | 'synced' | 'failed';

/** A rejection's way to a person: owed (not yet asked on its operation), asked (in the inbox), answered. */
export type InboxState = 'owed' | 'asked' | 'answered';

/** The creative's approval on one of the buy's packages. */
export interface PackageApproval {
  package_id: string;
  status: ApprovalStatus;
  rejection_reason?: string;
}

/** The notifications about creatives, each with `data.media_buy` and the creative in `data.event.detail`. */
export const CREATIVE_NOTIFICATION_TYPES = ['creative.approved', 'creative.rejected', 'creative.stalled'] as const;
export type CreativeNotificationType = (typeof CREATIVE_NOTIFICATION_TYPES)[number];

/** The buy event a creative's change is recorded as, and the notification it raises. */
export const CREATIVE_EVENT_NOTIFICATIONS: Readonly<Record<string, CreativeNotificationType>> = {
  creative_approved: 'creative.approved',
  creative_rejected: 'creative.rejected',
  creative_stalled: 'creative.stalled',
};

/** The longest seller text kept (a rejection reason is prose for a person, not a document). */
export const REASON_MAX = 2_000;

export function trimmedReason(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return t === '' ? undefined : t.slice(0, REASON_MAX);
}

/** The columns of a creative that are shown (the store's row satisfies it). */
export interface CreativeJsonSource {
  creative_id: string;
  name: string | null;
  status: string;
  package_ids: string;
  approvals: string;
  rejection_reason: string | null;
  advisory_status: string | null;
  operation_id: string;
  sync_state: string;
  sync_error: string | null;
  sent_at: number;
  synced_at: number | null;
  review_deadline_at: number | null;
  stalled: number;
  stalled_at: number | null;
  inbox_state: string | null;
  dismissed_at: number | null;
  dismissed_by: string | null;
  decided_at: number | null;
  updated_at: number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A creative as `GET /v1/media-buys/:id` shows it in `creatives`. */
export function presentCreative(c: CreativeJsonSource) {
  return {
    creative_id: c.creative_id,
    name: c.name,
    status: c.status as CreativeStatus,
    package_ids: JSON.parse(c.package_ids) as string[],
    ...(c.rejection_reason !== null ? { rejection_reason: c.rejection_reason } : {}),
    // Per package, as the buy's creative_approvals say (empty until the seller lists them).
    approvals: JSON.parse(c.approvals) as PackageApproval[],
    // The review's deadline (ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS after the send); past it, stalled.
    review_deadline_at: isUnderReview(c.status) ? iso(c.review_deadline_at) : null,
    stalled: c.stalled === 1,
    ...(c.stalled === 1 ? { stalled_at: iso(c.stalled_at) } : {}),
    // The send that carried it: its operation, how it went, and what its reply said (advisory only).
    sync: {
      operation_id: c.operation_id,
      state: c.sync_state as SyncState,
      advisory_status: c.advisory_status,
      ...(c.sync_error !== null ? { error: JSON.parse(c.sync_error) as unknown } : {}),
      sent_at: iso(c.sent_at),
      synced_at: iso(c.synced_at),
    },
    // A rejection waiting for a person (`asked`: on its sync_creatives operation in the inbox) or answered.
    inbox: c.inbox_state as InboxState | null,
    ...(c.dismissed_at !== null ? { dismissed: { at: iso(c.dismissed_at), by: c.dismissed_by } } : {}),
    decided_at: iso(c.decided_at),
    updated_at: iso(c.updated_at),
  };
}

export type CreativeJson = ReturnType<typeof presentCreative>;
