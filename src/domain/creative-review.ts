/**
 * Following a creative's review at the seller (README, Creatives): what the
 * seller's answers say of each creative, what that changes, when a review has
 * waited too long, and when to look again. Pure; the engine writes what these
 * decide, in the transaction that holds the buy's row lock.
 *
 * The seller speaks of a creative in two places: `list_creatives` (its status in
 * the seller's library) and `get_media_buys` (the buy's per-package
 * `creative_approvals`, with a `rejection_reason`). A rejection on any of the
 * buy's packages is a rejection for the buy; an approval needs the library's word
 * or every listed package's. A sync_creatives reply's per-item status is only
 * advisory (the spec: never a gate on spend) and is never an input here.
 */
import { isApprovalStatus, isCreativeStatus, isUnderReview, trimmedReason, type CreativeStatus, type InboxState, type PackageApproval } from './creatives.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface CreativePolicy {
  /** ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: how often reviews are looked at. */
  pollIntervalMs: number;
  /** ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS: a review waiting longer is stalled (the seed's 48 h). */
  approvalTimeoutMs: number;
}

/** The parts of a creative these rules read. */
export interface TrackedCreative {
  creative_id: string;
  name: string | null;
  status: string;
  approvals: PackageApproval[];
  package_ids: string[];
  rejection_reason: string | null;
  operation_id: string;
  sync_state: string;
  sent_at: number;
  /** When its send was seen to end; null while it is being sent. */
  synced_at: number | null;
  review_deadline_at: number | null;
  stalled: number;
  inbox_state: string | null;
  decided_at: number | null;
}

/** What the seller said of one creative in one answer. */
export interface CreativeObservation {
  creative_id: string;
  /** Its library status (list_creatives). */
  status?: CreativeStatus;
  /** Its approvals on this buy's packages (get_media_buys creative_approvals). */
  approvals?: PackageApproval[];
  /** The seller's updated_date, epoch ms. */
  updated_at?: number;
}

/** Columns to write for one creative, and the buy events that record it. */
export interface CreativeChange {
  patch: {
    status?: string;
    approvals?: string;
    rejection_reason?: string | null;
    seller_updated_at?: number;
    decided_at?: number | null;
    stalled?: number;
    stalled_at?: number | null;
    inbox_state?: InboxState | null;
    dismissed_at?: null;
    dismissed_by?: null;
  };
  events: Array<{ source: string; kind: string; detail: Json }>;
}

/** A rejection with no reason given still says where it came from. */
export const NO_REASON = 'rejected by the seller (no reason given)';

/** `list_creatives`: the creatives it lists, and its next page's cursor. */
export function readListCreatives(data: Json): { ok: true; items: CreativeObservation[]; cursor?: string } | { ok: false; message: string } {
  if (!Array.isArray(data.creatives)) return { ok: false, message: 'list_creatives answered without a creatives array' };
  const items: CreativeObservation[] = [];
  for (const c of data.creatives) {
    if (!isObject(c) || typeof c.creative_id !== 'string' || !isCreativeStatus(c.status)) continue;
    const updated = typeof c.updated_date === 'string' ? Date.parse(c.updated_date) : NaN;
    items.push({ creative_id: c.creative_id, status: c.status, ...(Number.isFinite(updated) ? { updated_at: updated } : {}) });
  }
  const page = isObject(data.pagination) ? data.pagination : {};
  return { ok: true, items, ...(page.has_more === true && typeof page.cursor === 'string' ? { cursor: page.cursor } : {}) };
}

/** The buy's `creative_approvals`, per creative, from its row in a `get_media_buys` answer. */
export function approvalsOfBuy(sellerBuy: Json): Map<string, PackageApproval[]> {
  const out = new Map<string, PackageApproval[]>();
  const packages = Array.isArray(sellerBuy.packages) ? sellerBuy.packages : [];
  for (const p of packages) {
    if (!isObject(p) || typeof p.package_id !== 'string' || !Array.isArray(p.creative_approvals)) continue;
    for (const a of p.creative_approvals) {
      if (!isObject(a) || typeof a.creative_id !== 'string' || !isApprovalStatus(a.approval_status)) continue;
      const reason = a.approval_status === 'rejected' ? trimmedReason(a.rejection_reason) : undefined;
      const list = out.get(a.creative_id) ?? [];
      list.push({ package_id: p.package_id, status: a.approval_status, ...(reason ? { rejection_reason: reason } : {}) });
      out.set(a.creative_id, list);
    }
  }
  return out;
}

/** One item of a sync_creatives reply, as far as it concerns us. */
export interface SyncItem {
  action?: string;
  /** Advisory: recorded, never taken for a review. */
  advisory_status?: string;
  /** The item failed at the seller (`action: failed`): its errors, for the person correcting it. */
  errors?: Array<{ code?: string; message?: string }>;
  assigned_to?: string[];
  assignment_errors?: Json;
}

export function readSyncReply(data: Json): Map<string, SyncItem> {
  const out = new Map<string, SyncItem>();
  for (const c of Array.isArray(data.creatives) ? data.creatives : []) {
    if (!isObject(c) || typeof c.creative_id !== 'string') continue;
    const errors = Array.isArray(c.errors) ? c.errors.filter(isObject).map((e) => ({ ...(typeof e.code === 'string' ? { code: e.code } : {}), ...(typeof e.message === 'string' ? { message: e.message.slice(0, 500) } : {}) })) : undefined;
    out.set(c.creative_id, {
      ...(typeof c.action === 'string' ? { action: c.action } : {}),
      ...(isCreativeStatus(c.status) ? { advisory_status: c.status } : {}),
      ...(errors && errors.length > 0 ? { errors } : {}),
      ...(Array.isArray(c.assigned_to) ? { assigned_to: c.assigned_to.filter((p): p is string => typeof p === 'string') } : {}),
      ...(isObject(c.assignment_errors) ? { assignment_errors: c.assignment_errors } : {}),
    });
  }
  return out;
}

/** The merged approvals: each package's newest word replaces its last. */
function mergeApprovals(before: PackageApproval[], seen: PackageApproval[]): PackageApproval[] {
  const byPackage = new Map(before.map((a) => [a.package_id, a]));
  for (const a of seen) byPackage.set(a.package_id, a);
  return [...byPackage.values()].sort((a, b) => (a.package_id < b.package_id ? -1 : a.package_id > b.package_id ? 1 : 0));
}

const sameApprovals = (a: PackageApproval[], b: PackageApproval[]) => JSON.stringify(a) === JSON.stringify(b);

/** The creative's facts people see in a buy event (and its notification). */
export function creativeFacts(c: Pick<TrackedCreative, 'creative_id' | 'name' | 'package_ids' | 'operation_id'>, extra: Json = {}): Json {
  return { creative_id: c.creative_id, name: c.name, package_ids: c.package_ids, operation_id: c.operation_id, ...extra };
}

/**
 * What an observation changes. Only an answer asked for after the creative's send
 * was seen to end speaks of this version: one asked while it was being sent, or
 * before (`readStartedAt` < `synced_at`), may speak of the version before (a
 * correction's own rejected predecessor), and changes nothing; so does one about a
 * creative whose send failed (the seller never took it).
 */
export function observe(c: TrackedCreative, obs: CreativeObservation, readStartedAt: number, source: string, now: number): CreativeChange | null {
  if (c.sync_state !== 'synced' || c.synced_at === null || c.synced_at > readStartedAt) return null;
  const approvals = obs.approvals ? mergeApprovals(c.approvals, obs.approvals) : c.approvals;
  const packageRejection = obs.approvals ? approvals.find((a) => a.status === 'rejected') : undefined;
  let status: string = c.status;
  let reason: string | null = c.rejection_reason;
  if (packageRejection || obs.status === 'rejected') {
    status = 'rejected';
    reason = packageRejection?.rejection_reason ?? approvals.find((a) => a.status === 'rejected')?.rejection_reason ?? c.rejection_reason ?? NO_REASON;
  } else if (obs.status) {
    status = obs.status;
  } else if (obs.approvals && approvals.length > 0 && approvals.every((a) => a.status === 'approved')) {
    status = 'approved';
  } else if (obs.approvals && approvals.length > 0 && c.status === 'processing') {
    status = 'pending_review';
  }
  if (status !== 'rejected') reason = null;

  const patch: CreativeChange['patch'] = {};
  const events: CreativeChange['events'] = [];
  if (!sameApprovals(approvals, c.approvals)) patch.approvals = JSON.stringify(approvals);
  if (obs.updated_at !== undefined) patch.seller_updated_at = obs.updated_at;
  if (reason !== c.rejection_reason) patch.rejection_reason = reason;
  if (status === 'rejected' && c.status === 'rejected' && reason !== c.rejection_reason) {
    // Still rejected, for a reason now given (or changed): a person already asked is asked again with it.
    if (c.inbox_state === 'asked') patch.inbox_state = 'owed';
    events.push({ source, kind: 'creative_rejection_updated', detail: creativeFacts(c, { status, rejection_reason: reason, previous_reason: c.rejection_reason }) });
  }
  if (status !== c.status) {
    patch.status = status;
    // A review that ends (or starts again) is no longer stalled.
    if (c.stalled === 1) Object.assign(patch, { stalled: 0, stalled_at: null });
    const facts = creativeFacts(c, { status, from: c.status });
    if (status === 'approved') {
      patch.decided_at = now;
      events.push({ source, kind: 'creative_approved', detail: facts });
    } else if (status === 'rejected') {
      patch.decided_at = now;
      // A new rejection is owed to a person until it is asked on its operation (creative-inbox.ts).
      Object.assign(patch, { inbox_state: 'owed', dismissed_at: null, dismissed_by: null });
      events.push({ source, kind: 'creative_rejected', detail: { ...facts, rejection_reason: reason } });
    } else {
      patch.decided_at = isUnderReview(status) ? null : (c.decided_at ?? now);
      // A rejection the seller reviews again no longer waits for a person.
      if (c.inbox_state === 'owed') patch.inbox_state = null;
      events.push({ source, kind: 'creative_status_changed', detail: facts });
    }
  }
  return Object.keys(patch).length === 0 ? null : { patch, events };
}

/** A review past its deadline is stalled, once; people are told. Reviewing goes on at the usual pace. */
export function stallIfDue(c: TrackedCreative, now: number): CreativeChange | null {
  if (!isUnderReview(c.status) || c.sync_state === 'failed' || c.stalled === 1) return null;
  if (c.review_deadline_at === null || c.review_deadline_at > now) return null;
  return {
    patch: { stalled: 1, stalled_at: now },
    events: [{ source: 'timer', kind: 'creative_stalled', detail: creativeFacts(c, { status: c.status, waited_ms: now - c.sent_at, deadline: new Date(c.review_deadline_at).toISOString() }) }],
  };
}

/**
 * When to look at the buy's creatives again: every poll interval (jittered up to a
 * tenth, so buys synced together spread out) while one is under review or a
 * rejection is still owed to a person, and no later than the earliest deadline of
 * a review not yet stalled; null when nothing is left to follow.
 */
export function nextCreativeCheck(creatives: TrackedCreative[], policy: CreativePolicy, now: number, random: () => number): number | null {
  const followed = creatives.filter((c) => c.sync_state !== 'failed' && isUnderReview(c.status));
  const owed = creatives.some((c) => c.inbox_state === 'owed');
  if (followed.length === 0 && !owed) return null;
  let next = now + policy.pollIntervalMs + Math.round(policy.pollIntervalMs * 0.1 * random());
  for (const c of followed) if (c.stalled === 0 && c.review_deadline_at !== null) next = Math.min(next, Math.max(now, c.review_deadline_at));
  return next;
}
