/**
 * The live media buys' tables (migration 018) as Kysely sees them, in the same
 * conventions as schema.ts: times in epoch milliseconds, booleans 0/1, JSON as text.
 */
import type { Generated } from 'kysely';

/** A live media buy (migration 018): see src/store/media-buys-repo.ts. */
export interface MediaBuysTable {
  /** `buy_` + UUIDv7: our id, not the seller's. */
  id: string;
  tenant_id: string;
  agent_id: string;
  /** The create_media_buy operation that made it. */
  operation_id: string;
  /** The seller's id. */
  media_buy_id: string;
  campaign_id: string | null;
  /** JSON of the create request's `account`, named again in the seller's reads of the buy. */
  account: string | null;
  /** JSON {agent_id, plan_id} of a governed buy. */
  governance: string | null;
  /** The approval's governance_context, sealed: sent with each delivery outcome. */
  governance_context_enc: string | null;
  status: string;
  revision: number | null;
  /** JSON array of the actions the seller allows now. */
  valid_actions: string | null;
  flight_start: number | null;
  flight_end: number | null;
  budget_amount: number | null;
  currency: string | null;
  /** JSON array of PackageState (src/domain/media-buy-delivery.ts). */
  packages: string;
  impressions: number;
  spend: number;
  clicks: number | null;
  delivered_through: number | null;
  /** webhook | poll: where the delivery figures last came from. */
  delivery_source: string | null;
  delivery_updated_at: number | null;
  pacing_state: string;
  pacing_ratio: number | null;
  pacing_expected: number | null;
  report_frequency: string | null;
  reports_received: number;
  last_sequence: number | null;
  next_expected_at: number | null;
  reports_missing: number;
  gap_open: number;
  final_received: number;
  reporting_token: string | null;
  /** The reporting webhook's secret as sealed in the stored request (a SecretBox seal of its JSON). */
  reporting_secret_enc: string | null;
  /** hmac | bearer | rfc9421 | none (the caller's own webhook: we poll). */
  reporting_auth: string;
  next_check_at: number | null;
  status_check_at: number | null;
  report_due_at: number | null;
  delivery_poll_at: number | null;
  /** Look at its creatives' reviews (migration 020); null while none is under review. */
  creative_check_at: number | null;
  /** Since when the seller no longer answers for it (migration 021; src/domain/media-buy-unreadable.ts); null while it does. */
  unreadable_since: number | null;
  /** Why: no row for it in the seller's answer, or the error the seller gave. */
  unreadable_reason: string | null;
  lease_owner: string | null;
  lease_until: number | null;
  lease_epoch: number;
  attempt: number;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

export interface MediaBuyEventsTable {
  id: Generated<number>;
  buy_id: string;
  tenant_id: string;
  at: number;
  /** webhook | poll | call | user | timer */
  source: string;
  kind: string;
  from_status: string | null;
  to_status: string | null;
  detail: string | null;
  actor: string | null;
}

export interface MediaBuyReportsTable {
  id: string;
  buy_id: string;
  tenant_id: string;
  source: string;
  /** period | snapshot (src/domain/report-ledger.ts). */
  kind: string;
  notification_type: string | null;
  sequence_number: number | null;
  period_start: number;
  period_end: number;
  impressions: number;
  spend: number;
  clicks: number | null;
  currency: string | null;
  /** JSON array of PackageFigures. */
  by_package: string;
  status: string | null;
  is_adjusted: number;
  dedupe_key: string;
  superseded_by: string | null;
  fire_id: string | null;
  received_at: number;
}

export interface MediaBuyOutcomesTable {
  id: string;
  buy_id: string;
  tenant_id: string;
  report_id: string;
  governance_agent_id: string;
  /** The report_plan_outcome arguments, governance_context sealed in place. */
  request: string;
  status: 'pending' | 'accepted' | 'findings' | 'refused';
  outcome_id: string | null;
  findings: string | null;
  error: string | null;
  next_attempt_at: number | null;
  attempt: number;
  lease_owner: string | null;
  lease_until: number | null;
  lease_epoch: number;
  created_at: number;
  reported_at: number | null;
}

export interface ReportingFiresTable {
  id: string;
  sender: string;
  idempotency_key: string;
  fingerprint: string;
  buy_id: string;
  state: 'received' | 'applied';
  outcome: string | null;
  payload: string;
  received_at: number;
  applied_at: number | null;
}

/** A creative sent to a buy's seller (migration 020): see src/store/creatives-repo.ts. */
export interface MediaBuyCreativesTable {
  buy_id: string;
  creative_id: string;
  tenant_id: string;
  name: string | null;
  /** processing | pending_review | approved | rejected | archived, as the seller says (src/domain/creatives.ts). */
  status: string;
  /** JSON array of package ids. */
  package_ids: string;
  /** JSON array of PackageApproval. */
  approvals: string;
  rejection_reason: string | null;
  /** The sync_creatives reply's per-item status: advisory, never a review. */
  advisory_status: string | null;
  /** The sync_creatives operation that sent it last. */
  operation_id: string;
  /** sending | synced | failed. */
  sync_state: string;
  /** JSON {code, message} when the send failed (the operation, or this item). */
  sync_error: string | null;
  sent_at: number;
  /** When the sync_creatives that sent it was seen to end (null while it is being sent). */
  synced_at: number | null;
  review_deadline_at: number | null;
  stalled: number;
  stalled_at: number | null;
  /** null | owed | asked | answered: a rejection's way to a person. */
  inbox_state: string | null;
  dismissed_at: number | null;
  dismissed_by: string | null;
  seller_updated_at: number | null;
  decided_at: number | null;
  created_at: number;
  updated_at: number;
}
