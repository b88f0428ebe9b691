/**
 * The notifications outbox on SQLite and (when TEST_DATABASE_URL is set) PostgreSQL:
 * a change and the notifications it raises commit together or not at all, the body
 * is the API's operation JSON (no secrets) and the event, and readers page by seq.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presentOperation } from '../../src/domain/operation-json.js';
import type { OperationRow, Store } from '../../src/store/index.js';
import { newNotificationId } from '../../src/store/notifications-repo.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { inWriteTransaction } from '../../src/store/tx.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';
import { closeSellerStore, openSellerStore } from '../helpers/seller-store.js';

const SECRET = 'minted-hmac-secret-0123456789abcdefghijklmnop';

describe.each(dialects)('notifications on $name', ({ make }) => {
  let database: TestDatabase;
  let store: Store;
  let tenantId: string;
  let agentId: string;

  beforeAll(async () => {
    database = await make();
    ({ store, tenantId, agentId } = await openSellerStore(database, { notifications: { publicUrl: 'https://orch.example' } }));
  });
  afterAll(() => closeSellerStore(store, database));

  function newOperation(over: Partial<OperationRow> = {}, tenant = tenantId): OperationRow {
    const now = Date.now();
    const request = { brand: { domain: 'b.example' }, push_notification_config: { url: 'https://o/webhooks/adcp/t', authentication: { schemes: ['HMAC-SHA256'], credentials: SECRET } } };
    return newOperationRow(
      { id: randomUUID(), tenant_id: tenant, agent_id: agentId, type: 'create_media_buy', idempotency_key: randomUUID(), request_body: JSON.stringify(request), created_at: now },
      { webhook_mode: 'hmac', webhook_secret_enc: `sealed-${SECRET}`, ...over },
    );
  }

  const ofOperation = (id: string) => store.db.kysely.selectFrom('notifications').selectAll().where('operation_id', '=', id).orderBy('seq').execute();

  it('writes operation.created with the insert, with the operation JSON (no events, no secret), the event and a link', async () => {
    const op = newOperation();
    const written = await store.operations.insert(op, { source: 'user', kind: 'created', to: 'requested' });
    expect(written.notifications).toHaveLength(1);
    const [n] = written.notifications;
    expect(n).toMatchObject({ tenant_id: tenantId, type: 'operation.created', operation_id: op.id, created_at: written.events[0]!.at });
    expect(n!.id).toMatch(/^ntf_[0-9a-f-]{36}$/);
    expect(await ofOperation(op.id)).toEqual(written.notifications);

    const body = JSON.parse(n!.body);
    expect(body).toEqual({
      id: n!.id,
      type: 'operation.created',
      created_at: new Date(n!.created_at).toISOString(),
      tenant_id: tenantId,
      data: {
        operation: presentOperation(op),
        event: { id: written.events[0]!.id, at: new Date(written.events[0]!.at).toISOString(), source: 'user', kind: 'created', from: null, to: 'requested', detail: null, actor: null },
        link: `https://orch.example/operations/${op.id}`,
      },
    });
    expect(body.data.operation).not.toHaveProperty('events');
    expect(body.data.operation.request.push_notification_config.authentication.credentials).toBe('[redacted]');
    expect(n!.body).not.toContain(SECRET);
  });

  it('writes one notification per event that raises one, in seq order, and none for the others', async () => {
    const op = newOperation({ status: 'submitted' });
    await store.operations.insert(op, { source: 'call', kind: 'created', to: 'submitted' });
    const working = await store.operations.mutate(op.id, null, () => ({
      patch: { status: 'working' },
      events: [{ source: 'webhook', kind: 'transition', from: 'submitted', to: 'working' }],
      value: null,
    }));
    expect(working.outcome === 'applied' && working.notifications).toEqual([]);

    const done = await store.operations.mutate(op.id, null, () => ({
      patch: { status: 'completed', result: JSON.stringify({ media_buy_id: 'mb_1' }) },
      events: [
        { source: 'poll', kind: 'transition', from: 'working', to: 'completed' },
        { source: 'poll', kind: 'conflict', from: 'completed', to: 'failed' },
        { source: 'poll', kind: 'poll_failed' },
      ],
      value: null,
    }));
    if (done.outcome !== 'applied') throw new Error(done.outcome);
    expect(done.notifications.map((n) => n.type)).toEqual(['operation.completed', 'operation.conflict']);
    expect(done.notifications[0]!.seq).toBeLessThan(done.notifications[1]!.seq);
    const completed = JSON.parse(done.notifications[0]!.body);
    expect(completed.data).toMatchObject({ media_buy_id: 'mb_1', operation: { id: op.id, status: 'completed' }, event: { id: done.events[0]!.id, to: 'completed' } });
    expect(JSON.parse(done.notifications[1]!.body).data.event).toMatchObject({ id: done.events[1]!.id, kind: 'conflict' });
    expect((await ofOperation(op.id)).map((n) => n.type)).toEqual(['operation.created', 'operation.completed', 'operation.conflict']);
  });

  it('a mutation under a lost lease writes nothing: no change, no event, no notification', async () => {
    const op = newOperation({ next_check_at: 1, check_kind: 'poll', status: 'submitted' });
    await store.operations.insert(op, { source: 'call', kind: 'created', to: 'submitted' });
    const before = await store.notifications.maxSeq();
    const stale = await store.operations.mutate(op.id, { owner: 'someone-else', epoch: 99 }, () => ({
      patch: { status: 'completed' },
      events: [{ source: 'poll', kind: 'transition', from: 'submitted', to: 'completed' }],
      value: null,
    }));
    expect(stale.outcome).toBe('lease_lost');
    expect((await store.operations.get(op.id))!.status).toBe('submitted');
    expect(await store.operations.events(op.id)).toHaveLength(1);
    expect((await ofOperation(op.id)).map((n) => n.type)).toEqual(['operation.created']);
    expect(await store.notifications.maxSeq()).toBe(before);
  });

  it('a transaction that fails after the change rolls back the change and its notification together', async () => {
    const op = newOperation({ status: 'submitted' });
    await store.operations.insert(op, { source: 'call', kind: 'created', to: 'submitted' });
    let reached = false;
    await expect(
      inWriteTransaction(store.db, async (trx) => {
        const r = await store.operations.mutateIn(trx, op.id, null, () => ({
          patch: { status: 'failed' },
          events: [{ source: 'webhook', kind: 'transition', from: 'submitted', to: 'failed' }],
          value: null,
        }));
        reached = r.outcome === 'applied' && r.notifications.length === 1;
        // What commits with it fails (a webhook's dedupe record, say): nothing may stay.
        throw new Error('the rest of the transaction failed');
      }),
    ).rejects.toThrow('the rest of the transaction failed');
    expect(reached).toBe(true);
    expect((await store.operations.get(op.id))!.status).toBe('submitted');
    expect((await ofOperation(op.id)).map((n) => n.type)).toEqual(['operation.created']);

    // An insert that fails (the same id again) leaves no notification either.
    const count = (await ofOperation(op.id)).length;
    await expect(store.operations.insert({ ...op, idempotency_key: randomUUID() }, { source: 'user', kind: 'created' })).rejects.toThrow();
    expect(await ofOperation(op.id)).toHaveLength(count);
  });

  it('insertIn writes in the caller’s transaction; after, bySeq, findById and maxSeq read them back', async () => {
    const other = (await store.tenants.ensureTenant('other')).id;
    const start = await store.notifications.maxSeq();
    const row = (tenant: string, type: string) => ({ id: newNotificationId(), tenant_id: tenant, type, operation_id: null, created_at: Date.now(), body: JSON.stringify({ type }) });
    const written = await inWriteTransaction(store.db, (trx) =>
      store.notifications.insertIn(trx, [row(tenantId, 'campaign.completed'), row(other, 'campaign.completed'), row(tenantId, 'campaign.completed')]),
    );
    expect(written.map((w) => w.tenant_id)).toEqual([tenantId, other, tenantId]);
    expect(written.every((w, i) => i === 0 || w.seq > written[i - 1]!.seq)).toBe(true);
    expect(await store.notifications.maxSeq()).toBe(written[2]!.seq);

    // Rolled back with its transaction.
    const lost = row(tenantId, 'campaign.completed');
    await expect(
      inWriteTransaction(store.db, async (trx) => {
        await store.notifications.insertIn(trx, [lost]);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await store.notifications.findById(tenantId, lost.id)).toBeUndefined();

    expect((await store.notifications.after(tenantId, start, 10)).map((n) => n.id)).toEqual([written[0]!.id, written[2]!.id]);
    expect((await store.notifications.after(tenantId, start, 10, written[1]!.seq)).map((n) => n.id)).toEqual([written[0]!.id]);
    expect((await store.notifications.after(tenantId, written[0]!.seq, 1)).map((n) => n.id)).toEqual([written[2]!.id]);
    expect((await store.notifications.bySeq(start, 10)).map((n) => n.id)).toEqual(written.map((w) => w.id));
    expect(await store.notifications.findById(tenantId, written[0]!.id)).toEqual(written[0]);
    // Another tenant's notification is not found through this tenant.
    expect(await store.notifications.findById(tenantId, written[1]!.id)).toBeUndefined();
  });
});
