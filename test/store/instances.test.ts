/**
 * The instances table on SQLite and (with TEST_DATABASE_URL) PostgreSQL: heartbeats
 * on the database's clock, dead instances' leases handed back at once (epochs kept,
 * so their old owner stays fenced), and the SQLite file claim.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationRow, Store } from '../../src/store/index.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { InstanceLock } from '../../src/store/instance-lock.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';
import { closeSellerStore, openSellerStore } from '../helpers/seller-store.js';

describe.each(dialects)('instances on $name', ({ name, make }) => {
  let database: TestDatabase;
  let store: Store;
  let tenantId: string;
  let agentId: string;

  beforeAll(async () => {
    database = await make();
    ({ store, tenantId, agentId } = await openSellerStore(database));
  });
  afterAll(() => closeSellerStore(store, database));

  const me = (id: string) => ({ id, pid: process.pid, hostname: 'test-host' });
  const LIMITS = { deadAfterMs: 10_000, lockGraceMs: 3_000 };

  /** An operation mid-send, leased by `owner` until far in the future. */
  async function leasedBy(owner: string, over: Partial<OperationRow> = {}): Promise<OperationRow> {
    const now = Date.now();
    const row = newOperationRow(
      { id: randomUUID(), tenant_id: tenantId, agent_id: agentId, type: 'create_media_buy', idempotency_key: randomUUID(), request_body: '{}', created_at: now },
      { status: 'calling_adcp', check_kind: 'send', next_check_at: now + 600_000, lease_owner: owner, lease_until: now + 600_000, lease_epoch: 3, attempt: 1, ...over },
    );
    await store.operations.insert(row, { source: 'user', kind: 'created' });
    return row;
  }

  /** Ages a row's heartbeat as if it had stopped `ms` ago. */
  const age = (id: string, ms: number) =>
    store.db.kysely.updateTable('instances').set((eb) => ({ heartbeat_at: eb('heartbeat_at', '-', ms) })).where('id', '=', id).execute();

  it('registers, beats and lists with ages from the database clock', async () => {
    await store.instances.register(me('a'));
    await store.instances.setUrl('a', 'http://127.0.0.1:1234');
    expect(await store.instances.heartbeat('a')).toBe(true);
    expect(await store.instances.heartbeat('nobody')).toBe(false);
    const [row] = (await store.instances.list()).filter((r) => r.id === 'a');
    expect(row).toMatchObject({ id: 'a', pid: process.pid, hostname: 'test-host', url: 'http://127.0.0.1:1234' });
    // The database's clock and ours are the same machine's here.
    expect(Math.abs(row!.heartbeat_at - Date.now())).toBeLessThan(2_000);
    expect(row!.age_ms).toBeGreaterThanOrEqual(-50);
    expect(row!.age_ms).toBeLessThan(2_000);
    expect(await store.instances.countLive(10_000)).toBe(1);
    await store.instances.remove('a', Date.now());
    expect(await store.instances.list()).toEqual([]);
  });

  it('declares a stale instance dead, releasing its leases at once, exactly once', async () => {
    await store.instances.register(me('live'));
    await store.instances.register(me('dead'));
    await store.instances.register(me('slow'));
    await age('dead', 60_000);
    await age('slow', 5_000);
    const mine = await leasedBy('live');
    const theirs = [await leasedBy('dead'), await leasedBy('dead')];
    const untimed = await leasedBy('dead', { next_check_at: null });
    const slowOnes = await leasedBy('slow');
    await store.jobLeases.claim('reconcile:x', 'dead', Date.now(), Date.now() + 600_000);
    await store.jobLeases.claim('reconcile:y', 'live', Date.now(), Date.now() + 600_000);

    const now = Date.now();
    const [first, second] = await Promise.all([
      store.instances.declareDead('live', LIMITS, now),
      store.instances.declareDead('slow', LIMITS, now),
    ]);
    // Two live instances declaring at once: one of them did it, the other found nothing left.
    const did = [first, second].filter((r) => r.ids.length > 0);
    expect(did).toHaveLength(1);
    expect(did[0]).toEqual({ ids: ['dead'], released: { operations: 3, jobs: 1 } });
    expect([first, second].find((r) => r.ids.length === 0)).toEqual({ ids: [], released: { operations: 0, jobs: 0 } });

    for (const t of theirs) {
      // Free and due now; the epoch is untouched, so the old owner's writes are still refused.
      expect(await store.operations.get(t.id)).toMatchObject({ lease_owner: null, lease_until: null, next_check_at: now, lease_epoch: 3, status: 'calling_adcp' });
    }
    expect(await store.operations.get(untimed.id)).toMatchObject({ lease_owner: null, next_check_at: null });
    expect(await store.operations.get(mine.id)).toMatchObject({ lease_owner: 'live', lease_until: mine.lease_until });
    expect(await store.operations.get(slowOnes.id)).toMatchObject({ lease_owner: 'slow' });
    expect(await store.jobLeases.get('reconcile:x')).toBeUndefined();
    expect((await store.jobLeases.get('reconcile:y'))?.owner).toBe('live');
    expect((await store.instances.list()).map((r) => r.id).sort()).toEqual(['live', 'slow']);

    // The released work is claimable now by anyone, with a higher epoch.
    const claimed = await store.operations.claimOne(theirs[0]!.id, 'live', Date.now(), 30_000);
    expect(claimed).toMatchObject({ lease_owner: 'live', lease_epoch: 4 });
    const stale = await store.operations.mutate(theirs[0]!.id, { owner: 'dead', epoch: 3 }, () => ({ patch: { status: 'failed' }, value: null }));
    expect(stale.outcome).toBe('lease_lost');

    // A clean shutdown hands its own leases back the same way.
    expect(await store.instances.remove('slow', Date.now())).toEqual({ operations: 1, jobs: 0 });
    expect(await store.operations.get(slowOnes.id)).toMatchObject({ lease_owner: null });
    await store.instances.remove('live', Date.now());
  });

  it.runIf(name === 'postgres')('declares an instance dead once its lock connection is gone and its heartbeat is past the grace, long before the limit', async () => {
    const theirLock = await InstanceLock.acquire(database.url);
    const ourLock = await InstanceLock.acquire(database.url);
    expect(theirLock.key).not.toBe(ourLock.key);
    await store.instances.register({ ...me('locked'), lock_key: theirLock.key });
    await store.instances.register({ ...me('watcher'), lock_key: ourLock.key });
    const work = await leasedBy('locked');
    expect((await store.instances.declareDead('watcher', LIMITS, Date.now())).ids).toEqual([]);

    // The process dies: its connection closes and the server drops the lock with it.
    await theirLock.release();
    expect(theirLock.isLost).toBe(true);
    // Within the grace a dropped lock alone is not death (a live instance takes a new one at its next heartbeat).
    expect(await store.instances.heartbeat('locked')).toBe(true);
    expect((await store.instances.declareDead('watcher', LIMITS, Date.now())).ids).toEqual([]);
    await age('locked', 4_000);
    const declared = await store.instances.declareDead('watcher', LIMITS, Date.now());
    expect(declared).toEqual({ ids: ['locked'], released: { operations: 1, jobs: 0 } });
    expect(await store.operations.get(work.id)).toMatchObject({ lease_owner: null });
    // Ours is still held, so we are alive to the others.
    expect((await store.instances.declareDead('someone-else', LIMITS, Date.now())).ids).toEqual([]);
    await store.instances.remove('watcher', Date.now());
    await ourLock.release();
  });

  it.runIf(name === 'sqlite')('claims a SQLite file: refused while a live holder has it, taken over (all foreign leases released) otherwise', async () => {
    await store.instances.register(me('holder'));
    const held = await leasedBy('holder');
    const orphan = await leasedBy('no-row-at-all');
    await store.jobLeases.claim('reconcile:z', 'holder', Date.now(), Date.now() + 600_000);

    const refused = await store.instances.claimFile(me('second'), () => true, Date.now());
    expect(refused).toMatchObject({ outcome: 'held', holder: { id: 'holder', pid: process.pid } });
    expect((await store.instances.list()).map((r) => r.id)).toEqual(['holder']);
    expect(await store.operations.get(held.id)).toMatchObject({ lease_owner: 'holder' });

    const now = Date.now();
    const taken = await store.instances.claimFile(me('second'), () => false, now);
    expect(taken).toMatchObject({ outcome: 'taken', replaced: [{ id: 'holder' }], released: { operations: 2, jobs: 1 } });
    expect((await store.instances.list()).map((r) => r.id)).toEqual(['second']);
    for (const id of [held.id, orphan.id]) expect(await store.operations.get(id)).toMatchObject({ lease_owner: null, next_check_at: now, lease_epoch: 3 });
    await store.instances.remove('second', Date.now());
  });
});
