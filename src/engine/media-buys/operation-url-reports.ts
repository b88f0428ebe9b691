/**
 * Delivery reports a seller sends through a buy's `push_notification_config`
 * instead of its `reporting_webhook` (a 3.1 envelope with `task_type:
 * "media_buy_delivery"`, or, like the Prebid sales agent, `task_type:
 * "update_media_buy"` with `media_buy_deliveries` in `result`). At the webhook URL
 * of a completed create_media_buy, authenticated as that operation's webhooks are,
 * such a body is recognised by what it carries and applied to the buy like a
 * reporting fire, instead of being refused as a task-type conflict.
 */
import type { Store } from '../../store/index.js';
import type { WebhookTarget } from '../../store/operations-repo.js';
import type { AuthenticatedDelivery, DeliveryClaims, IngestOutcome, OperationUrlBody } from '../webhook-ingest.js';
import type { ReportIngest } from './report-ingest.js';

/** Whether an operation webhook's body is a delivery report, by its content. */
export function isDeliveryReport(claims: Pick<DeliveryClaims, 'taskType' | 'data'>): boolean {
  return claims.taskType === 'media_buy_delivery' || (claims.data !== null && Array.isArray(claims.data.media_buy_deliveries));
}

export class OperationUrlReports {
  constructor(private readonly deps: { store: Store; ingest: ReportIngest }) {}

  /** Applied to the operation's buy; null when it is no report, or the operation made no buy (then it is judged as any delivery). */
  async atOperation(op: WebhookTarget, d: AuthenticatedDelivery): Promise<IngestOutcome | null> {
    if (op.type !== 'create_media_buy' || !isDeliveryReport(d.claims)) return null;
    return this.applyBody(op, { text: d.text, fingerprint: d.fingerprint, nonce: d.nonce });
  }

  /** The body of a delivery report at the operation's URL, applied to its buy; null when the operation made none. */
  async applyBody(op: WebhookTarget, d: OperationUrlBody): Promise<IngestOutcome | null> {
    if (op.type !== 'create_media_buy') return null;
    const buy = await this.deps.store.mediaBuys.byOperation(op.id);
    if (!buy) return null;
    const read = this.deps.ingest.read(JSON.parse(d.text));
    if (!read.ok) {
      await this.deps.ingest.refused(buy, read.code, read.message);
      return { kind: 'result_invalid', issues: [{ path: '/', message: `${read.code}: ${read.message}` }] };
    }
    const outcome = await this.deps.ingest.ingest({ target: buy, reading: read.reading, fingerprint: d.fingerprint, text: d.text, nonce: d.nonce });
    switch (outcome.kind) {
      case 'applied':
        return { kind: 'applied', outcome: 'delivery_report' };
      case 'duplicate':
        return { kind: 'duplicate', refused: false };
      default:
        return outcome;
    }
  }
}
