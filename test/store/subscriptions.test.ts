/**
 * The subscription store on SQLite and (with TEST_DATABASE_URL) PostgreSQL:
 * fan-out exactly once per (subscription, notification) however many run it at
 * once, claims that never hand one delivery to two workers, order per
 * operation, lease-checked finishing, 410 disabling, redelivery.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';
import { writeNotifications } from '../helpers/outbox.js';

const EVERYTHING = async () => Number.MAX_SAFE_INTEGER;
const fanOut = async (s: Store) => (await s.subscriptions.fanOut(EVERYTHING)).created;

describe.each(dialects)('subscriptions store on $name', ({ make }) => {
  let database: TestDatabase;
  let store: Store;
  let other: Store;
  let tenantId: string;

  beforeAll(async () => {
    database = await make();
    store = await openStore(database.url);
    other = await openStore(database.url, { migrate: false });
    tenantId = (await store.tenants.ensureTenant(`t-${randomUUID()}`)).id;
  });
  afterAll(async () => {
    await other?.close();
    await store?.close();
    await database?.drop();
  });

  const subscribe = (events: string[] | null = null, tenant = tenantId) =>
    store.subscriptions.create({ tenantId: tenant, urlSealed: 'sealed', urlDisplay: 'https://x.example/hook', events, format: 'standard', secretSealed: 'sealed-secret', createdBy: 'admin-key' });

  it('a new subscription starts after the notifications already written', async () => {
    await writeNotifications(store, tenantId, [{ type: 'operation.created', operationId: 'op_old' }]);
    const sub = await subscribe();
    await fanOut(store);
    expect(await store.subscriptionDeliveries.list(tenantId, sub.id, { limit: 10 })).toEqual([]);
    await store.subscriptions.delete(tenantId, sub.id, 'admin-key');
  });

  it('fans out once per (subscription, notification) even when two stores race, and only matching types', async () => {
    const all = await subscribe();
    const completedOnly = await subscribe(['operation.completed']);
    const otherTenant = (await store.tenants.ensureTenant(`t-${randomUUID()}`)).id;
    const foreign = await subscribe(null, otherTenant);
    const written = await writeNotifications(store, tenantId, [
      { type: 'operation.created', operationId: 'op_a' },
      { type: 'operation.submitted', operationId: 'op_a' },
      { type: 'operation.completed', operationId: 'op_a' },
    ]);
    const counts = await Promise.all([fanOut(store), fanOut(other), fanOut(store)]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(4);
    const toAll = await store.subscriptionDeliveries.list(tenantId, all.id, { limit: 10 });
    expect(toAll.map((d) => d.notification_id).reverse()).toEqual(written.map((n) => n.id));
    expect((await store.subscriptionDeliveries.list(tenantId, completedOnly.id, { limit: 10 })).map((d) => d.type)).toEqual(['operation.completed']);
    expect(await store.subscriptionDeliveries.list(otherTenant, foreign.id, { limit: 10 })).toEqual([]);
    expect(await fanOut(store)).toBe(0);
    for (const s of [all, completedOnly, foreign]) await store.subscriptions.delete(s.tenant_id, s.id, null);
  });

  it('claims: disjoint between two workers, in order per operation, lease-checked, 410 disables', async () => {
    const sub = await subscribe();
    const written = await writeNotifications(store, tenantId, [
      { type: 'operation.created', operationId: 'op_x' },
      { type: 'operation.submitted', operationId: 'op_x' },
      { type: 'operation.created', operationId: 'op_y' },
    ]);
    await fanOut(store);
    const now = Date.now();
    const [a, b] = await Promise.all([store.subscriptionDeliveries.claimDue('A', now, 60_000, 10), other.subscriptionDeliveries.claimDue('B', now, 60_000, 10)]);
    const claimed = [...a, ...b];
    // The second notification of op_x waits for the first: only two are claimable.
    expect(claimed.map((d) => d.notification_id).sort()).toEqual([written[0]!.id, written[2]!.id].sort());
    expect(new Set(claimed.map((d) => d.id)).size).toBe(claimed.length);
    expect(claimed.every((d) => d.attempt_count === 1 && d.schedule_step === 1)).toBe(true);
    expect(await store.subscriptionDeliveries.claimDue('C', now, 60_000, 10)).toEqual([]);

    const first = claimed.find((d) => d.notification_id === written[0]!.id)!;
    const attempt = { attempt: 1, startedAt: now, durationMs: 3, httpStatus: 204, error: null };
    // A worker holding a stale lease changes nothing.
    expect(await store.subscriptionDeliveries.finish({ id: first.id, owner: first.lease_owner!, epoch: first.lease_epoch - 1 }, attempt, { outcome: 'delivered' }, now)).toBe(false);
    expect(await store.subscriptionDeliveries.finish({ id: first.id, owner: first.lease_owner!, epoch: first.lease_epoch }, attempt, { outcome: 'delivered' }, now)).toBe(true);
    // Now the second of op_x is due.
    const next = await store.subscriptionDeliveries.claimDue('C', Date.now(), 60_000, 10);
    expect(next.map((d) => d.notification_id)).toEqual([written[1]!.id]);

    // op_y's answer is 410: that delivery fails, the subscription is disabled, and what was pending fails with it.
    const y = claimed.find((d) => d.notification_id === written[2]!.id)!;
    await store.subscriptionDeliveries.finish(
      { id: y.id, owner: y.lease_owner!, epoch: y.lease_epoch },
      { attempt: 1, startedAt: now, durationMs: 2, httpStatus: 410, error: null },
      { outcome: 'disabled', reason: 'the receiver answered 410 Gone' },
      now,
      (trx, reason) => store.subscriptions.disableIn(trx, sub.id, reason, now),
    );
    const shown = await store.subscriptions.get(tenantId, sub.id);
    expect(shown).toMatchObject({ disabled_reason: 'the receiver answered 410 Gone' });
    const rows = await store.subscriptionDeliveries.list(tenantId, sub.id, { limit: 10 });
    expect(rows.map((d) => d.status).sort()).toEqual(['delivered', 'failed', 'failed']);
    const attempts = await store.subscriptionDeliveries.attempts([first.id, y.id]);
    expect(attempts.get(first.id)!.map((x) => x.outcome)).toEqual(['delivered']);
    expect(attempts.get(y.id)!.map((x) => [x.http_status, x.outcome])).toEqual([[410, 'disabled']]);
    // Disabled: no more fan-out to it, and nothing is redelivered.
    await writeNotifications(store, tenantId, [{ type: 'operation.completed', operationId: 'op_x' }]);
    await fanOut(store);
    expect(await store.subscriptionDeliveries.list(tenantId, sub.id, { limit: 10 })).toHaveLength(3);
    expect(await store.subscriptionDeliveries.redeliver(tenantId, sub.id, y.id, 'admin-key')).toEqual({ kind: 'subscription_disabled' });
  });

  it('redelivery: a failed one is pending again with a fresh schedule; a delivered one is refused; another tenant sees nothing', async () => {
    const sub = await subscribe();
    const [n1, n2] = await writeNotifications(store, tenantId, [
      { type: 'operation.created', operationId: 'op_r' },
      { type: 'operation.created', operationId: 'op_s' },
    ]);
    await fanOut(store);
    const now = Date.now();
    const claimed = await store.subscriptionDeliveries.claimDue('A', now, 60_000, 10);
    const d1 = claimed.find((d) => d.notification_id === n1!.id)!;
    const d2 = claimed.find((d) => d.notification_id === n2!.id)!;
    await store.subscriptionDeliveries.finish({ id: d1.id, owner: 'A', epoch: d1.lease_epoch }, { attempt: 1, startedAt: now, durationMs: 1, httpStatus: 500, error: null }, { outcome: 'failed' }, now);
    await store.subscriptionDeliveries.finish({ id: d2.id, owner: 'A', epoch: d2.lease_epoch }, { attempt: 1, startedAt: now, durationMs: 1, httpStatus: 200, error: null }, { outcome: 'delivered' }, now);

    expect(await store.subscriptionDeliveries.redeliver(randomUUID(), sub.id, d1.id, 'x')).toEqual({ kind: 'not_found' });
    expect(await store.subscriptionDeliveries.redeliver(tenantId, sub.id, d2.id, 'admin-key')).toEqual({ kind: 'already_delivered' });
    const again = await store.subscriptionDeliveries.redeliver(tenantId, sub.id, d1.id, 'admin-key', now + 1);
    expect(again).toMatchObject({ kind: 'scheduled', delivery: { status: 'pending', schedule_step: 0, attempt_count: 1, redelivered_by: 'admin-key', next_attempt_at: now + 1 } });
    const reclaimed = await store.subscriptionDeliveries.claimDue('B', now + 2, 60_000, 10);
    expect(reclaimed.map((d) => [d.id, d.attempt_count, d.schedule_step])).toEqual([[d1.id, 2, 1]]);
    // Shutting down mid-attempt gives the schedule step back and makes it due at once.
    expect(await store.subscriptionDeliveries.interrupt({ id: d1.id, owner: 'B', epoch: reclaimed[0]!.lease_epoch }, { attempt: 2, startedAt: now, durationMs: 1, httpStatus: null, error: 'interrupted' }, now + 3)).toBe(true);
    const after = (await store.subscriptionDeliveries.get(tenantId, sub.id, d1.id))!;
    expect(after).toMatchObject({ status: 'pending', schedule_step: 0, next_attempt_at: now + 3, lease_owner: null });
    expect((await store.subscriptionDeliveries.attempts([d1.id])).get(d1.id)!.map((a) => a.outcome)).toEqual(['failed', 'interrupted']);
  });
});
