/**
 * RFC 9421 nonces over the real route: the nonce is inserted in the delivery's own
 * transaction, so a replay is refused whether it comes after its original, at the
 * same moment (both pass the cheap pre-check; the insert in the transaction
 * decides), or after a delivery refused for its body.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { insertWebhookOperation } from '../helpers/webhook-operation.js';
import { publicJwk, signWebhook, TEST_KEYS } from '../unit/webhooks/signing-helpers.js';

describe('RFC 9421 nonces on the webhook route', () => {
  let orch: TestOrchestrator;
  let agentId: string;
  const clock = { ms: 1_700_000_000_000, now: () => clock.ms, random: () => 0.5 };

  beforeAll(async () => {
    orch = await startOrchestrator({ clock });
    agentId = await orch.registerAgent({ url: 'http://127.0.0.1:9/mcp', webhook_signing: { jwks: { keys: TEST_KEYS.map(publicJwk) } } });
  });
  afterAll(async () => orch?.close());

  async function operation(): Promise<{ id: string; token: string; taskId: string }> {
    const id = `op-${randomBytes(6).toString('hex')}`;
    const token = randomBytes(24).toString('base64url');
    const taskId = `task-${id}`;
    await insertWebhookOperation(orch, agentId, { id, mode: 'rfc9421', token, taskId });
    return { id, token, taskId };
  }

  function signed(op: { id: string; token: string; taskId: string }, body?: string) {
    const text =
      body ??
      JSON.stringify({
        idempotency_key: `key-${randomBytes(12).toString('hex')}`,
        task_id: op.taskId,
        task_type: 'create_media_buy',
        status: 'working',
        timestamp: new Date(clock.ms - 1000).toISOString(),
        operation_id: op.id,
      });
    const headers = signWebhook({ url: `${orch.config.ADCP_ORCH_PUBLIC_URL}/webhooks/adcp/${op.token}`, body: Buffer.from(text), createdSeconds: Math.floor(clock.ms / 1000) });
    return () => fetch(`${orch.url}/webhooks/adcp/${op.token}`, { method: 'POST', headers, body: text }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  }

  const deliveries = (opId: string) => orch.app.store.db.kysely.selectFrom('webhook_deliveries').select('id').where('operation_id', '=', opId).execute();

  it('a replay after its original is refused, and nothing more is stored', async () => {
    const op = await operation();
    const post = signed(op);
    expect((await post()).status).toBe(200);
    const again = await post();
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe('webhook_signature_replayed');
    expect(await deliveries(op.id)).toHaveLength(1);
  });

  it('of two copies sent at once, exactly one is taken', async () => {
    const op = await operation();
    const post = signed(op);
    const answers = await Promise.all([post(), post(), post()]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401]);
    for (const a of answers.filter((x) => x.status === 401)) expect(a.body.error.code).toBe('webhook_signature_replayed');
    expect(await deliveries(op.id)).toHaveLength(1);
  });

  it('a delivery refused for its body still spends its nonce: the replay is told it is one', async () => {
    const op = await operation();
    const post = signed(op, '{"status":"working","status":"completed"}');
    const first = await post();
    expect(first.status).toBe(400);
    expect(first.body.error.code).toBe('webhook_body_malformed');
    const again = await post();
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe('webhook_signature_replayed');
    expect(await deliveries(op.id)).toHaveLength(0);
  });
});
