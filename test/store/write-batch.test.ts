/**
 * A claimed page's writes share one commit (src/store/write-batch.ts): each held
 * until the page's other slots have written or finished, then all in one grouped
 * transaction; none settles before that commit, a slow slot delays the others by
 * the wait at most, and PostgreSQL holds nothing.
 */
import { randomUUID } from 'node:crypto';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlitePathFromUrl } from '../../src/store/db.js';
import type { OperationRow, Store } from '../../src/store/index.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { WriteBatch } from '../../src/store/write-batch.js';
import type { Tx } from '../../src/store/tx.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';
import { closeSellerStore, openSellerStore } from '../helpers/seller-store.js';

describe.each(dialects)('write batch on $name', ({ name, make }) => {
  let database: TestDatabase;
  let store: Store;
  let tenantId: string;
  let agentId: string;

  beforeAll(async () => {
    database = await make();
    ({ store, tenantId, agentId } = await openSellerStore(database));
  });
  afterAll(() => closeSellerStore(store, database));

  async function seed(n: number): Promise<OperationRow[]> {
    const ops = Array.from({ length: n }, () =>
      newOperationRow(
        { id: randomUUID(), tenant_id: tenantId, agent_id: agentId, type: 'create_media_buy', idempotency_key: randomUUID(), request_body: '{}', created_at: Date.now() },
        { status: 'submitted' },
      ),
    );
    for (const op of ops) await store.operations.insert(op, { source: 'user', kind: 'created', to: 'submitted' });
    return ops;
  }

  const complete = (id: string) => async (trx: Tx) => {
    await trx.updateTable('operations').set({ status: 'completed' }).where('id', '=', id).execute();
    return id;
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('holds each write until every slot has written or finished, then commits them together', async () => {
    const ops = await seed(3);
    const raw = name === 'sqlite' ? new SQLite(sqlitePathFromUrl(database.url), { readonly: true }) : undefined;
    const seen = () => ops.map((op) => (raw!.prepare('SELECT status FROM operations WHERE id = ?').get(op.id) as { status: string }).status);
    let flushedWith = -1;
    const batch = new WriteBatch(store.db, 3, 5_000, (held) => (flushedWith = held));
    const [a, b, c] = [batch.slot(), batch.slot(), batch.slot()];
    const visibleAtSettle: string[][] = [];
    let firstSettled = false;
    const first = a.write(complete(ops[0]!.id)).then((v) => {
      firstSettled = true;
      if (raw) visibleAtSettle.push(seen());
      return v;
    });
    await sleep(50);
    if (name === 'sqlite') {
      // Held: nothing written yet, nothing settled, while the page's other slots are still busy.
      expect(firstSettled).toBe(false);
      expect(seen()).toEqual(['submitted', 'submitted', 'submitted']);
    }
    b.done(); // finished without a write
    const third = c.write(complete(ops[2]!.id)).then((v) => {
      if (raw) visibleAtSettle.push(seen());
      return v;
    });
    expect(await Promise.all([first, third])).toEqual([ops[0]!.id, ops[2]!.id]);
    a.done();
    c.done();
    raw?.close();
    if (name === 'sqlite') {
      expect(flushedWith).toBe(2);
      // One commit: when either promise settled, both writes were already visible to another connection.
      for (const v of visibleAtSettle) expect(v).toEqual(['completed', 'submitted', 'completed']);
    } else {
      expect(flushedWith).toBe(-1); // PostgreSQL: nothing held, nothing flushed
    }
  });

  it('writes what is held once the wait is over, without the slot that never finished; later writes go at once', async () => {
    const ops = await seed(3);
    const batch = new WriteBatch(store.db, 3, 40);
    const [a, b, slow] = [batch.slot(), batch.slot(), batch.slot()];
    const t0 = performance.now();
    await Promise.all([a.write(complete(ops[0]!.id)), b.write(complete(ops[1]!.id))]);
    const waited = performance.now() - t0;
    if (name === 'sqlite') expect(waited).toBeGreaterThanOrEqual(35);
    const t1 = performance.now();
    await slow.write(complete(ops[2]!.id)); // the page was flushed: written on its own, not held
    expect(performance.now() - t1).toBeLessThan(35);
    const statuses = await store.db.kysely.selectFrom('operations').select(['id', 'status']).where('id', 'in', ops.map((o) => o.id)).execute();
    expect(statuses.every((s) => s.status === 'completed')).toBe(true);
  });

  it('a write that fails rejects alone and leaves nothing; the page’s other write commits', async () => {
    const ops = await seed(2);
    const batch = new WriteBatch(store.db, 2, 5_000);
    const [a, b] = [batch.slot(), batch.slot()];
    const results = await Promise.allSettled([
      a.write(async (trx) => {
        await complete(ops[0]!.id)(trx);
        throw new Error('plan failed');
      }),
      b.write(complete(ops[1]!.id)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    const status = async (id: string) => (await store.db.kysely.selectFrom('operations').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
    expect(await status(ops[0]!.id)).toBe('submitted');
    expect(await status(ops[1]!.id)).toBe('completed');
  });
});
