/**
 * Table shapes as Kysely sees them. Both dialects store the same columns:
 * times are epoch milliseconds (BIGINT), booleans are 0/1 integers and JSON is
 * text, so that a row reads back identically from SQLite and PostgreSQL and the
 * exact request bytes we sent can be resent after a crash.
 */
import type { Generated } from 'kysely';
import type { MediaBuyCreativesTable, MediaBuyEventsTable, MediaBuyOutcomesTable, MediaBuyReportsTable, MediaBuysTable, ReportingFiresTable } from './schema-media-buys.js';

export type { MediaBuyCreativesTable, MediaBuyEventsTable, MediaBuyOutcomesTable, MediaBuyReportsTable, MediaBuysTable, ReportingFiresTable } from './schema-media-buys.js';

export interface TenantsTable {
  id: string;
  name: string;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  /** SHA-256 of the whole key; keys are 256-bit random, so a plain hash cannot be brute-forced. */
  key_hash: string;
  /** The first characters, to tell keys apart in listings. */
  prefix: string;
  /** Unique in its tenant: the actor recorded in the events the key causes. */
  name: string;
  /** viewer | operator | approver | admin (src/domain/roles.ts). */
  role: string;
  created_at: number;
}

export interface AgentsTable {
  id: string;
  tenant_id: string;
  name: string;
  role: string;
  url: string;
  protocol: string;
  /** Bearer token, AES-256-GCM encrypted with ADCP_ORCH_SECRET_KEY. */
  auth_token_enc: string | null;
  /** JSON {jwks?, jwks_uri?, brand_json_url?}: public material, not secret. */
  webhook_signing: string | null;
  created_at: number;
  /** JSON of what it declared (src/adcp/capabilities.ts), null when none or none we trust. */
  capabilities?: string | null;
  /** When we last asked it (epoch ms); null: never. */
  capabilities_fetched_at?: number | null;
  /** Why its declaration was refused, or could not be read; null when it was taken. */
  capabilities_error?: string | null;
  /** The AdCP version we speak with it (src/adcp/dialect.ts); null: never asked, spoken to as 3.0. */
  adcp_version?: string | null;
  /** A governance agent's credentials for sellers (sync_governance `authentication`), sealed like auth_token_enc. */
  seller_credentials_enc?: string | null;
}

/** What sync_governance registered at a governance-aware seller, per account (migration 024). */
export interface GovernanceSyncsTable {
  seller_agent_id: string;
  /** The account reference, canonical JSON. */
  account_key: string;
  tenant_id: string;
  governance_agent_id: string;
  governance_url: string;
  /** Keyed digest of the URL and credentials sent (no secret). */
  fingerprint: string;
  idempotency_key: string;
  operation_id: string;
  synced_at: number;
}

export interface OperationsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  type: string;
  status: string;
  task_id: string | null;
  context_id: string | null;
  idempotency_key: string;
  /** The exact JSON text sent to the agent (resent byte for byte after an ambiguous send). */
  request_body: string;
  result: string | null;
  error: string | null;
  needs_input: number;
  input_message: string | null;
  stalled: number;
  stalled_reason: string | null;
  deadline_at: number | null;
  /** The durable timer: when the scheduler should next look at this operation. */
  next_check_at: number | null;
  /** What to do when the timer fires: send | poll. */
  check_kind: string | null;
  poll_count: number;
  attempt: number;
  lease_owner: string | null;
  lease_until: number | null;
  lease_epoch: number;
  webhook_mode: string;
  webhook_token: string | null;
  webhook_secret_enc: string | null;
  /** The newest sender `timestamp` applied, to drop stale out-of-order reports. */
  last_observed_at: number | null;
  /** When the current status began (for per-status timeouts and durations). */
  status_since?: number | null;
  /** When a person was last reminded of an input-required wait. */
  reminded_at?: number | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  parent_id: string | null;
  /** JSON InputRequest (src/domain/input-request.ts) while a person is asked something. */
  input_request?: string | null;
  /** JSON {a2a_task_id, a2a_context_id, received_at}: the A2A continuation of the reply that asked. */
  continuation?: string | null;
  /** JSON RecordedAnswer, plus the continuation message while it is being sent. */
  answer?: string | null;
  /** JSON GovernedState (src/domain/governed-flow.ts) of a governed operation; null otherwise. */
  governance?: string | null;
  /** Reminders sent for the current input request (src/domain/input-timers.ts). */
  input_reminders?: number;
  /** When the current input request's expiry was acted on. */
  input_expired_at?: number | null;
  /** The URL token of the reporting webhook we put in a create_media_buy request (migration 018). */
  reporting_token?: string | null;
  /** When the seller first said this create_media_buy completed without a media_buy_id (migration 022). */
  unresolved_completion_at?: number | null;
}

export interface OperationEventsTable {
  id: Generated<number>;
  operation_id: string;
  tenant_id: string;
  at: number;
  source: string;
  kind: string;
  from_status: string | null;
  to_status: string | null;
  detail: string | null;
  /** The name of the key whose request caused the event; null when no person did. */
  actor: string | null;
}

export interface ApiIdempotencyTable {
  tenant_id: string;
  key: string;
  request_hash: string;
  /** Null while the first request is still being processed. */
  status_code: number | null;
  response_body: string | null;
  created_at: number;
}

export interface WebhookNoncesTable {
  keyid: string;
  nonce: string;
  expires_at: number;
}

/** An upper bound of a key's nonce rows, in shards (migration 017). */
export interface WebhookNonceCountsTable {
  keyid: string;
  shard: number;
  n: number;
}

export interface WebhookDeliveriesTable {
  id: string;
  sender: string;
  idempotency_key: string;
  fingerprint: string;
  operation_id: string;
  state: 'received' | 'applied';
  outcome: string | null;
  payload: string;
  received_at: number;
  applied_at: number | null;
}

export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  agents: AgentsTable;
  operations: OperationsTable;
  operation_events: OperationEventsTable;
  api_idempotency: ApiIdempotencyTable;
  webhook_nonces: WebhookNoncesTable;
  webhook_nonce_counts: WebhookNonceCountsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  reconcile_reports: ReconcileReportsTable;
  job_leases: JobLeasesTable;
  instances: InstancesTable;
  notifications: NotificationsTable;
  reconcile_deferrals: ReconcileDeferralsTable;
  subscriptions: SubscriptionsTable;
  subscription_secrets: SubscriptionSecretsTable;
  subscription_deliveries: SubscriptionDeliveriesTable;
  subscription_delivery_attempts: SubscriptionDeliveryAttemptsTable;
  sessions: SessionsTable;
  tenant_settings: TenantSettingsTable;
  campaigns: CampaignsTable;
  media_buys: MediaBuysTable;
  media_buy_events: MediaBuyEventsTable;
  media_buy_reports: MediaBuyReportsTable;
  media_buy_outcomes: MediaBuyOutcomesTable;
  media_buy_creatives: MediaBuyCreativesTable;
  reporting_fires: ReportingFiresTable;
  governance_syncs: GovernanceSyncsTable;
}

/** A tenant's own rules (docs/ARCHITECTURE.md, People in the loop): one JSON document per tenant. */
export interface TenantSettingsTable {
  tenant_id: string;
  settings: string;
  updated_at: number;
  /** The key name of who last changed them. */
  updated_by: string;
}

export interface ReconcileReportsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  started_at: number;
  /** Null while the run is in progress. */
  finished_at: number | null;
  /** The report JSON (AdCP spec, polling, timeouts, retries, reconciliation) once finished. */
  report: string | null;
  /** JSON {code, message} when the run failed (seller unreachable, bad listing). */
  error: string | null;
}

/** A named piece of periodic work held by one instance until `lease_until`. */
export interface JobLeasesTable {
  name: string;
  owner: string;
  lease_until: number;
}

/** Orphans a reconcile run left alone while sends that may bind them were unresolved: run again once they resolve. */
export interface ReconcileDeferralsTable {
  agent_id: string;
  /** JSON {task type: [operation ids]}. */
  waiting_on: string;
  /** Start of the run that deferred. */
  deferred_at: number;
}

/** The notifications outbox (docs/ARCHITECTURE.md, Telling users), written with the change it reports. */
export interface NotificationsTable {
  /** Order of writing; readers page by it (see src/notify/event-horizon.ts for PostgreSQL). */
  seq: Generated<number>;
  /** `ntf_` + uuid: what clients see, resume from and deduplicate by. */
  id: string;
  tenant_id: string;
  type: string;
  /** What it is about: the operation's id, or a live media buy's (`buy_…`) for `media_buy.*`; null for a campaign's. */
  operation_id: string | null;
  created_at: number;
  /** The JSON body, exactly as streamed and posted. */
  body: string;
}

/** Outbound subscriptions (migration 008): see src/store/subscriptions-repo.ts. */
export interface SubscriptionsTable {
  id: string;
  tenant_id: string;
  /** The target URL, sealed (a Slack webhook URL is a credential). */
  url_enc: string;
  /** What listings show: see src/notify/subscription-target.ts. */
  url_display: string;
  /** JSON array of notification types, null for all. */
  events: string | null;
  format: 'standard' | 'slack';
  /** Every notification with seq <= this has been fanned out to this subscription. */
  fanout_seq: number;
  created_at: number;
  created_by: string | null;
  disabled_at: number | null;
  disabled_reason: string | null;
  deleted_at: number | null;
  deleted_by: string | null;
}

export interface SubscriptionSecretsTable {
  id: string;
  subscription_id: string;
  /** `whsec_…`, sealed with the SecretBox. */
  secret_enc: string;
  created_at: number;
  /** Null while active; a rotated-out secret still signs until then. */
  expires_at: number | null;
}

export interface SubscriptionDeliveriesTable {
  id: string;
  subscription_id: string;
  tenant_id: string;
  notification_id: string;
  notification_seq: number;
  type: string;
  operation_id: string | null;
  status: 'pending' | 'delivered' | 'failed';
  attempt_count: Generated<number>;
  schedule_step: Generated<number>;
  next_attempt_at: number | null;
  lease_owner: string | null;
  lease_until: number | null;
  lease_epoch: Generated<number>;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
  redelivered_at: number | null;
  redelivered_by: string | null;
}

export interface SubscriptionDeliveryAttemptsTable {
  delivery_id: string;
  attempt: number;
  started_at: number;
  duration_ms: number;
  http_status: number | null;
  error: string | null;
  outcome: 'delivered' | 'retry' | 'failed' | 'disabled' | 'interrupted';
  next_attempt_at: number | null;
  /** The instance that made the attempt. */
  sent_by: string;
}

/** A running `serve` process: who it is, where, and when it last said it was alive. */
export interface InstancesTable {
  /** The app's instanceId: the owner written into the leases it takes. */
  id: string;
  pid: number;
  hostname: string;
  url: string | null;
  /** Epoch ms, database clock. */
  started_at: number;
  /** Epoch ms, database clock. */
  heartbeat_at: number;
  /** PostgreSQL: the key of the advisory lock it holds while alive; the lock gone means the process is. */
  lock_key: number | null;
}

/** A governed campaign (migration 015): its buys are operations whose parent_id is the campaign's id. */
export interface CampaignsTable {
  /** `cmp_` + uuid. */
  id: string;
  tenant_id: string;
  name: string | null;
  governance_agent_id: string;
  plan_id: string;
  /** running | done */
  status: string;
  /** JSON array of the buys' operation ids, in the order asked for. */
  buy_ids: string;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  /** The key name of who created it. */
  created_by: string | null;
}

/** A signed-in dashboard browser (src/ui/): acts as its API key until `expires_at`. */
export interface SessionsTable {
  /** SHA-256 (hex) of the token in the session cookie; the token is never stored. */
  token_hash: string;
  tenant_id: string;
  key_id: string;
  created_at: number;
  expires_at: number;
}
