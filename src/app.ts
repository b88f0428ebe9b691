/**
 * The orchestrator process: opens the store, builds the engine and the API, and
 * starts the scheduler. `serve` and the tests both start it through here.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createAdcpClient } from './adcp/client.js';
import type { AdcpClient } from './adcp/types.js';
import { buildApi } from './api/server.js';
import { exposedGc } from './api/routes/debug-gc.js';
import type { Config } from './config.js';
import { ChangeBus } from './engine/change-bus.js';
import { systemClock, type Clock } from './engine/clock.js';
import { Metrics } from './engine/metrics.js';
import { isAgentFailure, OperationService } from './engine/operation-service.js';
import { AgentBreakers } from './engine/breakers.js';
import { AgentBulkheads } from './engine/agent-bulkheads.js';
import { Scheduler } from './engine/scheduler.js';
import { AnswerDelivery } from './engine/answer-delivery.js';
import { AnswerService } from './engine/answer-service.js';
import { ANSWER_CHECK } from './engine/input-requests.js';
import { INPUT_TIMER_CHECK, InputTimers } from './engine/input-timers.js';
import { SpendApproval } from './engine/spend-approval.js';
import { CancelService } from './engine/cancel-operation.js';
import { AgentCapabilitiesService } from './engine/agent-capabilities.js';
import { createReconciliation } from './engine/reconcile-setup.js';
import { InstancePresence } from './engine/instances.js';
import type { Reconciler } from './engine/reconciler.js';
import { resolveSecretKey } from './secret-key.js';
import { openStore, type OperationRow, type Store } from './store/index.js';
import { SecretBox } from './store/secret-box.js';
import { SQLITE_SERVE_BUSY_TIMEOUT_MS } from './store/db.js';
import { AgentKeySources } from './webhooks/key-sources.js';
import { WebhookIngest } from './engine/webhook-ingest.js';
import { WebhookReceiver } from './webhooks/receiver.js';
import { applyPendingDeliveries } from './webhooks/recovery.js';
import { pruneExpired, startMaintenance, WEBHOOK_DELIVERY_RETENTION_MS } from './engine/maintenance.js';
import { webhookRoutes } from './webhooks/route.js';
import { createLiveUpdates, type LiveUpdates } from './notify/live-updates.js';
import { eventHorizonFor } from './notify/event-horizon.js';
import { SubscriptionDispatcher } from './notify/subscription-dispatcher.js';
import { subscriptionRoutes } from './api/routes/subscriptions.js';
import { liveSourceFrom } from './notify/live-source.js';
import { dashboardRoutes } from './ui/plugin.js';
import { GovernanceFlow } from './engine/governance/flow.js';
import { GovernanceGuard } from './engine/governance/governed-ops.js';
import { PlanBook } from './engine/governance/plan-book.js';
import { CampaignService } from './engine/governance/campaigns.js';
import { CampaignWatcher } from './engine/governance/campaign-watcher.js';
import type { WriteSlot } from './store/write-batch.js';
import { OperationStarter } from './engine/operation-starter.js';
import { createMcp, type McpLayer } from './mcp/index.js';
import { DatabaseOutage } from './engine/database-outage.js';
import { StrandedLeases } from './engine/stranded-leases.js';
import type { BuyWorker } from './engine/media-buys/buy-worker.js';
import type { MediaBuyService } from './engine/media-buys/buy-service.js';
import { CreativeAnswers } from './engine/media-buys/creative-answers.js';
import { ReportingReceiver } from './webhooks/reporting-receiver.js';
import type { ReportIngest } from './engine/media-buys/report-ingest.js';
import { createLiveBuys, recordLiveBuys } from './engine/media-buys/wiring.js';
import { applyPendingFires } from './webhooks/recovery.js';
import { ConfigError } from './config.js';
import { loadSigningKeyFile } from './signing-key-file.js';
import { SigningKeyFileError, SigningKeys } from './engine/signing-keys.js';
import { SigningKeysRepo } from './store/signing-keys-repo.js';
import { wellKnownRoutes } from './api/routes/well-known.js';

export interface AppOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  adcp?: AdcpClient;
  /** Scheduler concurrency (operations worked at once by this process). */
  concurrency?: number;
}

export interface App {
  store: Store;
  api: FastifyInstance;
  operations: OperationService;
  answers: AnswerService;
  /** Governed operations' steps (check, review poll, outcome report). */
  governance: GovernanceFlow;
  campaigns: CampaignService;
  campaignWatcher: CampaignWatcher;
  scheduler: Scheduler;
  reconciler: Reconciler;
  metrics: Metrics;
  bus: ChangeBus;
  secrets: SecretBox;
  receiver: WebhookReceiver;
  /** The engine's entry for authenticated webhook deliveries (dedupe, store, apply). */
  webhookIngest: WebhookIngest;
  /** SSE feed and cross-instance NOTIFY. */
  live: LiveUpdates;
  /** Outbound notifications to subscriptions. */
  subscriptions: SubscriptionDispatcher;
  instanceId: string;
  /** This process among the others on the database (heartbeat, takeover of dead instances' leases). */
  instances: InstancePresence;
  /** The MCP server at /mcp (its sessions). */
  mcp: McpLayer;
  /** Live media buys: what people do with them (reads, pause, resume, refresh). */
  mediaBuys: MediaBuyService;
  /** The engine's entry for authenticated reporting fires. */
  reportIngest: ReportIngest;
  reportingReceiver: ReportingReceiver;
  /** Runs live buys' timers and their governance delivery outcomes. */
  buyWorker: BuyWorker;
  /** Our request-signing keys: what signs requests to sellers and what /.well-known/jwks.json publishes. */
  signingKeys: SigningKeys;
  /** Listens on the configured port; returns the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

export async function createApp(opts: AppOptions): Promise<App> {
  const { config, logger } = opts;
  if (config.ADCP_ORCH_DEBUG_GC) exposedGc(); // refuse at once, before opening anything
  // A key file that cannot be read or is no Ed25519 private key stops the start here, before anything is opened.
  const keyFile = loadSigningKeyFile(config.ADCP_ORCH_SIGNING_KEY_FILE);
  const clock = opts.clock ?? systemClock;
  const instanceId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const secretKey = resolveSecretKey(config.ADCP_ORCH_SECRET_KEY, config.ADCP_ORCH_DATABASE_URL);
  // Built once the metrics are (they need the store): a connection cannot be lost before then.
  let outage: DatabaseOutage | undefined;
  const store = await openStore(config.ADCP_ORCH_DATABASE_URL, {
    notifications: { publicUrl: config.ADCP_ORCH_PUBLIC_URL },
    // The pool replaces the connection when next needed; the operator should still see it (once).
    onConnectionLost: (err) => outage?.connectionLost(err),
    // Short: a serving process must not stop answering while another process holds SQLite's lock.
    sqliteBusyTimeoutMs: SQLITE_SERVE_BUSY_TIMEOUT_MS,
  });
  const secrets = new SecretBox(secretKey.key);
  const signingKeys = new SigningKeys({
    repo: new SigningKeysRepo(store.db),
    secrets,
    clock,
    log: logger,
    ...(keyFile && { keyFile }),
    graceMs: config.ADCP_ORCH_SIGNING_KEY_GRACE_MS,
    leadMs: config.ADCP_ORCH_SIGNING_KEY_LEAD_MS,
  });
  try {
    // The key exists before anything can call a seller: made now at first start, or the file's published.
    await signingKeys.start();
  } catch (err) {
    await store.close();
    throw err instanceof SigningKeyFileError ? new ConfigError([err.message]) : err;
  }
  const metrics = new Metrics(store, { instanceDeadAfterMs: config.ADCP_ORCH_INSTANCE_DEAD_AFTER_MS });
  // The database going away is a pause for all of the below, not a crash or a failure per attempt.
  outage = new DatabaseOutage(logger, metrics, clock);
  const stranded = new StrandedLeases(store, instanceId, outage, clock, logger);
  const bus = new ChangeBus();
  // Live buys and their creatives: the write hooks first, before anything writes an operation (src/engine/media-buys/wiring.ts).
  const buyRecording = recordLiveBuys({ store, bus, clock, logger, config });
  const adcp = opts.adcp ?? createAdcpClient({ maxReplyBytes: config.ADCP_ORCH_MAX_REPLY_BYTES, signer: signingKeys });
  const bulkheads = new AgentBulkheads({
    maxConcurrent: config.ADCP_ORCH_AGENT_MAX_CONCURRENT_CALLS,
    maxQueued: config.ADCP_ORCH_AGENT_MAX_QUEUED_CALLS,
    // A claimed row's lease covers this wait and the call (OperationService.leaseMs).
    maxWaitMs: config.ADCP_ORCH_CALL_TIMEOUT_MS,
  });
  const breakers = new AgentBreakers(
    { threshold: config.ADCP_ORCH_BREAKER_THRESHOLD, halfOpenAfterMs: config.ADCP_ORCH_BREAKER_HALF_OPEN_MS, isFailure: isAgentFailure },
    metrics.circuitState,
    bulkheads,
  );
  const inputTimers = new InputTimers({ store, bus, metrics, clock, log: logger, reminders: { firstAfterMs: config.ADCP_ORCH_INPUT_REMINDER_MS } });
  const operations = new OperationService(store, adcp, secrets, bus, metrics, clock, logger, {
    pollIntervalMs: config.ADCP_ORCH_POLL_INTERVAL_MS,
    backupPollAfterMs: config.ADCP_ORCH_BACKUP_POLL_AFTER_MS,
    workingTimeoutMs: config.ADCP_ORCH_WORKING_TIMEOUT_MS,
    maxPolls: config.ADCP_ORCH_MAX_POLLS,
    publicUrl: config.ADCP_ORCH_PUBLIC_URL,
    callTimeoutMs: config.ADCP_ORCH_CALL_TIMEOUT_MS,
    syncWaitMs: config.ADCP_ORCH_SYNC_WAIT_MS,
    maxAttempts: config.ADCP_ORCH_RETRY_ATTEMPTS,
    inputReminderMs: config.ADCP_ORCH_INPUT_REMINDER_MS,
    deadlinesMs: config.ADCP_ORCH_DEADLINES_MS,
    replayWindowMs: config.ADCP_ORCH_REPLAY_WINDOW_MS,
    instanceId,
  }, breakers, inputTimers);
  operations.stranded = stranded;
  const spendApproval = new SpendApproval(store, clock);
  // Late-bound: the scheduler is built below, with the runner that needs the flow.
  let wakeScheduler = () => {};
  const governance = new GovernanceFlow({ store, adcp, secrets, bus, operations, breakers, metrics, clock, log: logger, wake: () => wakeScheduler() });
  const plans = new PlanBook(store);
  // The checks' `caller`: our public URL (the address agents know us by).
  const guard = new GovernanceGuard(store, plans, clock, () => config.ADCP_ORCH_PUBLIC_URL ?? `http://${config.HOST}:${config.PORT}`);
  const delivery = new AnswerDelivery({ store, adcp, secrets, bus, operations, breakers, metrics, clock, log: logger });
  const creativeAnswers = new CreativeAnswers({ store, secrets, bus, operations, metrics, clock });
  const answers = new AnswerService({ store, secrets, bus, operations, delivery, spendApproval, metrics, clock, log: logger, governance, creatives: creativeAnswers });
  const campaigns = new CampaignService({ store, secrets, bus, operations, flow: governance, guard, spendApproval, metrics, clock, log: logger });
  const campaignWatcher = new CampaignWatcher(store, bus, clock, logger, {
    sweepEveryMs: Math.max(1_000, config.ADCP_ORCH_SCHEDULER_TICK_MS * 5),
    publicUrl: config.ADCP_ORCH_PUBLIC_URL,
    outage,
  });
  // A person's answer on its way to the seller has its own runner, and so have the clock of a held
  // request (reminders, expiry: never a send) and a governed operation's own steps (check, review,
  // outcome report); everything else is a send or a poll.
  const runClaimed = (row: OperationRow, writes?: WriteSlot) =>
    row.check_kind === ANSWER_CHECK
      ? delivery.run(row)
      : row.check_kind === INPUT_TIMER_CHECK
        ? inputTimers.run(row)
        : governance.handles(row.check_kind)
          ? governance.run(row)
          : operations.runClaimed(row, writes);
  const scheduler = new Scheduler(store, runClaimed, clock, logger, {
    instanceId,
    leaseMs: operations.leaseMs,
    concurrency: opts.concurrency ?? 64,
    tickMs: config.ADCP_ORCH_SCHEDULER_TICK_MS,
    warmupMs: config.ADCP_ORCH_WARMUP_MS,
    outage,
    stranded,
  });
  wakeScheduler = () => scheduler.wake();
  const instances = new InstancePresence(store, clock, logger, { instanceId, deadAfterMs: config.ADCP_ORCH_INSTANCE_DEAD_AFTER_MS, databaseUrl: config.ADCP_ORCH_DATABASE_URL, outage }, () => scheduler.wake());
  const reconciliation = createReconciliation({ store, adcp, secrets, bus, metrics, clock, logger, config, instanceId, timing: operations.options, wake: () => scheduler.wake(), outage });
  const liveBuys = createLiveBuys({ store, adcp, secrets, bus, breakers, metrics, clock, logger, config, operations, instanceId, outage, recording: buyRecording });
  const { reportIngest, buyWorker, mediaBuys, creatives } = liveBuys;
  const webhookIngest = new WebhookIngest({ store, operations, metrics, log: logger, now: () => clock.now(), reports: liveBuys.operationUrlReports });
  const keySources = new AgentKeySources(config.ADCP_ORCH_ALLOW_PRIVATE_NETWORK);
  const receiver = new WebhookReceiver({ ingest: webhookIngest, nonces: store.nonces, secrets, keySources, metrics, log: logger, now: () => clock.now() });
  const reportingReceiver = new ReportingReceiver({ ingest: reportIngest, agent: (id) => store.agents.get(id), nonces: store.nonces, secrets, keySources, metrics, log: logger, now: () => clock.now() });
  const subscriptions = new SubscriptionDispatcher(store, secrets, eventHorizonFor(store.db, logger), clock, logger, {
    instanceId,
    concurrency: 16,
    tickMs: config.ADCP_ORCH_SCHEDULER_TICK_MS,
    timeoutMs: config.ADCP_ORCH_SUBSCRIPTION_TIMEOUT_MS,
    retryScheduleMs: config.ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS,
    allowPrivateNetwork: config.ADCP_ORCH_ALLOW_PRIVATE_NETWORK,
    publicUrl: config.ADCP_ORCH_PUBLIC_URL,
    outage,
  });
  const live = createLiveUpdates({
    store,
    bus,
    databaseUrl: config.ADCP_ORCH_DATABASE_URL,
    instanceId,
    logger,
    fallbackPollMs: config.ADCP_ORCH_SSE_FALLBACK_POLL_MS,
    heartbeatMs: config.ADCP_ORCH_SSE_HEARTBEAT_MS,
    wakeScheduler: () => scheduler.wake(),
    onRemoteChange: () => subscriptions.wake(),
    outage,
  });
  const unsubscribeDispatcher = bus.subscribe(() => subscriptions.wake());
  const unsubscribeBuyDispatch = bus.subscribeBuys((change) => change.notifications.length > 0 && subscriptions.wake());
  const cancel = new CancelService(store, operations, bus, metrics, clock);
  const agentCapabilities = new AgentCapabilitiesService({ store, adcp, secrets, clock, log: logger, timeoutMs: Math.min(config.ADCP_ORCH_CALL_TIMEOUT_MS, 10_000) });
  // Which operations changed, from every instance: the dashboard's live pages and the MCP server's waits and subscriptions.
  const liveChanges = liveSourceFrom(live.feed, live.wakes);
  const dashboard = dashboardRoutes({
    store,
    cancel,
    live: liveChanges,
    clock,
    sessionTtlMs: config.ADCP_ORCH_SESSION_TTL_MS,
    publicUrl: config.ADCP_ORCH_PUBLIC_URL,
    wakeSubscriptions: () => subscriptions.wake(),
    answers,
    mediaBuys,
    outage,
  });
  const starter = new OperationStarter(operations, spendApproval, guard);
  // Until listen() knows the port (a test's port 0), links use the configured one.
  let selfUrl = `http://${config.HOST}:${config.PORT}`;
  const mcp = createMcp({
    store,
    digest: (text) => secrets.digest(text),
    starter,
    operations,
    cancel,
    answers,
    governance: { plans, campaigns },
    mediaBuys,
    live: liveChanges,
    metrics,
    log: logger,
    waitMs: config.ADCP_ORCH_MCP_WAIT_MS,
    outage,
    taskPollMs: 1_000,
    dashboardBase: () => config.ADCP_ORCH_PUBLIC_URL ?? selfUrl,
  });
  let ready = false;
  let stopMaintenance: (() => void) | undefined;
  const api = await buildApi({
    store,
    secrets,
    operations,
    metrics,
    logger,
    isReady: () => ready,
    instances: () => instances.live(),
    reconciler: reconciliation.reconciler,
    answers,
    spendApproval,
    cancel,
    capabilities: agentCapabilities,
    starter,
    governance: { guard, plans, campaigns },
    mediaBuys,
    creatives,
    plugins: [
      webhookRoutes(receiver, config.ADCP_ORCH_PUBLIC_URL, reportingReceiver),
      wellKnownRoutes({ keys: signingKeys, publicUrl: config.ADCP_ORCH_PUBLIC_URL }),
      live.routes,
      subscriptionRoutes({ store, secrets, allowPrivateNetwork: config.ADCP_ORCH_ALLOW_PRIVATE_NETWORK, wake: () => subscriptions.wake() }),
      dashboard,
      mcp.routes,
    ],
    debugGc: config.ADCP_ORCH_DEBUG_GC,
    outage,
  });

  return {
    store,
    api,
    operations,
    answers,
    governance,
    campaigns,
    campaignWatcher,
    scheduler,
    reconciler: reconciliation.reconciler,
    metrics,
    bus,
    secrets,
    receiver,
    webhookIngest,
    live,
    subscriptions,
    instanceId,
    instances,
    mcp,
    mediaBuys,
    reportIngest,
    reportingReceiver,
    buyWorker,
    signingKeys,
    async listen() {
      // Before anything else: on SQLite this refuses a second serve on the file, or releases a dead one's leases.
      await instances.start();
      // First, so changes made while starting up already reach other instances.
      await live.start();
      // Deliveries stored by a process that died before applying them come first.
      const recovered = await applyPendingDeliveries(webhookIngest, logger, clock.now(), 0);
      if (recovered > 0) logger.info({ applied: recovered }, 'applied webhook deliveries left by a previous run');
      const recoveredFires = await applyPendingFires(reportIngest, logger, clock.now(), 0);
      if (recoveredFires > 0) logger.info({ applied: recoveredFires }, 'applied reporting fires left by a previous run');
      // The first line a person sees at start names the dashboard (Fastify's own wording would say only "Server listening").
      await api.listen({ port: config.PORT, host: config.HOST, listenTextResolver: (address) => `dashboard and API at ${address}/` });
      const addr = api.server.address();
      const url = `http://${config.HOST}:${typeof addr === 'object' && addr ? addr.port : config.PORT}`;
      selfUrl = url;
      await instances.setUrl(url);
      scheduler.start();
      subscriptions.start();
      reconciliation.loop.start();
      campaignWatcher.start();
      buyWorker.start();
      stopMaintenance = startMaintenance(
        [
          {
            name: 'apply stored webhook deliveries',
            run: async () => {
              const n = await applyPendingDeliveries(webhookIngest, logger);
              if (n > 0) logger.info({ applied: n }, 'applied webhook deliveries left unapplied');
              const fires = await applyPendingFires(reportIngest, logger);
              if (fires > 0) logger.info({ applied: fires }, 'applied reporting fires left unapplied');
            },
          },
          {
            // Agents never asked (registered before this existed) are asked on the first round.
            name: 'refresh agent capabilities',
            run: async () => {
              await agentCapabilities.refreshDue(config.ADCP_ORCH_CAPABILITIES_REFRESH_MS);
            },
          },
          {
            // Replaced signing keys leave the JWKS after their grace; private halves go once they no longer sign.
            name: 'prune request-signing keys',
            run: async () => {
              const dropped = await signingKeys.prune();
              if (dropped > 0) logger.info({ dropped }, 'replaced request-signing keys left the JWKS');
            },
          },
          {
            name: 'prune expired records',
            run: async () => {
              const pruned = await pruneExpired(store, {
                webhookDeliveriesMs: WEBHOOK_DELIVERY_RETENTION_MS,
                apiIdempotencyMs: config.ADCP_ORCH_API_IDEMPOTENCY_TTL_MS,
              });
              if (Object.values(pruned).some((n) => n > 0)) logger.debug({ pruned }, 'pruned expired records');
            },
          },
        ],
        logger,
        undefined,
        outage,
      );
      ready = true;
      logger.info({ dashboard: `${url}/`, instance: instanceId, database: store.db.describe, secret_key: secretKey.source }, 'orchestrator ready');
      return url;
    },
    async close() {
      ready = false;
      stopMaintenance?.();
      // Open SSE streams (ours and MCP sessions') would keep the HTTP server from closing.
      await mcp.close();
      await live.stop();
      await reconciliation.loop.stop();
      await campaignWatcher.stop();
      await buyWorker.stop();
      await scheduler.stop();
      unsubscribeDispatcher();
      unsubscribeBuyDispatch();
      liveBuys.unsubscribe();
      governance.close();
      await subscriptions.stop();
      await instances.stop();
      await api.close();
      await adcp.close();
      await store.close();
    },
  };
}
