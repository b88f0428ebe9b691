/**
 * Task-status notifications to a request's `push_notification_config`, sent by
 * the SDK's own webhook emitter: RFC 9421-signed with our key unless the buyer
 * registered legacy `authentication` (then HMAC-SHA256 or Bearer, as it asked),
 * a stable `idempotency_key` per event across retries, 5xx/429 retried. The body
 * is the MCP webhook payload (core/mcp-webhook-payload.json).
 */
import { createWebhookEmitter, type WebhookEmitter } from '@adcp/sdk/server';
import type { SignerKey } from '@adcp/sdk/signing/client';

type Json = Record<string, unknown>;

export interface PushRecord {
  task_id: string;
  status: string;
  url: string;
  delivered: boolean;
  final_status?: number;
  errors: string[];
}

export class PushNotifier {
  private readonly emitter: WebhookEmitter;
  private closed = false;
  private readonly sent: PushRecord[] = [];

  constructor(signerKey: SignerKey) {
    this.emitter = createWebhookEmitter({
      signerKey,
      retries: { maxAttempts: 3, initialDelayMs: 100, maxDelayMs: 1_000, jitter: 0 },
      userAgent: 'adcp-orchestrator-test-sdk-seller',
      // Shutting down must not wait out a retry schedule against a receiver already gone.
      sleep: (ms) => (this.closed ? Promise.reject(new Error('seller closed')) : new Promise((r) => setTimeout(r, ms).unref())),
      suppressLegacyWarnings: true,
    });
  }

  /** Tells the buyer a task changed; resolves once the receiver answered (or the retries ran out). */
  async notify(push: Json, task: { task_id: string; task_type: string; status: string; message?: string; result?: Json }): Promise<PushRecord> {
    const url = String(push.url);
    const payload: Json = {
      task_id: task.task_id,
      task_type: task.task_type,
      status: task.status,
      timestamp: new Date().toISOString(),
      protocol: 'media-buy',
      ...(typeof push.operation_id === 'string' ? { operation_id: push.operation_id } : {}),
      ...(typeof push.token === 'string' ? { token: push.token } : {}),
      ...(task.message ? { message: task.message } : {}),
      ...(task.result ? { result: task.result } : {}),
    };
    const auth = push.authentication as { schemes?: string[]; credentials?: string } | undefined;
    const authentication =
      auth?.credentials === undefined
        ? null
        : auth.schemes?.[0] === 'Bearer'
          ? ({ type: 'bearer', token: auth.credentials } as const)
          : ({ type: 'hmac_sha256', secret: auth.credentials } as const);
    const r = await this.emitter.emit({ url, payload, operation_id: `${task.task_id}:${task.status}`, authentication });
    const record: PushRecord = { task_id: task.task_id, status: task.status, url, delivered: r.delivered, errors: r.errors, ...(r.final_status !== undefined ? { final_status: r.final_status } : {}) };
    this.sent.push(record);
    return record;
  }

  records(): PushRecord[] {
    return [...this.sent];
  }

  close(): void {
    this.closed = true;
  }
}
