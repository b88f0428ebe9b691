/**
 * The reporting webhook receiver (`POST /webhooks/adcp/reporting/:token`, README,
 * Media buys), in the order of the operation webhooks' pipeline: content type →
 * size → the buy the URL names → authentication in the mode we registered for it
 * (legacy HMAC-SHA256 or Bearer with its sealed per-buy secret, or RFC 9421 with
 * the seller's keys; never another) → strict parse → the report read in either
 * body style (src/domain/delivery-report.ts) → one engine call, "ingest this
 * authenticated fire" (src/engine/media-buys/report-ingest.ts: dedupe, store and
 * apply in one commit), and the answer for what it did. Nothing is read from the
 * body before the sender is authenticated; this file never touches the store.
 */
import type { Logger } from 'pino';
import type { Metrics } from '../engine/metrics.js';
import type { FireOutcome, ReportIngest } from '../engine/media-buys/report-ingest.js';
import type { AgentRow } from '../store/index.js';
import type { ReportingTarget } from '../store/media-buys-repo.js';
import type { SecretBox } from '../store/secret-box.js';
import type { NonceReplayStore } from '../adcp/webhook-signature.js';
import { verifyBearerWebhook } from './bearer.js';
import { DeferredNonce } from './deferred-nonce.js';
import { webhookFingerprint } from './fingerprint.js';
import { OpenedSecrets, type OpenedSecret } from './opened-secrets.js';
import type { AgentKeySources } from './key-sources.js';
import { MAX_WEBHOOK_BYTES, type InboundWebhook, type WebhookAnswer } from './receiver.js';
import type { AuthResult } from './result.js';
import { authenticateRfc9421 } from './rfc9421.js';
import { strictJsonParse } from './strict-json.js';
import { firesReachUs } from '../domain/reporting-webhook.js';

export interface ReportingReceiverDeps {
  ingest: ReportIngest;
  /** The seller's agent row (its keys sign RFC 9421 fires). */
  agent: (agentId: string) => Promise<AgentRow | undefined>;
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

export class ReportingReceiver {
  /** Opened per-buy secrets, in this process's memory only (opened-secrets.ts); sealed as JSON text (src/engine/sealed-request.ts). */
  private readonly opened = new OpenedSecrets((sealed) => JSON.parse(this.deps.secrets.open(sealed)) as string);

  constructor(private readonly deps: ReportingReceiverDeps) {}

  async receive(req: InboundWebhook): Promise<WebhookAnswer> {
    const answer = await this.pipeline(req);
    this.deps.metrics.webhook(answer.outcome);
    if (answer.statusCode >= 400) this.deps.log.warn({ outcome: answer.outcome, status: answer.statusCode }, 'reporting fire refused');
    return answer;
  }

  private async pipeline(req: InboundWebhook): Promise<WebhookAnswer> {
    if (!/^application\/json\s*(;|$)/i.test(String(req.headers['content-type'] ?? ''))) return fail(415, 'webhook_content_type_invalid', 'Content-Type must be application/json');
    if (req.rawBody.length > MAX_WEBHOOK_BYTES) return fail(413, 'webhook_body_too_large', 'body exceeds 1 MB');
    const target = await this.deps.ingest.target(req.token);
    if (!target || !firesReachUs(target.reporting_auth)) return fail(404, 'webhook_target_unknown', 'no media buy reports to this URL');

    const nonce = target.reporting_auth === 'rfc9421' ? new DeferredNonce(this.deps.nonces) : undefined;
    const auth = await this.authenticate(target, req, nonce);
    if (!auth.ok) {
      if (auth.transient) return fail(503, auth.code, auth.message, { 'retry-after': '5' });
      return fail(401, auth.code, auth.message, { 'www-authenticate': `Signature error="${auth.code}"` });
    }
    const parsed = strictJsonParse(req.rawBody);
    if (!parsed.ok) return this.refuse(target, 400, parsed.code, parsed.message);
    const read = this.deps.ingest.read(parsed.value);
    if (!read.ok) return this.refuse(target, 400, read.code, read.message);
    const outcome = await this.deps.ingest.ingest({ target, reading: read.reading, fingerprint: webhookFingerprint(parsed.value), text: parsed.text, nonce: nonce?.pending });
    return answerFor(outcome);
  }

  /** An authenticated fire we cannot take: recorded on its buy for people to see, and refused (the sender stops on a 4xx). */
  private async refuse(target: ReportingTarget, status: number, code: string, message: string): Promise<WebhookAnswer> {
    try {
      await this.deps.ingest.refused(target, code, message);
    } catch (err) {
      this.deps.log.warn({ err, buy_id: target.id }, 'reporting fire: recording a refusal failed');
    }
    return fail(status, code, message);
  }

  private async authenticate(target: ReportingTarget, req: InboundWebhook, nonce: DeferredNonce | undefined): Promise<AuthResult> {
    switch (target.reporting_auth) {
      case 'hmac': {
        // Fails closed on a weak registered secret (opened-secrets.ts).
        return this.openedSecret(target).verifyHmac({ headers: req.headers, rawBody: req.rawBody }, this.now, (why) =>
          this.deps.log.error({ buy_id: target.id }, `reporting webhook HMAC secret refused: ${why}`),
        );
      }
      case 'bearer':
        return verifyBearerWebhook(req.headers, { token: this.secret(target) }, this.now);
      default: {
        const agent = await this.deps.agent(target.agent_id);
        const keys = agent ? this.deps.keySources.for(agent) : null;
        if (!keys) return { ok: false, code: 'webhook_signature_key_unknown', message: 'the agent has no webhook signing keys registered' };
        return authenticateRfc9421({ method: req.method, url: req.targetUrl, headers: req.headers, rawBody: req.rawBody }, { keys, replayStore: nonce ?? this.deps.nonces, now: this.now });
      }
    }
  }

  private secret(target: ReportingTarget): string {
    return this.openedSecret(target).plain;
  }

  /** The buy's secret: sealed as the request stored it, a seal of its JSON text (src/engine/sealed-request.ts). */
  private openedSecret(target: ReportingTarget): OpenedSecret {
    const sealed = target.reporting_secret_enc;
    if (!sealed) throw new Error(`media buy ${target.id} has no reporting secret`);
    return this.opened.get(sealed);
  }

  private readonly now = (): number => (this.deps.now ?? Date.now)();
}

/** The HTTP answer for what the engine did with a fire. */
export function answerFor(o: FireOutcome): WebhookAnswer {
  switch (o.kind) {
    case 'applied':
      return { statusCode: 200, body: { status: 'accepted', applied: o.applied, superseded: o.superseded, duplicates: o.duplicates, unmatched: o.unmatched }, outcome: 'accepted' };
    case 'duplicate':
      return { statusCode: 200, body: { status: 'duplicate' }, outcome: 'duplicate' };
    case 'in_flight':
      return fail(503, 'webhook_in_flight', 'this fire is still being applied; retry shortly', { 'retry-after': '1' });
    case 'payload_mismatch':
      return fail(409, 'webhook_idempotency_conflict', 'this idempotency_key was delivered before with a different payload');
    case 'apply_failed':
      return fail(503, 'webhook_apply_failed', 'stored; not yet applied', { 'retry-after': '5' });
    case 'refused':
      return fail(401, o.reason, o.reason === 'webhook_signature_replayed' ? 'this signature nonce was seen before' : 'the signing key is over its nonce cap', {
        'www-authenticate': `Signature error="${o.reason}"`,
      });
  }
}
