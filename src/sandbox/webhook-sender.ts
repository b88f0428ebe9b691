/**
 * Outbound webhook transport: signing, retries, stable per-delivery keys.
 *
 * The default sender is the SDK's webhook emitter. It serialises the body
 * once, injects `idempotency_key` (stable across every retry of one event),
 * signs each attempt afresh (RFC 9421 with our Ed25519 key, or legacy
 * HMAC-SHA256 `X-ADCP-Signature: sha256=<hex>` over "<ts>.<body>" +
 * `X-ADCP-Timestamp`, or legacy Bearer), retries 5xx/429/network errors with
 * exponential backoff, and stops on other 4xx — which covers the spec's
 * "stop on 409" and "stop on a 401 with error=\"webhook_…\"".
 */
import { createWebhookEmitter, type WebhookEmitter } from '@adcp/sdk/server';
import type { SignerKey } from '@adcp/sdk/signing/client';

export type WebhookAuth = { type: 'hmac_sha256'; secret: string } | { type: 'bearer'; token: string } | null;

export interface WebhookDelivery {
  url: string;
  /** The envelope without `idempotency_key`; the sender adds it. */
  payload: Record<string, unknown>;
  /**
   * One logical delivery. Sending the same eventId again (a retry, or a
   * deliberate duplicate) reuses the same `idempotency_key`.
   */
  eventId: string;
  /** null → RFC 9421 signature (the spec default when no `authentication` was registered). */
  auth: WebhookAuth;
}

export interface WebhookDeliveryResult {
  idempotency_key: string;
  delivered: boolean;
  attempts: number;
  final_status?: number;
  errors: string[];
}

/** Pluggable so a test can observe or replace the transport (`webhookSigner` option). */
export interface WebhookSender {
  deliver(d: WebhookDelivery): Promise<WebhookDeliveryResult>;
  /** Abandon pending retries (the seller is shutting down). */
  close?(): void;
}

export interface WebhookRetryPolicy {
  maxAttempts?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
}

export function createSdkWebhookSender(signerKey: SignerKey, retry: WebhookRetryPolicy = {}): WebhookSender {
  // Backoff sleeps end early with an error once the seller closes, so
  // shutting down never waits out a retry schedule against a dead receiver.
  // Kept in a set rather than as listeners on one AbortSignal: many deliveries
  // retrying at once (the receiver restarting) would pile listeners on it.
  let closed = false;
  const sleeping = new Set<() => void>();
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new Error('seller closed; retries abandoned'));
      const abandon = (): void => {
        clearTimeout(t);
        sleeping.delete(abandon);
        reject(new Error('seller closed; retries abandoned'));
      };
      const t = setTimeout(() => {
        sleeping.delete(abandon);
        resolve();
      }, ms);
      sleeping.add(abandon);
    });
  const emitter: WebhookEmitter = createWebhookEmitter({
    signerKey,
    retries: {
      maxAttempts: retry.maxAttempts ?? 5,
      initialDelayMs: retry.initialDelayMs ?? 500,
      maxDelayMs: retry.maxDelayMs ?? 8_000,
      jitter: 0.25,
    },
    userAgent: 'adcp-orchestrator-sandbox-seller',
    sleep,
    // Legacy HMAC/Bearer are still offered for receivers that ask for them;
    // the SDK's one-time deprecation console warning would only be noise here.
    suppressLegacyWarnings: true,
  });
  return {
    async deliver(d) {
      const r = await emitter.emit({
        url: d.url,
        payload: d.payload,
        operation_id: d.eventId,
        authentication: d.auth,
      });
      return {
        idempotency_key: r.idempotency_key,
        delivered: r.delivered,
        attempts: r.attempts,
        ...(r.final_status !== undefined && { final_status: r.final_status }),
        errors: r.errors,
      };
    },
    close() {
      closed = true;
      for (const abandon of [...sleeping]) abandon();
    },
  };
}
