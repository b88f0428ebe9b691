/**
 * Applies webhook deliveries that were stored but never applied (the process
 * died between the two). Runs at start and then periodically (a maintenance
 * job, see app.ts and engine/maintenance.ts); applying is
 * idempotent, so an instance that finds a delivery another is still applying
 * does no harm. Parsing is ours (the receiver's rules); storing and applying are
 * the engine's.
 */
import type { Logger } from 'pino';
import type { WebhookIngest } from '../engine/webhook-ingest.js';
import { readWebhookPayload } from './read-payload.js';
import { strictJsonParse } from './strict-json.js';
import type { ReportIngest } from '../engine/media-buys/report-ingest.js';

/** Deliveries younger than this are probably being applied right now by the request that stored them. */
const GRACE_MS = 5_000;

export async function applyPendingDeliveries(ingest: WebhookIngest, log: Logger, now = Date.now(), graceMs = GRACE_MS): Promise<number> {
  let applied = 0;
  for (;;) {
    const batch = await ingest.pendingDeliveries(now - graceMs, 200);
    if (batch.length === 0) return applied;
    let progressed = false;
    for (const d of batch) {
      const parsed = strictJsonParse(d.payload);
      const read = parsed.ok ? readWebhookPayload(parsed.value) : undefined;
      if (!read?.ok) {
        // It passed these checks when stored; failing now means the code changed. Keep it, loudly.
        log.error({ delivery_id: d.id }, 'stored webhook delivery no longer parses; left unapplied');
        continue;
      }
      await ingest.applyStored(d.operation_id, d.id, read.payload);
      applied++;
      progressed = true;
    }
    if (batch.length < 200 || !progressed) return applied;
  }
}

/**
 * The same for reporting fires: stored (the combined write failed, or the process
 * died in between) but not applied. Applying marks the fire applied in its own
 * transaction only if it is still `received`, so two sweeps (or instances) apply it once.
 */
export async function applyPendingFires(ingest: ReportIngest, log: Logger, now = Date.now(), graceMs = GRACE_MS): Promise<number> {
  let applied = 0;
  for (;;) {
    const batch = await ingest.pending(now - graceMs, 200);
    if (batch.length === 0) return applied;
    let progressed = false;
    for (const f of batch) {
      const parsed = strictJsonParse(f.payload);
      const read = parsed.ok ? ingest.read(parsed.value) : undefined;
      if (!read?.ok) {
        log.error({ fire_id: f.id }, 'stored reporting fire no longer reads; left unapplied');
        continue;
      }
      await ingest.applyStored(f, read.reading);
      applied++;
      progressed = true;
    }
    if (batch.length < 200 || !progressed) return applied;
  }
}
