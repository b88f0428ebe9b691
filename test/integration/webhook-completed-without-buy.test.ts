/**
 * A seller's webhook that says a create_media_buy completed but carries its `submitted`
 * envelope as the result (no media_buy_id), over real HTTP on loopback with the sandbox
 * seller: the purchase is not lost. The delivery is recorded as a conflict people are told
 * of, the operation stays open and polled, and the seller's real completion, read by a
 * poll, completes it and makes the buy.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { buyOf } from '../helpers/live-buys.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';

let seller: SandboxSeller | undefined;
let orch: TestOrchestrator | undefined;
afterEach(async () => {
  await orch?.close();
  await seller?.close();
  orch = seller = undefined;
});

/** Posts `payload` to the operation's own webhook URL, HMAC-signed with its secret (opened from the store), as its seller would. */
async function deliver(o: TestOrchestrator, operationId: string, payload: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const row = (await o.app.store.operations.get(operationId))!;
  const secret = o.app.secrets.open(row.webhook_secret_enc!);
  const body = JSON.stringify(payload);
  const ts = String(Math.floor(Date.now() / 1000));
  const signature = `sha256=${createHmac('sha256', secret).update(`${ts}.`).update(body).digest('hex')}`;
  const res = await fetch(`${o.url}/webhooks/adcp/${row.webhook_token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-adcp-timestamp': ts, 'x-adcp-signature': signature },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

it('a completed webhook whose result has no media_buy_id is a conflict, not the end; the real completion, polled, makes the buy', async () => {
  // The seller's own webhooks are lost, so only ours (below) and polls tell the orchestrator anything.
  seller = await startSandboxSeller({ submittedDelayMs: 300, dropWebhooks: true });
  // Polls come soon once asked for; the backup poll of a webhook operation stays far off (its default).
  orch = await startOrchestrator({ env: { ADCP_ORCH_POLL_INTERVAL_MS: '300' } });
  const agentId = await orch.registerAgent({ url: seller.url });
  const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_submitted'), webhook: 'hmac' });
  expect(created.body.status).toBe('submitted');
  const taskId = created.body.task_id as string;

  const sent = await deliver(orch, created.body.id, {
    idempotency_key: `whk_${randomBytes(12).toString('hex')}`,
    operation_id: created.body.id,
    task_id: taskId,
    task_type: 'create_media_buy',
    status: 'completed',
    timestamp: new Date().toISOString(),
    // What a real seller sent: the `submitted` envelope, as the result of a completed task.
    result: { status: 'submitted', task_id: taskId, message: 'Media buy queued for review' },
  });
  expect(sent.status).toBe(200);

  const open = (await orch.api('GET', `/v1/operations/${created.body.id}`)).body;
  expect(open.status).toBe('submitted');
  expect(open.result).toBeNull();
  const conflict = open.events.find((e: any) => e.kind === 'conflict');
  expect(conflict).toMatchObject({ source: 'webhook', from: 'submitted', to: 'completed', detail: { reason: 'completed_without_media_buy_id', task_type: 'create_media_buy' } });
  const told = await orch.app.store.db.kysely.selectFrom('notifications').select('type').where('operation_id', '=', created.body.id).execute();
  expect(told.map((n) => n.type)).toContain('operation.conflict');
  expect((await orch.api('GET', '/v1/media-buys')).body.media_buys).toEqual([]);

  // The seller's task, polled, completes with the buy: the operation ends and the buy is made.
  const done = await waitForStatus(orch, created.body.id, ['completed']);
  expect(done.result.media_buy_id).toMatch(/^mb_/);
  expect(done.events.find((e: any) => e.kind === 'transition' && e.to === 'completed')).toMatchObject({ source: 'poll' });
  expect(done.stalled).toBe(false);
  const buy = await buyOf(orch, created.body.id);
  expect(buy.media_buy_id).toBe(done.result.media_buy_id);
  expect(seller.stats().pollsByTask[taskId]).toBeGreaterThanOrEqual(1);
});
