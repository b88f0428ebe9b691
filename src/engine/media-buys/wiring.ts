/**
 * Live media buys and the creatives sent to them, built from the configuration (kept
 * out of app.ts, as src/engine/reconcile-setup.ts is for reconciliation). Two steps,
 * because the first must come before anything writes an operation:
 *
 * - `recordLiveBuys`: the write hooks that make a buy in the commit that completes its
 *   create, whichever path completes it (buy-recorder.ts), and record the creatives in
 *   the commit that stores their sync_creatives (creative-recorder.ts);
 * - `createLiveBuys`: what follows a buy once made: its reports (fires and operation-URL
 *   reports), its timers and delivery outcomes (the buy worker), what people do with
 *   buys and creatives, and the worker woken by every change that may make one due.
 */
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { CreativePolicy } from '../../domain/creative-review.js';
import type { TrackingPolicy } from '../../domain/media-buy-timers.js';
import type { Store } from '../../store/index.js';
import type { ChangeBus } from '../change-bus.js';
import type { Clock } from '../clock.js';
import type { DatabaseOutage } from '../database-outage.js';
import type { OperationService } from '../operation-service.js';
import { BuyRecorder } from './buy-recorder.js';
import { MediaBuyService } from './buy-service.js';
import { BuyTracker } from './buy-tracker.js';
import { BuyWorker } from './buy-worker.js';
import { CreativeInbox } from './creative-inbox.js';
import { CreativeRecorder } from './creative-recorder.js';
import { CreativeService } from './creative-service.js';
import { CreativeTracker } from './creative-tracker.js';
import { DeliveryOutcomes, type DeliveryOutcomeDeps } from './delivery-outcomes.js';
import { OperationUrlReports } from './operation-url-reports.js';
import { ReportIngest } from './report-ingest.js';

/** What the write hooks were built with, which the rest of the buys' machinery shares. */
export interface BuyRecording {
  tracking: TrackingPolicy;
  creativePolicy: CreativePolicy;
  clockSkewMs: number;
  creativeInbox: CreativeInbox;
}

/** Registers the write hooks that make live buys and record their creatives (on `store.operations`, in this order). */
export function recordLiveBuys(d: { store: Store; bus: ChangeBus; clock: Clock; logger: Logger; config: Config }): BuyRecording {
  const { store, clock, logger, config } = d;
  const creativePolicy = { pollIntervalMs: config.ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS, approvalTimeoutMs: config.ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS };
  const tracking = { graceMs: config.ADCP_ORCH_REPORT_GRACE_MS, statusIntervalMs: config.ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS, creatives: creativePolicy };
  const clockSkewMs = config.ADCP_ORCH_REPORT_CLOCK_SKEW_MS;
  const buyRecorder = new BuyRecorder({ store, tracking, random: () => clock.random(), log: logger, clockSkewMs });
  store.operations.addWriteHook(buyRecorder.onOperationWrite, buyRecorder.onOperationWrites);
  const creativeInbox = new CreativeInbox({ store, bus: d.bus, clock, log: logger, policy: creativePolicy, reminders: { firstAfterMs: config.ADCP_ORCH_INPUT_REMINDER_MS } });
  store.operations.addWriteHook(new CreativeRecorder({ store, inbox: creativeInbox, policy: creativePolicy, random: () => clock.random(), log: logger }).onOperationWrite);
  return { tracking, creativePolicy, clockSkewMs, creativeInbox };
}

/** What the buys' calls to sellers take (the call timeout comes from `config`), and the rest of the engine they answer to. */
export interface LiveBuysDeps extends Omit<DeliveryOutcomeDeps, 'log' | 'callTimeoutMs'> {
  logger: Logger;
  config: Config;
  operations: OperationService;
  instanceId: string;
  outage: DatabaseOutage;
  recording: BuyRecording;
}

export interface LiveBuys {
  /** The engine's entry for authenticated reporting fires. */
  reportIngest: ReportIngest;
  /** Reports that come with an operation's own webhook (the operation's URL). */
  operationUrlReports: OperationUrlReports;
  /** Runs live buys' timers and their governance delivery outcomes. */
  buyWorker: BuyWorker;
  /** What people do with buys: reads, pause, resume, refresh. */
  mediaBuys: MediaBuyService;
  creatives: CreativeService;
  /** Stops waking the buy worker on changes. */
  unsubscribe(): void;
}

export function createLiveBuys(d: LiveBuysDeps): LiveBuys {
  const { store, bus, metrics, clock, logger, config, operations, recording } = d;
  const { tracking, creativePolicy, clockSkewMs, creativeInbox } = recording;
  const reportIngest = new ReportIngest({
    store,
    bus,
    metrics,
    log: logger,
    tracking,
    now: () => clock.now(),
    random: () => clock.random(),
    clockSkewMs,
  });
  const operationUrlReports = new OperationUrlReports({ store, ingest: reportIngest });
  const buyCalls = { store, adcp: d.adcp, secrets: d.secrets, bus, breakers: d.breakers, metrics, clock, log: logger, callTimeoutMs: config.ADCP_ORCH_CALL_TIMEOUT_MS };
  const creativeTracker = new CreativeTracker({ ...buyCalls, policy: creativePolicy });
  const tracker = new BuyTracker({ ...buyCalls, tracking, clockSkewMs, creatives: creativeTracker, inbox: creativeInbox });
  const deliveryOutcomes = new DeliveryOutcomes({ ...buyCalls, maxAttempts: config.ADCP_ORCH_RETRY_ATTEMPTS });
  const buyWorker = new BuyWorker(store, (b) => tracker.run(b), (o) => deliveryOutcomes.run(o), clock, logger, {
    instanceId: d.instanceId,
    leaseMs: operations.leaseMs,
    concurrency: 16,
    tickMs: config.ADCP_ORCH_SCHEDULER_TICK_MS,
    outage: d.outage,
  });
  const mediaBuys = new MediaBuyService({ store, operations, bus, clock });
  const creatives = new CreativeService({ store, operations, mediaBuys });
  // A buy's change may make its timers or an outcome due now; its notifications are counted here (this process's).
  const unsubscribes = [
    bus.subscribeBuys((change) => {
      metrics.mediaBuyNotified(change.notifications);
      buyWorker.wake();
    }),
    bus.subscribe((change) => {
      if (!change.notifications.some((n) => n.type.startsWith('media_buy.') || n.type.startsWith('creative.'))) return;
      metrics.mediaBuyNotified(change.notifications);
      buyWorker.wake();
    }),
  ];
  return {
    reportIngest,
    operationUrlReports,
    buyWorker,
    mediaBuys,
    creatives,
    unsubscribe: () => {
      for (const u of unsubscribes) u();
    },
  };
}
