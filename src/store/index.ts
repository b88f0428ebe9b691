/** The store: one database, its repositories, opened and migrated together. */
import { AgentsRepo } from './agents-repo.js';
import { openDb, type Db, type OpenDbOptions } from './db.js';
import { IdempotencyRepo } from './idempotency-repo.js';
import { migrateToLatest } from './migrate.js';
import { OperationsRepo } from './operations-repo.js';
import { TenantsRepo } from './tenants-repo.js';
import { DeliveriesRepo } from './deliveries-repo.js';
import { DbNonceReplayStore } from './nonce-repo.js';
import { JobLeasesRepo } from './job-leases-repo.js';
import { ReconcileRepo } from './reconcile-repo.js';
import { InstancesRepo } from './instances-repo.js';
import { NotificationsRepo, type NotificationsOptions } from './notifications-repo.js';
import { SubscriptionsRepo } from './subscriptions-repo.js';
import { SubscriptionDeliveriesRepo } from './subscription-deliveries-repo.js';
import { SettingsRepo } from './settings-repo.js';
import { CampaignsRepo } from './campaigns-repo.js';
import { SessionsRepo } from './sessions-repo.js';
import { MediaBuysRepo } from './media-buys-repo.js';
import { MediaBuyReportsRepo } from './media-buy-reports-repo.js';
import { MediaBuyOutcomesRepo } from './media-buy-outcomes-repo.js';
import { ReportingFiresRepo } from './reporting-fires-repo.js';
import { CreativesRepo } from './creatives-repo.js';
import { GovernanceSyncsRepo } from './governance-syncs-repo.js';

export interface Store {
  db: Db;
  tenants: TenantsRepo;
  agents: AgentsRepo;
  operations: OperationsRepo;
  idempotency: IdempotencyRepo;
  deliveries: DeliveriesRepo;
  nonces: DbNonceReplayStore;
  jobLeases: JobLeasesRepo;
  reconcile: ReconcileRepo;
  instances: InstancesRepo;
  notifications: NotificationsRepo;
  subscriptions: SubscriptionsRepo;
  subscriptionDeliveries: SubscriptionDeliveriesRepo;
  settings: SettingsRepo;
  campaigns: CampaignsRepo;
  sessions: SessionsRepo;
  /** Live media buys, their reports, the fires that brought them, and their governance outcomes (migration 018). */
  mediaBuys: MediaBuysRepo;
  reports: MediaBuyReportsRepo;
  fires: ReportingFiresRepo;
  deliveryOutcomes: MediaBuyOutcomesRepo;
  /** Creatives sent to live buys and their reviews (migration 020). */
  creatives: CreativesRepo;
  /** What sync_governance registered at governance-aware sellers (migration 024). */
  governanceSyncs: GovernanceSyncsRepo;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** How notifications link to an operation (ADCP_ORCH_PUBLIC_URL). */
  notifications?: NotificationsOptions;
}

export function storeFor(db: Db, opts: StoreOptions = {}): Store {
  const notifications = new NotificationsRepo(db, opts.notifications);
  return {
    db,
    tenants: new TenantsRepo(db),
    agents: new AgentsRepo(db),
    operations: new OperationsRepo(db, notifications),
    idempotency: new IdempotencyRepo(db),
    deliveries: new DeliveriesRepo(db),
    nonces: new DbNonceReplayStore(db),
    jobLeases: new JobLeasesRepo(db),
    reconcile: new ReconcileRepo(db),
    instances: new InstancesRepo(db),
    notifications,
    subscriptions: new SubscriptionsRepo(db),
    subscriptionDeliveries: new SubscriptionDeliveriesRepo(db),
    settings: new SettingsRepo(db),
    campaigns: new CampaignsRepo(db),
    sessions: new SessionsRepo(db),
    mediaBuys: new MediaBuysRepo(db, notifications, { publicUrl: opts.notifications?.publicUrl }),
    reports: new MediaBuyReportsRepo(db),
    fires: new ReportingFiresRepo(db),
    deliveryOutcomes: new MediaBuyOutcomesRepo(db),
    creatives: new CreativesRepo(db),
    governanceSyncs: new GovernanceSyncsRepo(db),
    close: () => db.close(),
  };
}

export async function openStore(
  url: string,
  opts: { migrate?: boolean } & OpenDbOptions & StoreOptions = {},
): Promise<Store> {
  const db = openDb(url, opts);
  try {
    if (opts.migrate !== false) await migrateToLatest(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return storeFor(db, opts);
}

export type { OperationRow, EventRow, Lease, Written } from './operations-repo.js';
export type { NotificationRow, NewNotification } from './notifications-repo.js';
export type { AgentRow } from './agents-repo.js';
export type { CampaignRow } from './campaigns-repo.js';
export type { MediaBuyRow, BuyEventRow } from './media-buys-repo.js';
export type { ReportRow } from './media-buy-reports-repo.js';
export type { CreativeRow } from './creatives-repo.js';
export type { GovernanceSyncRow } from './governance-syncs-repo.js';
