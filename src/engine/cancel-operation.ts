/**
 * Canceling an operation on a person's word (POST /v1/operations/:id/cancel).
 *
 * What "cancel" can mean depends on how far the work got, and we say which it was:
 * - a media buy the seller already created (a completed create_media_buy) is canceled
 *   at the seller with `update_media_buy {canceled: true}`, its own durable child
 *   operation with its own key, retries and history; the original stays `completed`
 *   (a terminal status never changes) and gets an event pointing at the child;
 * - work still pending ends `canceled` here. AdCP 3.0 gives a buyer no call that
 *   cancels a pending task, so the seller is not told: the event says so, and if the
 *   seller still reports an ending, it is recorded as a conflict people are told about;
 * - work that already ended otherwise has nothing left to cancel: 409.
 *
 * The decision is taken on the locked row, so a reply landing at the same moment
 * either wins (and the cancel sees an ended operation) or loses (and becomes a conflict).
 */
import { isTerminal, type OperationStatus } from '../domain/status.js';
import type { OperationRow, Store } from '../store/index.js';
import type { ChangeBus } from './change-bus.js';
import type { Clock } from './clock.js';
import { EngineError, notFound } from './errors.js';
import type { Metrics } from './metrics.js';
import type { OperationService } from './operation-service.js';

export interface CancelRequest {
  tenantId: string;
  operationId: string;
  actor: string;
  reason?: string;
}

export interface CancelOutcome {
  operation: OperationRow;
  /** The update_media_buy that cancels the buy at the seller, when there is one. */
  sellerCancel?: OperationRow;
}

type Decision =
  | { kind: 'canceled_here'; from: string }
  | { kind: 'cancel_at_seller'; mediaBuyId: string }
  | { kind: 'ended'; status: string };

/** What the seller was told, in the words the event and the API show. */
function sellerNote(row: OperationRow): string {
  if (row.status === 'requested') return 'nothing had been sent to the seller';
  if (row.status === 'calling_adcp') {
    return 'the request may have reached the seller (no reply yet); AdCP has no call to cancel a pending task, so the seller was not told — if it still reports an ending, it is recorded as a conflict';
  }
  return 'AdCP has no call to cancel a pending task, so the seller was not told; tracking stopped here — if the seller still reports an ending, it is recorded as a conflict';
}

/** AdCP's `cancellation_reason` holds up to 500 characters; a person may write 1000 (CancelReason). */
const MAX_CANCELLATION_REASON = 500;

/** The reason as the seller gets it: cut to what its schema allows (our event keeps it whole), by code point. */
function sellerReason(reason: string): string {
  const chars = Array.from(reason);
  return chars.length <= MAX_CANCELLATION_REASON ? reason : chars.slice(0, MAX_CANCELLATION_REASON - 1).join('') + '…';
}

function mediaBuyIdOf(row: OperationRow): string | undefined {
  if (row.type !== 'create_media_buy' || row.status !== 'completed' || !row.result) return undefined;
  const id = (JSON.parse(row.result) as { media_buy_id?: unknown }).media_buy_id;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}

export class CancelService {
  constructor(
    private readonly store: Store,
    private readonly operations: OperationService,
    private readonly bus: ChangeBus,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
  ) {}

  async cancel(req: CancelRequest): Promise<CancelOutcome> {
    const existing = await this.store.operations.getForTenant(req.tenantId, req.operationId);
    if (!existing) throw notFound('operation', req.operationId);
    const now = this.clock.now();
    const reason = req.reason ?? `canceled by ${req.actor}`;

    const result = await this.store.operations.mutate<Decision>(
      existing.id,
      null,
      (row) => {
        if (!isTerminal(row.status as OperationStatus)) {
          return {
            patch: { status: 'canceled', status_since: now, completed_at: now, needs_input: 0, input_request: null, next_check_at: null, check_kind: null },
            events: [{ source: 'user', kind: 'transition', from: row.status, to: 'canceled', actor: req.actor, detail: { reason, seller: sellerNote(row) } }],
            value: { kind: 'canceled_here', from: row.status },
          };
        }
        const mediaBuyId = mediaBuyIdOf(row);
        return { value: mediaBuyId ? { kind: 'cancel_at_seller', mediaBuyId } : { kind: 'ended', status: row.status } };
      },
      now,
    );
    if (result.outcome === 'not_found' || result.outcome === 'lease_lost') throw notFound('operation', req.operationId);

    const decision = result.value;
    if (decision.kind === 'canceled_here') {
      if (result.outcome === 'applied') {
        this.bus.publish({ operation: result.row, events: result.events, notifications: result.notifications });
        this.metrics.transition(result.row.type, decision.from, 'canceled', 'user');
      }
      return { operation: result.row };
    }
    if (decision.kind === 'ended') {
      throw new EngineError('not_cancelable', `operation ${existing.id} already ended ${decision.status}: there is nothing left to cancel`, 409, {
        status: decision.status,
      });
    }
    return this.cancelAtSeller(result.row, decision.mediaBuyId, reason, req.actor);
  }

  /** The buy exists at the seller: cancel it there, as a child operation of its own. */
  private async cancelAtSeller(row: OperationRow, mediaBuyId: string, reason: string, actor: string): Promise<CancelOutcome> {
    // Only an earlier cancel counts: a pause or resume of the buy is an update_media_buy child too.
    const earlier = (await this.store.operations.childrenOf(row.id)).find(
      (c) => c.type === 'update_media_buy' && c.status !== 'failed' && c.status !== 'rejected' && (JSON.parse(c.request_body) as { canceled?: unknown }).canceled === true,
    );
    if (earlier) {
      throw new EngineError('already_canceling', `media buy ${mediaBuyId} is already being canceled by operation ${earlier.id} (${earlier.status})`, 409, {
        operation_id: earlier.id,
        status: earlier.status,
      });
    }
    const request = JSON.parse(row.request_body) as { account?: unknown };
    const child = await this.operations.createAndStart({
      tenantId: row.tenant_id,
      agentId: row.agent_id,
      task: 'update_media_buy',
      params: { account: request.account, media_buy_id: mediaBuyId, canceled: true, cancellation_reason: sellerReason(reason) },
      parentId: row.id,
      actor,
      // One cancel per buy: a retried request reaches the same child (and the seller sees the same key).
      clientKey: `cancel:${row.id}`,
    });
    const now = this.clock.now();
    const noted = await this.store.operations.mutate(
      row.id,
      null,
      (current) => ({
        events: [
          {
            source: 'user',
            kind: 'cancel_requested',
            from: current.status,
            to: current.status,
            actor,
            detail: { reason, media_buy_id: mediaBuyId, operation_id: child.id },
          },
        ],
        value: null,
      }),
      now,
    );
    if (noted.outcome === 'applied') this.bus.publish({ operation: noted.row, events: noted.events, notifications: noted.notifications });
    return { operation: noted.outcome === 'applied' ? noted.row : row, sellerCancel: child };
  }
}
