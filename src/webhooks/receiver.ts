/**
 * The inbound webhook pipeline (PROTOCOL.md §5), in the spec's order:
 * content type → size → authenticate in the registered mode (never another) →
 * strict parse → envelope → correlate (operation, task id, task type) → check the
 * terminal result against the task's response schema → dedupe and store → converge
 * → acknowledge.
 *
 * It returns what to answer instead of touching HTTP, so the Fastify route stays
 * thin and the pipeline can be driven directly by tests and benchmarks.
 */
import type { Logger } from 'pino';
import type { OperationService } from '../engine/operation-service.js';
import type { Metrics } from '../engine/metrics.js';
import type { Store, OperationRow } from '../store/index.js';
import type { SecretBox } from '../store/secret-box.js';
import { verifyBearerWebhook } from './bearer.js';
import type { HeaderBag } from './headers.js';
import { checkHmacSecret, verifyHmacWebhook } from './hmac.js';
import type { AgentKeySources } from './key-sources.js';
import { parseDelivery } from './parse-delivery.js';
import type { AuthResult } from './result.js';
import { authenticateRfc9421 } from './rfc9421.js';
import type { WebhookPayload } from './extract.js';
import type { NewDelivery, RecordResult } from '../store/deliveries-repo.js';
import type { MutateResult } from '../store/operations-repo.js';
import { inWriteTransaction } from '../store/tx.js';
import type { ObservationOutcome, TaskObservation } from '../engine/observation-plan.js';
import { taskTypeConflictEvent } from '../engine/conflict-events.js';
import { validateTaskResult, type ResultIssue } from '../adcp/task-result.js';

export const MAX_WEBHOOK_BYTES = 1024 * 1024;
const OPENED_SECRETS_MAX = 10_000;

export interface InboundWebhook {
  token: string;
  method: string;
  /** The full URL the sender signed: our public base + the request path and query. */
  targetUrl: string;
  headers: HeaderBag;
  rawBody: Buffer;
}

export interface WebhookAnswer {
  statusCode: number;
  headers?: Record<string, string>;
  body: unknown;
  /** The metric label for what happened. */
  outcome: string;
}

export interface ReceiverDeps {
  store: Store;
  operations: OperationService;
  secrets: SecretBox;
  keySources: AgentKeySources;
  metrics: Metrics;
  log: Logger;
  now?: () => number;
}

const fail = (statusCode: number, code: string, message: string, headers?: Record<string, string>): WebhookAnswer => ({
  statusCode,
  headers,
  body: { error: { code, message } },
  outcome: code,
});

export class WebhookReceiver {
  constructor(private readonly deps: ReceiverDeps) {}

  async receive(req: InboundWebhook): Promise<WebhookAnswer> {
    const answer = await this.pipeline(req);
    this.deps.metrics.webhook(answer.outcome);
    if (answer.statusCode >= 400) this.deps.log.warn({ outcome: answer.outcome, status: answer.statusCode }, 'webhook refused');
    return answer;
  }

  private async pipeline(req: InboundWebhook): Promise<WebhookAnswer> {
    const contentType = String(req.headers['content-type'] ?? '');
    if (!/^application\/json\s*(;|$)/i.test(contentType)) {
      return fail(415, 'webhook_content_type_invalid', 'Content-Type must be application/json');
    }
    if (req.rawBody.length > MAX_WEBHOOK_BYTES) return fail(413, 'webhook_body_too_large', 'body exceeds 1 MB');

    const op = await this.deps.store.operations.findByWebhookToken(req.token);
    if (!op || op.webhook_mode === 'none') return fail(404, 'webhook_target_unknown', 'no operation is registered at this URL');

    const auth = await this.authenticate(op, req);
    if (!auth.ok) {
      if (auth.transient) return fail(503, auth.code, auth.message, { 'retry-after': '5' });
      return fail(401, auth.code, auth.message, { 'www-authenticate': `Signature error="${auth.code}"` });
    }

    const parsed = parseDelivery(req.rawBody);
    if (!parsed.ok) return fail(400, parsed.code, parsed.message);
    const { payload, fingerprint } = parsed;

    const conflict = await this.correlationConflict(op, payload);
    if (conflict) return conflict;
    const observation = this.observationOf(op, payload);

    const delivery: NewDelivery = {
      sender: op.agent_id,
      // A2A bodies may carry no key: a delivery is then identified by its content.
      idempotencyKey: payload.idempotencyKey ?? `content:${fingerprint}`,
      fingerprint,
      operationId: op.id,
      payload: parsed.text,
    };

    // Dedupe insert and apply in ONE write transaction (group-committed on SQLite):
    // one commit per new delivery, acknowledged only after it.
    let together: { recorded: RecordResult; applied?: MutateResult<ObservationOutcome> };
    try {
      together = await inWriteTransaction(this.deps.store.db, async (trx) => {
        const now = this.now();
        const recorded = await this.deps.store.deliveries.recordIn(trx, delivery, now);
        if (recorded.kind !== 'new') return { recorded };
        const applied = await this.deps.operations.observeIn(trx, op.id, null, observation, (t, outcome) =>
          this.deps.store.deliveries.markApplied(t, recorded.delivery.id, outcome, now),
        );
        return { recorded, applied };
      });
    } catch (err) {
      // Nothing of it committed. Store it on its own, then apply: if applying fails
      // again the stored row waits for the recovery sweep.
      this.deps.log.warn({ err, operation_id: op.id }, 'webhook: recording and applying together failed; storing first');
      return this.storeThenApply(op, delivery, observation);
    }
    const refused = this.duplicateAnswer(together.recorded);
    if (refused) return refused;
    const applied = together.applied!;
    await this.deps.operations.observed(op.id, applied);
    return this.answerFor(op, applied.outcome === 'not_found' || applied.outcome === 'lease_lost' ? applied.outcome : applied.value, observation);
  }

  /** Two commits: the delivery is stored, then applied (the path before group commit, kept for when the apply fails). */
  private async storeThenApply(op: OperationRow, delivery: NewDelivery, observation: TaskObservation): Promise<WebhookAnswer> {
    const recorded = await this.deps.store.deliveries.record(delivery, this.now());
    const refused = this.duplicateAnswer(recorded);
    if (refused) return refused;
    try {
      return this.answerFor(op, await this.applyObservation(op.id, recorded.delivery.id, observation), observation);
    } catch (err) {
      // Stored but not applied: the recovery sweep applies it; the sender's retry gets 503 until then.
      this.deps.log.error({ err, operation_id: op.id }, 'webhook stored but not applied');
      return fail(503, 'webhook_apply_failed', 'stored; not yet applied', { 'retry-after': '5' });
    }
  }

  private duplicateAnswer(recorded: RecordResult): WebhookAnswer | null {
    switch (recorded.kind) {
      case 'duplicate_applied':
        // A retry of a delivery refused for its result gets the same refusal, not a 2xx that would say it was taken.
        if (recorded.delivery.outcome === 'result_invalid') return resultRefused();
        return { statusCode: 200, body: { status: 'duplicate' }, outcome: 'duplicate' };
      case 'duplicate_in_flight':
        return fail(503, 'webhook_in_flight', 'this delivery is still being applied; retry shortly', { 'retry-after': '1' });
      case 'payload_mismatch':
        return fail(409, 'webhook_idempotency_conflict', 'this idempotency_key was delivered before with a different payload');
      default:
        return null;
    }
  }

  /** Applies a stored delivery (the recovery sweep's entry) and marks it applied in the same transaction. */
  async apply(operationId: string, deliveryId: string, payload: WebhookPayload): Promise<string> {
    const op = await this.deps.store.operations.get(operationId);
    if (!op) return 'not_found';
    return this.applyObservation(operationId, deliveryId, this.observationOf(op, payload));
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
   * operation's task response schema (PROTOCOL.md §5 "schema-validate"): the result
   * must be the original task's, whatever the body calls itself.
   */
  private observationOf(op: OperationRow, payload: WebhookPayload): TaskObservation {
    const observation = observationFrom(payload);
    // An empty object is how some senders write "no result", and it is stored as none.
    if (payload.data && Object.keys(payload.data).length > 0) {
      const check = validateTaskResult(op.type, payload.data, payload.status);
      if (!check.ok) observation.resultIssues = check.issues;
    }
    return observation;
  }

  private answerFor(op: OperationRow, outcome: string, observation: TaskObservation): WebhookAnswer {
    if (outcome !== 'result_invalid') return acceptedAnswer(outcome);
    const issues = observation.resultIssues ?? [];
    this.deps.log.warn(
      { operation_id: op.id, task_type: op.type, status: observation.status, idempotency_key: observation.deliveryKey, issues: issues.slice(0, 3) },
      'webhook result does not match the task response schema: kept as a conflict, not applied',
    );
    return resultRefused(issues);
  }

  private async authenticate(op: OperationRow, req: InboundWebhook): Promise<AuthResult> {
    switch (op.webhook_mode) {
      case 'hmac': {
        const secret = this.secret(op);
        // Fail closed on a weak registered secret (webhook-hmac-sha256.json secret_rejection_vectors):
        // the engine only generates 32 random bytes, but a row holding a short or no-entropy
        // secret (older code, a hand edit) must not authenticate deliveries. Found by the
        // route-level vector tests, which got 200 for a delivery MACed with a 31-byte secret.
        const strength = checkHmacSecret(secret);
        if (!strength.ok) {
          this.deps.log.error({ operation_id: op.id }, `webhook HMAC secret refused: ${strength.message}`);
          return { ok: false, code: 'webhook_signature_invalid', message: 'the secret registered for this webhook is not acceptable' };
        }
        return verifyHmacWebhook({ headers: req.headers, rawBody: req.rawBody }, { secret }, this.now);
      }
      case 'bearer':
        return verifyBearerWebhook(req.headers, { token: this.secret(op) }, this.now);
      default: {
        const agent = await this.deps.store.agents.get(op.agent_id);
        const keys = agent ? this.deps.keySources.for(agent) : null;
        if (!keys) return { ok: false, code: 'webhook_signature_key_unknown', message: 'the agent has no webhook signing keys registered' };
        return authenticateRfc9421(
          { method: req.method, url: req.targetUrl, headers: req.headers, rawBody: req.rawBody },
          { keys, replayStore: this.deps.store.nonces, now: this.now },
        );
      }
    }
  }

  /**
   * Correlation (PROTOCOL.md §1, §5): the seller's task id is the work handle. Once bound
   * it must repeat; a delivery naming another task, or another operation, is a conflict;
   * so is one naming another task type (taskTypeConflict).
   */
  private async correlationConflict(op: OperationRow, payload: WebhookPayload): Promise<WebhookAnswer | null> {
    const mismatch =
      (payload.operationId !== undefined && payload.operationId !== op.id) ||
      (payload.taskIdSource === 'adcp' && op.task_id !== null && payload.taskId !== op.task_id);
    let otherOwner = false;
    if (!mismatch && payload.taskIdSource === 'adcp' && op.task_id === null) {
      const owner = await this.deps.store.operations.findByTask(op.agent_id, payload.taskId);
      otherOwner = owner !== undefined && owner.id !== op.id;
    }
    if (!mismatch && !otherOwner) {
      // The right task of the right operation: it must also be the operation's kind of task.
      return payload.taskType !== undefined && payload.taskType !== op.type ? this.taskTypeConflict(op, payload) : null;
    }
    const recorded = await this.deps.store.operations.mutate(op.id, null, () => ({
      events: [
        {
          source: 'webhook',
          kind: 'task_conflict',
          detail: { bound_task_id: op.task_id, observed_task_id: payload.taskId, observed_operation_id: payload.operationId ?? null },
        },
      ],
      value: null,
    }));
    // Published like any other change: the conflict is a notification people must see.
    await this.deps.operations.observed(op.id, recorded);
    this.deps.metrics.conflict(op.type);
    return fail(409, 'webhook_task_conflict', 'the delivery names a task or operation other than the one registered at this URL');
  }

  /**
   * `task_type` is a bound identity of the operation (async-identity-and-convergence:
   * "task_type, operation, account, and principal bindings are validated constraints …
   * a mismatch is a correlation conflict"): a delivery report on a create_media_buy
   * operation must not complete it. Audited as a `conflict` event and alarmed; the
   * delivery is not stored or applied, and the sender is told 409 so it stops.
   */
  private async taskTypeConflict(op: OperationRow, payload: WebhookPayload): Promise<WebhookAnswer> {
    const observed = { taskType: payload.taskType!, status: payload.status, deliveryKey: payload.idempotencyKey, source: 'webhook' };
    const recorded = await this.deps.store.operations.mutate(
      op.id,
      null,
      (row) => ({ events: [taskTypeConflictEvent(row, observed)], value: 'task_type_conflict' as const }),
      this.now(),
    );
    // Publishes the event to live streams at once.
    await this.deps.operations.observed(op.id, recorded);
    this.deps.log.warn(
      { operation_id: op.id, bound_task_type: op.type, observed_task_type: observed.taskType, status: payload.status, idempotency_key: payload.idempotencyKey },
      'webhook names another task type than its operation: refused as a correlation conflict',
    );
    return fail(409, 'webhook_task_type_conflict', `the delivery is about a ${observed.taskType} task; the operation registered at this URL is ${op.type}`);
  }

  private readonly now = (): number => (this.deps.now ?? Date.now)();

  /**
   * Opened secrets, keyed by their sealed form (a changed secret is a new key), kept
   * in this process's memory only: an operation gets several deliveries, and an
   * AES-GCM open per delivery showed in the profile. Bounded; oldest out first.
   */
  private readonly opened = new Map<string, string>();

  private secret(op: OperationRow): string {
    const sealed = op.webhook_secret_enc;
    if (!sealed) throw new Error(`operation ${op.id} has no webhook secret`);
    let plain = this.opened.get(sealed);
    if (plain === undefined) {
      plain = this.deps.secrets.open(sealed);
      if (this.opened.size >= OPENED_SECRETS_MAX) this.opened.delete(this.opened.keys().next().value!);
      this.opened.set(sealed, plain);
    }
    return plain;
  }
}

function observationFrom(payload: WebhookPayload): TaskObservation {
  return {
    status: payload.status,
    source: 'webhook',
    taskId: payload.taskIdSource === 'adcp' ? payload.taskId : undefined,
    contextId: payload.contextId,
    message: payload.message,
    timestamp: payload.timestamp,
    data: payload.data ?? undefined,
    error: payload.error,
    deliveryKey: payload.idempotencyKey,
  };
}

/**
 * A terminal result that fails the task's response schema: 409, after the refusal is
 * durably recorded (the delivery row, marked applied with outcome `result_invalid`, and
 * the conflict event commit together before this answer).
 *
 * Why 409 and not 2xx: a 2xx tells the sender (and its webhook_activity log) the delivery
 * was taken, but the spec makes a result that cannot be validated against the task schema
 * non-authoritative — it was not taken. 409 is the one refusal senders must not retry
 * ("a sender MUST stop retrying that key after 409"), the answer the spec's receiver gives
 * a terminal conflict, and a retry of identical bytes could never pass anyway; a 400 or
 * 5xx would be retried until the sender's horizon. Retries of the same delivery get the
 * same 409 and add nothing.
 */
function resultRefused(issues?: ResultIssue[]): WebhookAnswer {
  return {
    statusCode: 409,
    body: {
      error: {
        code: 'webhook_result_invalid',
        message: 'the result does not match the response schema of the task this operation runs; it was recorded for review and not applied',
        ...(issues && issues.length > 0 ? { details: { issues } } : {}),
      },
    },
    outcome: 'webhook_result_invalid',
  };
}

function acceptedAnswer(applied: string): WebhookAnswer {
  return { statusCode: 200, body: { status: 'accepted', outcome: applied }, outcome: applied === 'transition' || applied === 'same' ? 'accepted' : applied };
}
