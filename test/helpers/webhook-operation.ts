/**
 * Operations inserted straight into the store for the webhook-route tests, as
 * the engine would have left one after a `submitted` reply that registered a
 * webhook. Straight into the store so a test needs no seller, and with no
 * timer so the scheduler leaves it alone: only webhooks can change it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { newOperationRow } from '../../src/store/operation-row.js';
import type { TestOrchestrator } from './orchestrator.js';

export type WebhookMode = 'hmac' | 'bearer' | 'rfc9421';

/** Inserts the operation; `secret` (when given) is stored sealed, as the engine stores it. */
export async function insertWebhookOperation(
  orch: TestOrchestrator,
  agentId: string,
  opts: { id: string; mode: WebhookMode; token: string; secret?: string; taskId: string | null; status?: string; type?: string },
): Promise<void> {
  const now = Date.now();
  const row = newOperationRow(
    {
      id: opts.id,
      tenant_id: orch.tenantId,
      agent_id: agentId,
      // The task the operation runs: a delivery must be about this task type (default create_media_buy).
      type: opts.type ?? 'create_media_buy',
      idempotency_key: `idem-${opts.id}`,
      request_body: '{}',
      created_at: now,
    },
    {
      status: opts.status ?? 'submitted',
      task_id: opts.taskId,
      // It was sent once (the call that got the `submitted` reply).
      attempt: 1,
      webhook_mode: opts.mode,
      webhook_token: opts.token,
      webhook_secret_enc: opts.secret === undefined ? null : orch.app.secrets.seal(opts.secret),
    },
  );
  await orch.app.store.operations.insert(row, { source: 'call', kind: 'created', to: row.status, at: now });
}

export interface WebhookOperation {
  id: string;
  token: string;
  mode: WebhookMode;
  /** The HMAC or bearer secret; an RFC 9421 operation has none stored (the agent's JWKS is used). */
  secret: string;
  taskId: string;
}

/** A `submitted` operation with a fresh id, token, task id and secret (a create_media_buy unless `type` says otherwise). */
export async function createWebhookOperation<M extends WebhookMode>(
  orch: TestOrchestrator,
  agentId: string,
  mode: M,
  type?: string,
): Promise<WebhookOperation & { mode: M }> {
  const id = randomUUID();
  const token = randomBytes(24).toString('base64url');
  const secret = randomBytes(32).toString('base64url');
  const taskId = `task-${randomBytes(6).toString('hex')}`;
  await insertWebhookOperation(orch, agentId, { id, mode, token, secret: mode === 'rfc9421' ? undefined : secret, taskId, type });
  return { id, token, mode, secret, taskId };
}
