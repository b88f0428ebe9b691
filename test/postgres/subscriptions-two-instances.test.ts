/**
 * Two orchestrator instances on one PostgreSQL database, both delivering to the
 * same subscriptions: operations created on either write notifications, both
 * instances fan out and claim, and each notification reaches each subscriber
 * exactly once (the unique delivery row, and claims with SKIP LOCKED + lease).
 */
import { NOTIFICATION_TYPES } from '../../src/domain/notification-types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const suite = postgresAdminUrl ? describe : describe.skip;

suite('subscriptions with two instances on PostgreSQL', () => {
  let database: TestDatabase;
  let seller: SandboxSeller;
  let a: TestOrchestrator;
  let b: TestOrchestrator;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    database = await tempPostgres();
    seller = await startSandboxSeller({ submittedDelayMs: 200 });
    const env = { ADCP_ORCH_SUBSCRIPTION_TIMEOUT_MS: '5000', ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS: '100,200' };
    a = await startOrchestrator({ database, keepDatabase: true, env });
    b = await startOrchestrator({ database, keepDatabase: true, env });
  }, 60_000);

  afterAll(async () => {
    await b?.close();
    await a?.close();
    for (const r of receivers) await r.close();
    await seller?.close();
    await database?.drop();
  });

  it('each notification is delivered once per subscription', async () => {
    expect(b.tenantId).toBe(a.tenantId);
    const agentId = await a.registerAgent({ url: seller.url });
    const subs: Array<{ rcv: WebhookReceiver; secret: string }> = [];
    for (let i = 0; i < 2; i++) {
      const rcv = await startWebhookReceiver();
      receivers.push(rcv);
      // Created on different instances: neither owns a subscription. (To the operations' notifications:
      // the live buys these make notify of their own as they deliver, at their own pace.)
      const res = await (i === 0 ? a : b).api('POST', '/v1/subscriptions', { url: rcv.url, events: NOTIFICATION_TYPES.filter((t) => t.startsWith('operation.')) });
      expect(res.status).toBe(201);
      subs.push({ rcv, secret: res.body.secret });
    }

    const ops: string[] = [];
    for (let i = 0; i < 12; i++) {
      const via = i % 2 === 0 ? a : b;
      const res = await via.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest(i % 3 === 0 ? 'sandbox_submitted' : 'sandbox_instant'), webhook: 'none' });
      expect(res.status).toBe(202);
      ops.push(res.body.id);
    }
    for (const id of ops) await waitForStatus(a, id, ['completed']);
    const expected = (await a.app.store.notifications.after(a.tenantId, 0, 10_000)).filter((n) => n.operation_id !== null && ops.includes(n.operation_id));
    expect(expected.length).toBeGreaterThanOrEqual(12 * 2);
    const ids = expected.map((n) => n.id).sort();

    for (const { rcv, secret } of subs) {
      await rcv.waitFor(() => (ids.every((id) => rcv.requests.some((r) => r.headers['webhook-id'] === id)) ? true : undefined), 60_000);
      const wh = new Webhook(secret);
      for (const r of rcv.requests) wh.verify(r.body, r.headers);
    }
    // Wait until every delivery is recorded (the receiver answered before the record was written), then count.
    await eventually(async () => {
      const delivered = await a.app.store.db.kysely.selectFrom('subscription_deliveries').select('id').where('status', '=', 'delivered').execute();
      return delivered.length === ids.length * 2 ? true : undefined;
    });
    for (const { rcv } of subs) {
      const perId = new Map<string, number>();
      for (const r of rcv.requests) perId.set(r.headers['webhook-id']!, (perId.get(r.headers['webhook-id']!) ?? 0) + 1);
      expect([...perId.keys()].sort()).toEqual(ids);
      expect([...perId.values()].every((n) => n === 1)).toBe(true);
    }
    const total = await a.app.store.db.kysely.selectFrom('subscription_deliveries').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(total.n)).toBe(ids.length * 2);
    // Both instances took part: the work was shared, not left to one of them.
    const senders = await a.app.store.db.kysely.selectFrom('subscription_delivery_attempts').select('sent_by').distinct().execute();
    expect(senders.map((s) => s.sent_by).sort()).toEqual([a.app.instanceId, b.app.instanceId].sort());
  }, 120_000);

  it('an instance that only hears NOTIFY (its fallback poll a minute away) delivers what another instance wrote', async () => {
    // A second database, so that this instance starts with nothing to do and then sleeps for its whole minute.
    const db2 = await tempPostgres();
    const writer = await startOrchestrator({ database: db2, keepDatabase: true });
    const listener = await startOrchestrator({ database: db2, keepDatabase: true, env: { ADCP_ORCH_SCHEDULER_TICK_MS: '60000' } });
    try {
      // The writer creates and runs the operations but sends no notification itself.
      await writer.app.subscriptions.stop();
      const rcv = await startWebhookReceiver();
      receivers.push(rcv);
      const agentId = await writer.registerAgent({ url: seller.url });
      const res = await writer.api('POST', '/v1/subscriptions', { url: rcv.url, events: ['operation.completed'] });
      expect(res.status).toBe(201);
      const started = Date.now();
      const op = await writer.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), webhook: 'none' });
      await waitForStatus(writer, op.body.id, ['completed']);
      await rcv.waitFor(() => (rcv.requests.length >= 1 ? true : undefined), 30_000);
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(JSON.parse(rcv.requests[0]!.body)).toMatchObject({ type: 'operation.completed', data: { operation: { id: op.body.id } } });
      // (The receiver answered before the attempt was recorded.)
      const senders = await eventually(async () => {
        const rows = await writer.app.store.db.kysely.selectFrom('subscription_delivery_attempts').select('sent_by').distinct().execute();
        return rows.length > 0 ? rows : undefined;
      });
      expect(senders.map((x) => x.sent_by)).toEqual([listener.app.instanceId]);
    } finally {
      await listener.close();
      await writer.close();
      await db2.drop();
    }
  }, 120_000);
});
