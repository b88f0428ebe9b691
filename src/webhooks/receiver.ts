/**
 * The inbound webhook pipeline (AdCP spec, webhooks), receiver side, in the spec's
 * order: content type → size → authenticate in the registered mode (never
 * another) → strict parse → envelope; then one engine call, "ingest this
 * authenticated delivery" (src/engine/webhook-ingest.ts: correlate, check the
 * result, dedupe, store and apply in one commit), and the answer for what it did.
 * This file never touches the store: the engine does.
 *
 * It returns what to answer instead of touching HTTP, so the Fastify route stays
 * thin and the pipeline can be driven directly by tests and benchmarks.
 */
import type { Logger } from 'pino';
import type { Metrics } from '../engine/metrics.js';
import type { IngestOutcome, PendingNonce, WebhookIngest } from '../engine/webhook-ingest.js';
import type { WebhookTarget } from '../store/operations-repo.js';
import type { SecretBox } from '../store/secret-box.js';
import type { ResultIssue } from '../adcp/task-result.js';
import type { NonceReplayStore } from '../adcp/webhook-signature.js';
import { verifyBearerWebhook } from './bearer.js';
import type { HeaderBag } from './headers.js';
import { OpenedSecrets, type OpenedSecret } from './opened-secrets.js';
import type { AgentKeySources } from './key-sources.js';
import { DeferredNonce } from './deferred-nonce.js';
import { parseDelivery } from './parse-delivery.js';
import { webhookFingerprint } from './fingerprint.js';
import { reportOfFire } from '../domain/delivery-report.js';
import type { AuthResult } from './result.js';
import { authenticateRfc9421 } from './rfc9421.js';
export const MAX_WEBHOOK_BYTES = 1024 * 1024;

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
  ingest: WebhookIngest;
  /** The RFC 9421 replay cache shared by every instance. */
  nonces: NonceReplayStore;
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

    const op = await this.deps.ingest.target(req.token);
    if (!op || op.webhook_mode === 'none') return fail(404, 'webhook_target_unknown', 'no operation is registered at this URL');

    // Every mode but the legacy two is RFC 9421 (see authenticate).
    const nonce = op.webhook_mode !== 'hmac' && op.webhook_mode !== 'bearer' ? new DeferredNonce(this.deps.nonces) : undefined;
    const auth = await this.authenticate(op, req, nonce);
    if (!auth.ok) {
      if (auth.transient) return fail(503, auth.code, auth.message, { 'retry-after': '5' });
      return fail(401, auth.code, auth.message, { 'www-authenticate': `Signature error="${auth.code}"` });
    }
    const pending = nonce?.pending;

    const parsed = parseDelivery(req.rawBody);
    if (!parsed.ok) {
      // A delivery report is judged as one, not as a task's envelope (a 3.1 report of a buy bought at once has no task_id).
      if (parsed.body && op.type === 'create_media_buy' && isDeliveryReportBody(parsed.body.value)) {
        const report = await this.deps.ingest.reportAtOperation(op, { text: parsed.body.text, fingerprint: webhookFingerprint(parsed.body.value), nonce: pending });
        if (report) return answerFor(report);
      }
      if (pending) await this.consumeNonce(pending, op.id);
      return fail(400, parsed.code, parsed.message);
    }
    const outcome = await this.deps.ingest.ingest({ operation: op, claims: parsed.payload, fingerprint: parsed.fingerprint, text: parsed.text, nonce: pending });
    // Refused before its transaction: its nonce is still recorded, so a replay is told it is one.
    if (pending && (outcome.kind === 'task_conflict' || outcome.kind === 'task_type_conflict')) await this.consumeNonce(pending, op.id);
    return answerFor(outcome);
  }

  /** The refusal stands whether or not its nonce could be recorded (a replay of it is refused again, for the same reason). */
  private async consumeNonce(nonce: PendingNonce, operationId: string): Promise<void> {
    try {
      await this.deps.ingest.consumeNonce(nonce);
    } catch (err) {
      this.deps.log.warn({ err, operation_id: operationId }, 'webhook: recording the nonce of a refused delivery failed');
    }
  }

  private async authenticate(op: WebhookTarget, req: InboundWebhook, nonce: DeferredNonce | undefined): Promise<AuthResult> {
    switch (op.webhook_mode) {
      case 'hmac': {
        // Fails closed on a weak registered secret (opened-secrets.ts).
        return this.openedSecret(op).verifyHmac({ headers: req.headers, rawBody: req.rawBody }, this.now, (why) =>
          this.deps.log.error({ operation_id: op.id }, `webhook HMAC secret refused: ${why}`),
        );
      }
      case 'bearer':
        return verifyBearerWebhook(req.headers, { token: this.secret(op) }, this.now);
      default: {
        const agent = await this.deps.ingest.agent(op.agent_id);
        const keys = agent ? this.deps.keySources.for(agent) : null;
        if (!keys) return { ok: false, code: 'webhook_signature_key_unknown', message: 'the agent has no webhook signing keys registered' };
        return authenticateRfc9421(
          { method: req.method, url: req.targetUrl, headers: req.headers, rawBody: req.rawBody },
          { keys, replayStore: nonce ?? this.deps.nonces, now: this.now },
        );
      }
    }
  }

  private readonly now = (): number => (this.deps.now ?? Date.now)();

  /** Opened secrets, in this process's memory only (opened-secrets.ts). */
  private readonly opened = new OpenedSecrets((sealed) => this.deps.secrets.open(sealed));

  private secret(op: WebhookTarget): string {
    return this.openedSecret(op).plain;
  }

  private openedSecret(op: WebhookTarget): OpenedSecret {
    const sealed = op.webhook_secret_enc;
    if (!sealed) throw new Error(`operation ${op.id} has no webhook secret`);
    return this.opened.get(sealed);
  }
}

/** A body that carries a delivery report (bare or in an envelope), whatever else it lacks. */
function isDeliveryReportBody(value: unknown): boolean {
  return reportOfFire(value) !== null;
}

/** The HTTP answer for what the engine did with a delivery. */
function answerFor(o: IngestOutcome): WebhookAnswer {
  switch (o.kind) {
    case 'applied':
      return acceptedAnswer(o.outcome);
    case 'result_invalid':
      return resultRefused(o.issues);
    case 'duplicate':
      // A retry of a delivery refused for its result gets the same refusal, not a 2xx that would say it was taken.
      return o.refused ? resultRefused() : { statusCode: 200, body: { status: 'duplicate' }, outcome: 'duplicate' };
    case 'in_flight':
      return fail(503, 'webhook_in_flight', 'this delivery is still being applied; retry shortly', { 'retry-after': '1' });
    case 'payload_mismatch':
      return fail(409, 'webhook_idempotency_conflict', 'this idempotency_key was delivered before with a different payload');
    case 'task_conflict':
      return fail(409, 'webhook_task_conflict', 'the delivery names a task or operation other than the one registered at this URL');
    case 'task_type_conflict':
      return fail(409, 'webhook_task_type_conflict', `the delivery is about a ${o.observed} task; the operation registered at this URL is ${o.bound}`);
    case 'apply_failed':
      return fail(503, 'webhook_apply_failed', 'stored; not yet applied', { 'retry-after': '5' });
    case 'refused':
      return fail(401, o.reason, o.reason === 'webhook_signature_replayed' ? 'this signature nonce was seen before' : 'the signing key is over its nonce cap', {
        'www-authenticate': `Signature error="${o.reason}"`,
      });
  }
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
