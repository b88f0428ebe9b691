/**
 * PgNotifier: a change published on one instance reaches the others (not
 * itself), a change without a notification too (for dashboard pages) but
 * throttled, and a LISTEN connection killed by the server comes back on its own
 * and says so (so callers can catch up on notices they missed).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import type { BuyChange, OperationChange } from '../../src/engine/change-bus.js';
import { PgNotifier, type RemoteChange } from '../../src/notify/pg-notify.js';
import { openStore, type Store } from '../../src/store/index.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';
import { eventually } from '../helpers/orchestrator.js';

const suite = postgresAdminUrl ? describe : describe.skip;

suite('PgNotifier', () => {
  let database: TestDatabase;
  let store: Store;
  const notifiers: PgNotifier[] = [];

  beforeAll(async () => {
    database = await tempPostgres();
    store = await openStore(database.url);
  });
  afterAll(async () => {
    for (const n of notifiers) await n.stop();
    await store?.close();
    await database?.drop();
  });

  function notifier(instanceId: string, operationNoticeMs?: number) {
    const seen: RemoteChange[] = [];
    let reconnects = 0;
    const n = new PgNotifier({
      url: database.url,
      db: store.db,
      instanceId,
      log: createLogger('silent'),
      channel: 'adcp_orch_events_test',
      onRemote: (c) => seen.push(c),
      onReconnect: () => reconnects++,
      ...(operationNoticeMs !== undefined ? { operationNoticeMs } : {}),
    });
    notifiers.push(n);
    return { n, seen, reconnects: () => reconnects };
  }

  /** A committed change that wrote notifications with these seqs (none: only bookkeeping events). */
  const change = (tenant: string, seqs: number[], kind = 'transition', nextCheckAt: number | null = null, id = `op-${tenant}`) =>
    ({
      operation: { id, tenant_id: tenant, next_check_at: nextCheckAt },
      events: [{ id: 1, kind }],
      notifications: seqs.map((seq) => ({ seq, tenant_id: tenant })),
    }) as unknown as OperationChange;

  it('fans a change out to other instances, coalesced per tenant, and flags new work as due', async () => {
    const a = notifier('A');
    const b = notifier('B');
    await a.n.start();
    await b.n.start();
    a.n.publish(change('t1', [5, 6]));
    a.n.publish(change('t1', [7], 'created', Date.now()));
    a.n.publish(change('t2', [8]));
    // Nothing to tell: no notification and no work due (a resend, a failed poll).
    a.n.publish(change('t4', [], 'poll_failed', Date.now() + 60_000));
    // Work due without a notification still wakes the other schedulers.
    a.n.publish(change('t5', [], 'transition', Date.now() - 1));
    await eventually(async () => (b.seen.length >= 5 ? true : undefined), 5000);
    const none = { operationIds: [], manyOperations: false };
    expect(b.seen.filter((c) => c.operationIds.length === 0)).toEqual([
      { tenantId: 't1', maxSeq: 7, due: true, ...none },
      { tenantId: 't2', maxSeq: 8, due: false, ...none },
      { tenantId: 't5', maxSeq: 0, due: true, ...none },
    ]);
    // Changes without a notification are told apart, for other instances' dashboard pages.
    expect(b.seen.filter((c) => c.operationIds.length > 0)).toEqual([
      { tenantId: 't4', maxSeq: 0, due: false, operationIds: ['op-t4'], manyOperations: false },
      { tenantId: 't5', maxSeq: 0, due: false, operationIds: ['op-t5'], manyOperations: false },
    ]);
    // Our own notices are not echoed back: the in-process bus already covered them.
    expect(a.seen).toEqual([]);
  });

  it("tells other instances of a live buy's change by the buy's id (and its create's), notification or not, and of ids found after commit", async () => {
    const a = notifier('A4');
    const b = notifier('B4');
    await a.n.start();
    await b.n.start();
    const buyChange = (tenant: string, seqs: number[]) =>
      ({ buy: { id: `buy-${tenant}`, tenant_id: tenant, operation_id: `create-${tenant}` }, events: [{ id: 1, kind: 'report_received' }], notifications: seqs.map((seq) => ({ seq, tenant_id: tenant })) }) as unknown as BuyChange;
    a.n.publishBuy(buyChange('t7', []));
    a.n.publishBuy(buyChange('t8', [11]));
    a.n.publishBuy({ ...buyChange('t9', []), events: [] });
    a.n.publishIds('t10', ['buy-t10']);
    await eventually(async () => (b.seen.filter((c) => ['t7', 't8', 't10'].includes(c.tenantId)).length >= 4 ? true : undefined), 5000);
    const seen = b.seen.filter((c) => c.tenantId.startsWith('t') && Number(c.tenantId.slice(1)) >= 7);
    expect(seen).toEqual(
      expect.arrayContaining([
        { tenantId: 't7', maxSeq: 0, due: false, operationIds: ['buy-t7', 'create-t7'], manyOperations: false },
        { tenantId: 't8', maxSeq: 0, due: false, operationIds: ['buy-t8', 'create-t8'], manyOperations: false },
        { tenantId: 't8', maxSeq: 11, due: false, operationIds: [], manyOperations: false },
        { tenantId: 't10', maxSeq: 0, due: false, operationIds: ['buy-t10'], manyOperations: false },
      ]),
    );
    // A change with no event is nothing to tell.
    expect(seen.filter((c) => c.tenantId === 't9')).toEqual([]);
    expect(seen).toHaveLength(4);
  });

  it('throttles notices of changes without a notification: a burst is one or two notices naming them, or "many"', async () => {
    const a = notifier('A3', 300);
    const b = notifier('B3');
    await a.n.start();
    await b.n.start();
    for (let i = 0; i < 200; i++) a.n.publish(change('t6', [], 'transition', null, `op-${i % 120}`));
    await eventually(async () => (b.seen.filter((c) => c.tenantId === 't6').length >= 1 ? true : undefined), 5000);
    await new Promise((r) => setTimeout(r, 700));
    const notices = b.seen.filter((c) => c.tenantId === 't6');
    expect(notices.length).toBeLessThanOrEqual(2);
    expect(notices.some((c) => c.manyOperations)).toBe(true);
    expect(notices.every((c) => c.operationIds.length <= 50)).toBe(true);
  });

  it('reconnects after the server drops the LISTEN connection, and reports it', async () => {
    const a = notifier('A2');
    const b = notifier('B2');
    await a.n.start();
    await b.n.start();
    // Every LISTEN session of this test database is cut off, as a server restart or proxy would.
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN adcp_orch_events_test%' AND datname = current_database()`.execute(store.db.kysely);
    await eventually(async () => (b.reconnects() >= 1 && b.n.listening ? true : undefined), 10_000);
    a.n.publish(change('t3', [9]));
    await eventually(async () => (b.seen.some((c) => c.tenantId === 't3') ? true : undefined), 5000);
  });
});
