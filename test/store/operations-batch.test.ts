/**
 * Batched mutations (src/store/operations-batch.ts; the Batcher of src/store/tx.ts):
 * `mutate`s queued in the same turn on SQLite are written together, one statement per
 * table (the first of each operation; a second one runs as its own job after the batch).
 * What they write and what each caller is told must be what the same mutations give
 * when run one after another: the same rows, each operation's history and
 * notifications in its own order, the same results. Checked by running one list of
 * mutations both ways on two fresh databases seeded alike.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OperationRow, Store } from '../../src/store/index.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import type { Lease, MutateResult, MutationPlan } from '../../src/store/operations-repo.js';
import { inWriteTransaction } from '../../src/store/tx.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { closeSellerStore, openSellerStore } from '../helpers/seller-store.js';

const NOW = 1_900_000_000_000;

interface Mutation {
  id: string;
  lease: Lease | null;
  plan: (row: OperationRow) => MutationPlan<string>;
}

const transition = (to: string, extra: Partial<OperationRow> = {}) => (row: OperationRow): MutationPlan<string> => ({
  patch: { status: to, last_observed_at: NOW, ...extra },
  events: [{ source: 'webhook', kind: 'transition', from: row.status, to, detail: { seen: row.status } }],
  value: `${row.status}->${to}`,
});

/** The list run both ways: two column sets, one operation changed twice, several events, no-ops, a stranger, a lost lease. */
const mutations: Mutation[] = [
  { id: 'op-1', lease: null, plan: transition('working') },
  { id: 'op-2', lease: null, plan: transition('working') },
  { id: 'op-3', lease: null, plan: transition('completed', { result: '{"media_buy_id":"mb_3"}', completed_at: NOW, next_check_at: null }) },
  // The second change of op-2 must see the first one's row.
  { id: 'op-2', lease: null, plan: transition('completed', { result: '{"media_buy_id":"mb_2"}', completed_at: NOW, next_check_at: null }) },
  { id: 'op-4', lease: null, plan: (row) => ({ value: `unchanged at ${row.status}` }) },
  { id: 'op-missing', lease: null, plan: transition('working') },
  { id: 'op-5', lease: { owner: 'someone', epoch: 7 }, plan: transition('failed') },
  {
    id: 'op-6',
    lease: null,
    plan: (row) => ({
      patch: { stalled: 1, stalled_reason: 'deadline passed' },
      events: [
        { source: 'timer', kind: 'deadline_passed', from: row.status, to: row.status, detail: { deadline_at: 1 } },
        { source: 'timer', kind: 'note', detail: { n: 2 } },
      ],
      value: 'stalled',
    }),
  },
  // Only columns, no event.
  { id: 'op-1', lease: null, plan: () => ({ patch: { poll_count: 3, next_check_at: NOW + 5 }, value: 'timer' }) },
];

/** Tenant and agent ids are random per database: named alike so two databases compare. */
const ids = new WeakMap<Store, { tenantId: string; agentId: string }>();
function alike<T>(store: Store, value: T): T {
  const { tenantId, agentId } = ids.get(store)!;
  return JSON.parse(JSON.stringify(value).replaceAll(tenantId, 'TENANT').replaceAll(agentId, 'AGENT')) as T;
}

async function seeded(databases: TestDatabase[]): Promise<Store> {
  const database = tempSqlite();
  databases.push(database);
  const { store, tenantId, agentId } = await openSellerStore(database);
  ids.set(store, { tenantId, agentId });
  for (let i = 1; i <= 6; i++) {
    const row = newOperationRow(
      { id: `op-${i}`, tenant_id: tenantId, agent_id: agentId, type: 'create_media_buy', idempotency_key: `k-${i}`, request_body: '{}', created_at: NOW - 1000 },
      { status: 'submitted', task_id: `t-${i}`, next_check_at: NOW + 60_000 },
    );
    await store.operations.insert(row, { source: 'call', kind: 'created', to: 'submitted', at: NOW - 1000 });
  }
  return store;
}

/** What a result tells its caller, minus what depends on the order across operations (event ids, notification ids and seqs). */
function told(r: MutateResult<string>) {
  if (r.outcome !== 'applied') return r;
  return {
    ...r,
    events: r.events.map(({ id: _id, ...e }) => e),
    notifications: r.notifications.map((n) => ({ type: n.type, operation_id: n.operation_id, created_at: n.created_at })),
  };
}

/** Everything written, per operation in its own order: a batch may order writes across operations differently (ids, seqs). */
async function everything(store: Store) {
  const db = store.db.kysely;
  const events = await db.selectFrom('operation_events').selectAll().orderBy('id').execute();
  const notifications = await db.selectFrom('notifications').select(['seq', 'type', 'operation_id', 'created_at', 'body']).orderBy('seq').execute();
  const byOperation = <R extends { operation_id: string | null }>(rows: R[], strip: (r: R) => unknown) => {
    const out: Record<string, unknown[]> = {};
    for (const r of rows) (out[r.operation_id ?? ''] ??= []).push(strip(r));
    return out;
  };
  return {
    operations: await db.selectFrom('operations').selectAll().orderBy('id').execute(),
    events: byOperation(events, ({ id: _id, ...e }) => e),
    // The body names its own (random) id, and its event's id.
    notifications: byOperation(notifications, (n) => {
      const data = JSON.parse(n.body).data;
      delete data.event.id;
      return { type: n.type, created_at: n.created_at, body: data };
    }),
  };
}

describe('batched operation mutations (SQLite)', () => {
  const databases: TestDatabase[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await closeSellerStore(s, undefined);
    for (const d of databases.splice(0)) await d.drop();
  });

  it('writes and answers exactly what the same mutations write and answer one after another', async () => {
    const one = await seeded(databases);
    const batched = await seeded(databases);
    stores.push(one, batched);
    const batches = vi.spyOn(batched.operations, 'mutateManyIn');

    const sequential: Array<MutateResult<string>> = [];
    for (const m of mutations) sequential.push(await one.operations.mutate(m.id, m.lease, m.plan, NOW));
    // Queued in the same turn: one grouped transaction, one batch.
    const together = await Promise.all(mutations.map((m) => batched.operations.mutate(m.id, m.lease, m.plan, NOW)));

    // One batch of the first mutation of each operation, then one of the second ones (op-2, op-1), which read what the first wrote.
    expect(batches.mock.calls.map((c) => c[1].map((m) => m.id))).toEqual([
      ['op-1', 'op-2', 'op-3', 'op-4', 'op-missing', 'op-5', 'op-6'],
      ['op-2', 'op-1'],
    ]);
    expect(alike(batched, together.map(told))).toEqual(alike(one, sequential.map(told)));
    expect(alike(batched, await everything(batched))).toEqual(alike(one, await everything(one)));

    // And what that is: op-2 went submitted → working → completed, each step an event that saw the step before.
    const op2 = together.filter((r) => r.outcome === 'applied' && r.row.id === 'op-2');
    expect(op2.map((r) => (r.outcome === 'applied' ? r.value : ''))).toEqual(['submitted->working', 'working->completed']);
    expect(together[5]).toEqual({ outcome: 'not_found' });
    expect(together[6]!.outcome).toBe('lease_lost');
    expect(together[4]).toMatchObject({ outcome: 'unchanged', value: 'unchanged at submitted' });
    const completed = together[3]!;
    expect(completed.outcome === 'applied' && completed.notifications.map((n) => n.type)).toEqual(['operation.completed']);
  });

  it('mutateManyIn chains two changes of one operation: the second plans on the row the first left', async () => {
    const store = await seeded(databases);
    stores.push(store);
    const results = await inWriteTransaction(store.db, (trx) =>
      store.operations.mutateManyIn(trx, [
        { id: 'op-2', lease: null, plan: transition('working'), now: NOW },
        { id: 'op-3', lease: null, plan: transition('working'), now: NOW },
        { id: 'op-2', lease: null, plan: transition('completed', { completed_at: NOW, next_check_at: null }), now: NOW },
      ]),
    );
    expect(results.map((r) => (r.outcome === 'applied' ? r.value : r.outcome))).toEqual(['submitted->working', 'submitted->working', 'working->completed']);
    const row = await store.operations.get('op-2');
    expect(row).toMatchObject({ status: 'completed', completed_at: NOW, next_check_at: null, last_observed_at: NOW });
    const events = await store.operations.events('op-2');
    expect(events.filter((e) => e.kind === 'transition').map((e) => `${e.from_status}->${e.to_status}`)).toEqual(['submitted->working', 'working->completed']);
  });

  it('a plan that throws fails alone: the others commit, it leaves nothing, and it was not batched with them', async () => {
    const store = await seeded(databases);
    stores.push(store);
    const before = await everything(store);
    const results = await Promise.allSettled([
      store.operations.mutate('op-1', null, transition('working'), NOW),
      store.operations.mutate('op-2', null, () => {
        throw new Error('plan failed');
      }, NOW),
      store.operations.mutate('op-3', null, transition('working'), NOW),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('plan failed');
    const after = await everything(store);
    const status = (s: typeof after, id: string) => s.operations.find((o) => o.id === id)!.status;
    expect([status(after, 'op-1'), status(after, 'op-2'), status(after, 'op-3')]).toEqual(['working', 'submitted', 'working']);
    expect(after.events['op-2']).toEqual(before.events['op-2']);
    const count = (s: typeof after) => Object.values(s.events).flat().length;
    expect(count(after) - count(before)).toBe(2);
  });

  it('a mutation with writes of its own alongside runs as its own job, in the same commit as the batch', async () => {
    const store = await seeded(databases);
    stores.push(store);
    const batches = vi.spyOn(store.operations, 'mutateManyIn');
    const alongside = vi.fn(async () => undefined);
    const results = await Promise.all([
      store.operations.mutate('op-1', null, transition('working'), NOW),
      store.operations.mutate('op-2', null, transition('working'), NOW, alongside),
      store.operations.mutate('op-3', null, transition('working'), NOW),
    ]);
    expect(results.map((r) => r.outcome)).toEqual(['applied', 'applied', 'applied']);
    expect(alongside).toHaveBeenCalledTimes(1);
    expect(batches.mock.calls.map((c) => c[1].map((m) => m.id))).toEqual([['op-1', 'op-3']]);
  });
});
