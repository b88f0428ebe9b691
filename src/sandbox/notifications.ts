/**
 * When and what the seller tells the buyer's webhook.
 *
 * Per the spec, webhooks follow a non-terminal initial reply: every status
 * change after that reply is POSTed (so at least the terminal one is), never
 * the sync reply itself. Test faults live here too: dropping deliveries (a lost
 * webhook), sending each twice with the same idempotency_key (duplicate
 * delivery) and sending arbitrary, possibly stale, deliveries (out of order).
 */
import { assertValid31Document, body31 } from './replies-31.js';
import type { StatsRecorder } from './stats.js';
import type { PushNotificationConfig, SandboxTask, TaskStatus } from './tasks.js';
import type { WebhookAuth, WebhookSender } from './webhook-sender.js';

export interface NotifierFaults {
  /** true drops every delivery; a function gets the 1-based delivery number and drops when it returns true. */
  dropWebhooks?: boolean | ((n: number) => boolean);
  /** Send every delivery twice (same idempotency_key, fresh signature). */
  duplicateWebhooks?: boolean;
}

export interface DeliveryContent {
  status: TaskStatus;
  /** Defaults to now; pass an older time to simulate a stale, out-of-order delivery. */
  timestamp?: string;
  message?: string;
  result?: Record<string, unknown>;
}

/** Maps the buyer's legacy `authentication` block to the sender's mode; absence means RFC 9421. */
export function webhookAuthFor(push: PushNotificationConfig): WebhookAuth {
  const a = push.authentication;
  if (!a) return null;
  const scheme = a.schemes[0];
  if (scheme === 'HMAC-SHA256') return { type: 'hmac_sha256', secret: a.credentials ?? '' };
  if (scheme === 'Bearer') return { type: 'bearer', token: a.credentials ?? '' };
  // create_media_buy validation refuses other schemes, so this is unreachable.
  throw new Error(`unsupported webhook scheme ${String(scheme)}`);
}

export class Notifier {
  private deliveries = 0;
  private events = 0;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly sender: WebhookSender,
    private readonly stats: StatsRecorder,
    private readonly faults: NotifierFaults,
  ) {}

  /** Fire-and-forget from the caller's view; close() waits for what's in flight. */
  notify(task: SandboxTask, content: DeliveryContent): void {
    if (!task.push) return;
    const p = this.send(task, task.push, content).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async send(task: SandboxTask, push: PushNotificationConfig, content: DeliveryContent): Promise<void> {
    const n = ++this.deliveries;
    const eventId = `${task.task_id}:${++this.events}`;
    const payload = task.adcp_version === '3.1' ? payload31(task, push, content) : payload30(task, push, content);
    const auth = webhookAuthFor(push);
    const authName = auth === null ? 'rfc9421' : auth.type === 'hmac_sha256' ? 'hmac' : 'bearer';
    const base = { task_id: task.task_id, status: content.status, url: push.url, auth: authName };

    const drop = this.faults.dropWebhooks;
    if (drop === true || (typeof drop === 'function' && drop(n))) {
      this.stats.webhook({
        ...base,
        delivered: false,
        dropped: true,
        duplicate: false,
        attempts: 0,
        errors: [],
        at: new Date().toISOString(),
      });
      return;
    }
    const copies = this.faults.duplicateWebhooks ? 2 : 1;
    for (let i = 0; i < copies; i++) {
      let record;
      try {
        const r = await this.sender.deliver({ url: push.url, payload, eventId, auth });
        record = { ...base, ...r, dropped: false, duplicate: i > 0 };
      } catch (err) {
        record = {
          ...base,
          delivered: false,
          dropped: false,
          duplicate: i > 0,
          attempts: 0,
          errors: [err instanceof Error ? err.message : String(err)],
        };
      }
      this.stats.webhook({ ...record, at: new Date().toISOString() });
    }
  }
}

/** The 3.0 MCP webhook payload (the sender adds `idempotency_key`). */
function payload30(task: SandboxTask, push: PushNotificationConfig, content: DeliveryContent): Record<string, unknown> {
  return {
    task_id: task.task_id,
    task_type: task.task_type,
    protocol: task.domain,
    status: content.status,
    timestamp: content.timestamp ?? new Date().toISOString(),
    ...(push.operation_id !== undefined && { operation_id: push.operation_id }),
    ...(push.token !== undefined && { token: push.token }),
    ...(content.message !== undefined && { message: content.message }),
    ...(content.result !== undefined && { result: content.result }),
    ...(task.context !== undefined && { context: task.context }),
  };
}

/**
 * The 3.1 payload (core/mcp-webhook-payload.json 3.1.19), checked before it goes:
 * `operation_id` (required; a 3.1 request that registers a webhook without one is
 * refused, versions.ts), `notification_id` (the task's arrival at this status, one
 * event however often it is sent: a re-emission keeps it under a new
 * `idempotency_key`), the `token` echoed, and the result as the task's 3.1 reply.
 */
function payload31(task: SandboxTask, push: PushNotificationConfig, content: DeliveryContent): Record<string, unknown> {
  const payload = {
    ...payload30(task, push, content),
    notification_id: `${task.task_id}.${content.status}`,
    ...(content.result !== undefined && { result: body31(task.task_type, content.result, content.status) }),
  };
  // The sender adds the idempotency_key; a stand-in of its form takes its place in the check.
  assertValid31Document(`webhook for ${task.task_id}`, 'core/mcp-webhook-payload.json', { idempotency_key: 'stand_in_key_00000000', ...payload });
  return payload;
}
