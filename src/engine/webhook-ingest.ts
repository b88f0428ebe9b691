/**
 * The engine's one entry for an inbound webhook: "ingest this authenticated
 * delivery". The receiver (src/webhooks/) has authenticated the sender and
 * parsed the body; from here on only the engine touches the store, so a webhook
 * crosses webhooks → engine → store → domain once each.
 *
 * In order: correlation (the bound task id, the claimed operation, the task
 * type), the terminal result checked against the task's response schema, then
 * durable dedupe and apply in ONE write transaction (group-committed on SQLite),
 * whose promise settles only after the commit: a caller acknowledges nothing
 * that is not durable. The delivery row is written already applied, in that
 * transaction, by the same statement that dedupes it. If that transaction fails, the delivery is stored on its
 * own and applied after; a delivery stored but never applied is picked up by
 * `applyStored` (the recovery sweep).
 *
 * Outcomes are values for the receiver to turn into HTTP answers.
 */
import type { Logger } from 'pino';
import { validateTaskResult, type ResultIssue } from '../adcp/task-result.js';
import type { AdcpError } from '../adcp/types.js';
import type { AdcpTaskStatus } from '../domain/status.js';
import type { AgentRow, Store } from '../store/index.js';
import type { NewDelivery, RecordResult } from '../store/deliveries-repo.js';
import type { WebhookTarget } from '../store/operations-repo.js';
import { inWriteBatch, inWriteTransaction, type Tx } from '../store/tx.js';
import { WebhookTargets } from './webhook-targets.js';
import { WebhookBatch, type StoredAndApplied, type WebhookBatchItem } from './webhook-batch.js';
import { databaseUnavailable } from '../store/db-errors.js';
import { taskTypeConflictEvent } from './conflict-events.js';
import type { Metrics } from './metrics.js';
import type { TaskObservation } from './observation-plan.js';
import type { OperationService } from './operation-service.js';

/** What the body of an authenticated delivery says (the receiver's parse of it, src/webhooks/extract.ts). */
export interface DeliveryClaims {
  /** The AdCP task id the delivery is about (see taskIdSource). */
  taskId: string;
  /**
   * Where taskId came from: the AdCP `task_id` field, or, for an A2A body that carries
   * none, the A2A Task id, which is never bound as the AdCP task id (AdCP spec, roles,
   * transports, identifiers): correlation weighs an 'a2a' id accordingly.
   */
  taskIdSource: 'adcp' | 'a2a';
  status: AdcpTaskStatus;
  /** The sender's timestamp, epoch ms, when present and parseable. */
  timestamp?: number;
  idempotencyKey?: string;
  operationId?: string;
  taskType?: string;
  contextId?: string;
  message?: string;
  /** The AdCP data (MCP `result`, A2A DataPart), or null when there is none. */
  data: Record<string, unknown> | null;
  /** The first AdCP error carried in the data (`adcp_error`, else `errors[0]`). */
  error?: AdcpError;
}

export interface AuthenticatedDelivery {
  /** The operation its URL names, as read before authenticating. */
  operation: WebhookTarget;
  claims: DeliveryClaims;
  /** Canonical fingerprint of the body (the dedupe payload check). */
  fingerprint: string;
  /** The body as received, decoded once: what is stored. */
  text: string;
  /**
   * The RFC 9421 nonce its signature carried, when it had one: inserted first in
   * the delivery's own transaction (one commit for both); a replay or a key at
   * its cap found there refuses the delivery before anything is written.
   */
  nonce?: PendingNonce;
}

/** An authenticated body at an operation's URL, strictly parsed, whose envelope is no task's (a delivery report's may lack task_id). */
export interface OperationUrlBody {
  text: string;
  fingerprint: string;
  nonce?: PendingNonce;
}

export interface PendingNonce {
  keyid: string;
  nonce: string;
  expiresAtMs: number;
  nowMs: number;
}

export type IngestOutcome =
  | { kind: 'applied'; outcome: string }
  | { kind: 'result_invalid'; issues: ResultIssue[] }
  /** An applied duplicate; `refused` when the original was refused for its result. */
  | { kind: 'duplicate'; refused: boolean }
  | { kind: 'in_flight' }
  | { kind: 'payload_mismatch' }
  | { kind: 'task_conflict' }
  | { kind: 'task_type_conflict'; observed: string; bound: string }
  | { kind: 'apply_failed' }
  /** Its nonce was a replay, or its key is at its nonce cap: nothing was written. */
  | { kind: 'refused'; reason: 'webhook_signature_replayed' | 'webhook_signature_rate_abuse' };

export interface WebhookIngestDeps {
  store: Store;
  operations: OperationService;
  metrics: Metrics;
  log: Logger;
  now?: () => number;
  /** Delivery reports sent to a create's own URL go to its buy (src/engine/media-buys/operation-url-reports.ts). */
  reports?: {
    atOperation(op: WebhookTarget, d: AuthenticatedDelivery): Promise<IngestOutcome | null>;
    applyBody(op: WebhookTarget, body: OperationUrlBody): Promise<IngestOutcome | null>;
  };
}

type Refusal = Extract<IngestOutcome, { kind: 'refused' }>['reason'];

class Refused extends Error {
  constructor(readonly reason: Refusal) {
    super(`delivery refused: ${reason}`);
  }
}

export class WebhookIngest {
  private readonly batch: WebhookBatch;
  private readonly targets: WebhookTargets;

  constructor(private readonly deps: WebhookIngestDeps) {
    this.batch = new WebhookBatch({ store: deps.store, operations: deps.operations });
    this.targets = new WebhookTargets((token) => deps.store.operations.findWebhookTarget(token));
  }

  /** The operation a webhook URL names, or undefined (kept per process once its task is bound: webhook-targets.ts). */
  target(token: string): Promise<WebhookTarget | undefined> {
    return this.targets.get(token);
  }

  /** The agent that registered an operation (whose keys sign its RFC 9421 webhooks). */
  agent(agentId: string): Promise<AgentRow | undefined> {
    return this.deps.store.agents.get(agentId);
  }

  async ingest(d: AuthenticatedDelivery): Promise<IngestOutcome> {
    const op = d.operation;
    // A seller reporting a live buy's delivery through the create's own URL: applied to the buy.
    const report = this.deps.reports ? await this.deps.reports.atOperation(op, d) : null;
    if (report) return report;
    const conflict = await this.correlationConflict(op, d.claims);
    if (conflict) return conflict;
    const observation = this.observationOf(op, d.claims);
    const delivery: NewDelivery = {
      sender: op.agent_id,
      // A2A bodies may carry no key: a delivery is then identified by its content.
      idempotencyKey: d.claims.idempotencyKey ?? `content:${d.fingerprint}`,
      fingerprint: d.fingerprint,
      operationId: op.id,
      payload: d.text,
    };

    let together: StoredAndApplied;
    const now = this.now();
    const item: WebhookBatchItem = { op, observation, delivery, nonce: d.nonce, now };
    try {
      // Batched with the other deliveries of its group commit when it can be (webhook-batch.ts); else this, its own job.
      together = await inWriteBatch(this.deps.store.db, this.batch, item, async (trx) => {
        if (d.nonce) {
          const refusal = await this.insertNonce(trx, d.nonce);
          if (refusal) throw new Refused(refusal);
        }
        // The delivery is stored already applied, with its outcome, once the plan has
        // decided and before the change is written: one statement dedupes and marks it.
        // A duplicate abandons the change (nothing of it is written).
        const stored: { recorded?: RecordResult } = {};
        const applied = await this.deps.operations.observeIn(trx, op.id, null, observation, async (t, outcome) => {
          stored.recorded = await this.deps.store.deliveries.recordAppliedIn(t, delivery, outcome, now);
          return stored.recorded.kind === 'new' ? undefined : 'abandon';
        });
        // No operation to apply it to (gone since its URL was read): stored as received, as before.
        const recorded = stored.recorded ?? (await this.deps.store.deliveries.recordIn(trx, delivery, now));
        if (recorded.kind !== 'new') return { recorded };
        return { recorded, applied };
      });
    } catch (err) {
      if (err instanceof Refused) return { kind: 'refused', reason: err.reason };
      // The database is away: nothing was stored, and trying again in another way now would fail the
      // same. The sender gets 503 database_unavailable and retries.
      if (databaseUnavailable(err)) throw err;
      // Nothing of it committed. Store it on its own, then apply: if applying fails
      // again the stored row waits for the recovery sweep.
      this.deps.log.warn({ err, operation_id: op.id }, 'webhook: recording and applying together failed; storing first');
      return this.storeThenApply(op, delivery, observation, d.nonce);
    }
    const duplicate = duplicateOutcome(together.recorded);
    if (duplicate) return duplicate;
    const applied = together.applied!;
    await this.deps.operations.observed(op.id, applied);
    return this.outcomeOf(op, applied.outcome === 'not_found' || applied.outcome === 'lease_lost' ? applied.outcome : applied.value, observation);
  }

  /** A delivery report at a create's own URL whose envelope is no task's: applied to the buy, or null when it cannot be. */
  reportAtOperation(op: WebhookTarget, body: OperationUrlBody): Promise<IngestOutcome | null> {
    return this.deps.reports ? this.deps.reports.applyBody(op, body) : Promise.resolve(null);
  }

  /** Deliveries stored before `olderThan` and never applied (the recovery sweep's work). */
  pendingDeliveries(olderThan: number, limit: number): Promise<Array<{ id: string; operation_id: string; payload: string }>> {
    return this.deps.store.deliveries.pending(olderThan, limit);
  }

  /** Applies a stored delivery (the recovery sweep's entry) and marks it applied in the same transaction. */
  async applyStored(operationId: string, deliveryId: string, claims: DeliveryClaims): Promise<string> {
    const op = await this.deps.store.operations.get(operationId);
    if (!op) return 'not_found';
    return this.applyObservation(operationId, deliveryId, this.observationOf(op, claims));
  }

  /** Two commits: the delivery is stored, then applied (kept for when the grouped transaction fails). */
  private async storeThenApply(op: WebhookTarget, delivery: NewDelivery, observation: TaskObservation, nonce: PendingNonce | undefined): Promise<IngestOutcome> {
    let recorded: RecordResult;
    if (nonce) {
      const r = await inWriteTransaction(this.deps.store.db, async (trx) => {
        const refusal = await this.insertNonce(trx, nonce);
        return refusal ? { refusal } : { recorded: await this.deps.store.deliveries.recordIn(trx, delivery, this.now()) };
      });
      if ('refusal' in r) return { kind: 'refused', reason: r.refusal! };
      recorded = r.recorded!;
    } else {
      recorded = await this.deps.store.deliveries.record(delivery, this.now());
    }
    const duplicate = duplicateOutcome(recorded);
    if (duplicate) return duplicate;
    try {
      return this.outcomeOf(op, await this.applyObservation(op.id, recorded.delivery.id, observation), observation);
    } catch (err) {
      // Stored but not applied: the recovery sweep applies it; the sender's retry gets 503 until then.
      if (databaseUnavailable(err)) throw err;
      this.deps.log.error({ err, operation_id: op.id }, 'webhook stored but not applied');
      return { kind: 'apply_failed' };
    }
  }

  /**
   * Records a verified signature's nonce on its own, for a delivery refused before
   * its transaction (unparseable, a correlation conflict): its replays are then
   * refused as replays, as before any of it was read.
   */
  async consumeNonce(nonce: PendingNonce): Promise<void> {
    await inWriteTransaction(this.deps.store.db, (trx) => this.insertNonce(trx, nonce));
  }

  private async insertNonce(trx: Tx, n: PendingNonce): Promise<Refusal | null> {
    const r = await this.deps.store.nonces.checkAndInsertOn(trx, n.keyid, n.nonce, n.expiresAtMs, n.nowMs);
    if (r === 'fresh') return null;
    return r === 'replayed' ? 'webhook_signature_replayed' : 'webhook_signature_rate_abuse';
  }

  private async applyObservation(operationId: string, deliveryId: string, observation: TaskObservation): Promise<string> {
    const result = await this.deps.operations.observe(operationId, null, observation, (trx, outcome) =>
      this.deps.store.deliveries.markApplied(trx, deliveryId, outcome, this.now()),
    );
    if (result.outcome === 'not_found' || result.outcome === 'lease_lost') return result.outcome;
    return result.value;
  }

  /**
   * The observation a delivery stands for, its terminal result checked against the
   * operation's task response schema (AdCP spec, webhooks "schema-validate"): the result
   * must be the original task's, whatever the body calls itself.
   */
  private observationOf(op: WebhookTarget, claims: DeliveryClaims): TaskObservation {
    const observation: TaskObservation = {
      status: claims.status,
      source: 'webhook',
      taskId: claims.taskIdSource === 'adcp' ? claims.taskId : undefined,
      contextId: claims.contextId,
      message: claims.message,
      timestamp: claims.timestamp,
      data: claims.data ?? undefined,
      error: claims.error,
      deliveryKey: claims.idempotencyKey,
    };
    // An empty object is how some senders write "no result", and it is stored as none.
    if (claims.data && Object.keys(claims.data).length > 0) {
      const check = validateTaskResult(op.type, claims.data, claims.status);
      if (!check.ok) observation.resultIssues = check.issues;
    }
    return observation;
  }

  private outcomeOf(op: WebhookTarget, outcome: string, observation: TaskObservation): IngestOutcome {
    if (outcome !== 'result_invalid') return { kind: 'applied', outcome };
    const issues = observation.resultIssues ?? [];
    this.deps.log.warn(
      { operation_id: op.id, task_type: op.type, status: observation.status, idempotency_key: observation.deliveryKey, issues: issues.slice(0, 3) },
      'webhook result does not match the task response schema: kept as a conflict, not applied',
    );
    return { kind: 'result_invalid', issues };
  }

  /**
   * Correlation (AdCP spec, roles, transports, identifiers, webhooks): the seller's task id is the work handle. Once bound
   * it must repeat; a delivery naming another task, or another operation, is a conflict;
   * so is one naming another task type (taskTypeConflict).
   */
  private async correlationConflict(op: WebhookTarget, claims: DeliveryClaims): Promise<IngestOutcome | null> {
    const mismatch =
      (claims.operationId !== undefined && claims.operationId !== op.id) ||
      (claims.taskIdSource === 'adcp' && op.task_id !== null && claims.taskId !== op.task_id);
    let otherOwner = false;
    if (!mismatch && claims.taskIdSource === 'adcp' && op.task_id === null) {
      const owner = await this.deps.store.operations.findByTask(op.agent_id, claims.taskId);
      otherOwner = owner !== undefined && owner.id !== op.id;
    }
    if (!mismatch && !otherOwner) {
      // The right task of the right operation: it must also be the operation's kind of task.
      return claims.taskType !== undefined && claims.taskType !== op.type ? this.taskTypeConflict(op, claims) : null;
    }
    const recorded = await this.deps.store.operations.mutate(op.id, null, () => ({
      events: [
        {
          source: 'webhook',
          kind: 'task_conflict',
          detail: { bound_task_id: op.task_id, observed_task_id: claims.taskId, observed_operation_id: claims.operationId ?? null },
        },
      ],
      value: null,
    }));
    // Published like any other change: the conflict is a notification people must see.
    await this.deps.operations.observed(op.id, recorded);
    this.deps.metrics.conflict(op.type);
    return { kind: 'task_conflict' };
  }

  /**
   * `task_type` is a bound identity of the operation (async-identity-and-convergence:
   * "task_type, operation, account, and principal bindings are validated constraints …
   * a mismatch is a correlation conflict"): a delivery report on a create_media_buy
   * operation must not complete it. Audited as a `conflict` event and alarmed; the
   * delivery is not stored or applied, and the sender is told 409 so it stops.
   */
  private async taskTypeConflict(op: WebhookTarget, claims: DeliveryClaims): Promise<IngestOutcome> {
    const observed = { taskType: claims.taskType!, status: claims.status, deliveryKey: claims.idempotencyKey, source: 'webhook' };
    const recorded = await this.deps.store.operations.mutate(
      op.id,
      null,
      (row) => ({ events: [taskTypeConflictEvent(row, observed)], value: 'task_type_conflict' as const }),
      this.now(),
    );
    // Publishes the event to live streams at once.
    await this.deps.operations.observed(op.id, recorded);
    this.deps.log.warn(
      { operation_id: op.id, bound_task_type: op.type, observed_task_type: observed.taskType, status: claims.status, idempotency_key: claims.idempotencyKey },
      'webhook names another task type than its operation: refused as a correlation conflict',
    );
    return { kind: 'task_type_conflict', observed: observed.taskType, bound: op.type };
  }

  private readonly now = (): number => (this.deps.now ?? Date.now)();
}

function duplicateOutcome(recorded: RecordResult): IngestOutcome | null {
  switch (recorded.kind) {
    case 'duplicate_applied':
      return { kind: 'duplicate', refused: recorded.delivery.outcome === 'result_invalid' };
    case 'duplicate_in_flight':
      return { kind: 'in_flight' };
    case 'payload_mismatch':
      return { kind: 'payload_mismatch' };
    default:
      return null;
  }
}
