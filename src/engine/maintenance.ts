/**
 * Housekeeping every instance runs in the background: jobs on a fixed interval,
 * one run at a time (a slow run delays the next instead of overlapping it), each
 * job's failure logged without stopping the others. And the one job of the
 * engine's own: deleting what is only needed for a while (see pruneExpired).
 */
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { DatabaseOutage } from './database-outage.js';

export interface MaintenanceJob {
  /** For the log line when it fails. */
  name: string;
  run(): Promise<void>;
}

export function startMaintenance(jobs: MaintenanceJob[], log: Logger, intervalMs = 30_000, outage?: DatabaseOutage): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const runAll = async () => {
    for (const job of jobs) {
      if (stopped) return;
      try {
        await job.run();
      } catch (err) {
        // The database away: counted and logged once per outage; the next round tries again.
        if (!outage?.failed('maintenance', err)) log.error({ err, job: job.name }, 'maintenance job failed');
      }
    }
  };
  const schedule = () => {
    timer = setTimeout(() => void runAll().finally(() => !stopped && schedule()), intervalMs);
    timer.unref();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Dedupe records of webhook deliveries are kept at least 24 h (AdCP spec, webhooks); we keep 48 h. */
export const WEBHOOK_DELIVERY_RETENTION_MS = 48 * 3_600_000;

export interface RetentionWindows {
  /** Applied webhook deliveries older than this are deleted. */
  webhookDeliveriesMs: number;
  /** API `Idempotency-Key` records older than this are deleted (ADCP_ORCH_API_IDEMPOTENCY_TTL_MS). */
  apiIdempotencyMs: number;
}

export interface Pruned {
  webhook_deliveries: number;
  /** Applied reporting fires past the same dedupe window (their reports stay: they are the record). */
  reporting_fires: number;
  webhook_nonces: number;
  api_idempotency: number;
}

/**
 * Deletes the records that are only needed for a while: applied webhook deliveries past
 * their dedupe window, RFC 9421 nonces past their signature's expiry, and API
 * idempotency records past theirs. Operations, their events and notifications are the
 * record and are never deleted here (docs/OPERATIONS.md, "What grows").
 */
export async function pruneExpired(store: Store, windows: RetentionWindows, now = Date.now()): Promise<Pruned> {
  return {
    webhook_deliveries: await store.deliveries.sweepOlderThan(now - windows.webhookDeliveriesMs),
    reporting_fires: await store.fires.sweepOlderThan(now - windows.webhookDeliveriesMs),
    webhook_nonces: await store.nonces.sweep(now),
    api_idempotency: await store.idempotency.sweepOlderThan(now - windows.apiIdempotencyMs),
  };
}
