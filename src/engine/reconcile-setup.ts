/** Builds the reconciler and its periodic loop from the configuration (kept out of app.ts). */
import type { Logger } from 'pino';
import type { AdcpClient } from '../adcp/types.js';
import type { Config } from '../config.js';
import type { Store } from '../store/index.js';
import type { SecretBox } from '../store/secret-box.js';
import type { ChangeBus } from './change-bus.js';
import type { Clock } from './clock.js';
import type { DatabaseOutage } from './database-outage.js';
import type { Metrics } from './metrics.js';
import type { TimingPolicy } from './observation-plan.js';
import { ReconcileLoop } from './reconcile-loop.js';
import { Reconciler } from './reconciler.js';

export interface ReconciliationDeps {
  store: Store;
  adcp: AdcpClient;
  secrets: SecretBox;
  bus: ChangeBus;
  metrics: Metrics;
  clock: Clock;
  logger: Logger;
  config: Config;
  instanceId: string;
  /** The engine's own timing, so adopted operations get exactly the timers the engine would set. */
  timing: TimingPolicy;
  /** Wakes the scheduler when reconciliation set timers due now. */
  wake: () => void;
  outage?: DatabaseOutage;
}

export function createReconciliation(d: ReconciliationDeps): { reconciler: Reconciler; loop: ReconcileLoop } {
  const c = d.config;
  const interval = c.ADCP_ORCH_RECONCILE_INTERVAL_MS;
  // The reconciler tells the loop about deferrals it records; the loop runs the reconciler.
  let loop: ReconcileLoop | undefined;
  const reconciler = new Reconciler(
    d.store,
    d.adcp,
    d.secrets,
    d.bus,
    d.metrics,
    d.clock,
    d.logger,
    {
      timing: d.timing,
      pageSize: c.ADCP_ORCH_RECONCILE_PAGE_SIZE,
      localPageSize: 500,
      callTimeoutMs: c.ADCP_ORCH_CALL_TIMEOUT_MS,
      clockSlackMs: 60_000,
      // Stalled operations untouched for two periods are polled again; otherwise the engine's slow cadence rules.
      stalledQuietMs: 2 * interval,
      maxPages: 10_000,
      maxWaitedOnPerType: 100,
    },
    d.wake,
    () => loop?.deferralRecorded(),
  );
  loop = new ReconcileLoop(d.store, reconciler, d.bus, d.clock, d.logger, {
    instanceId: d.instanceId,
    intervalMs: interval,
    ...(d.outage ? { outage: d.outage } : {}),
  });
  return { reconciler, loop };
}
