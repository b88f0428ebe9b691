/**
 * On PostgreSQL, notification seqs can become visible out of order (two
 * transactions, the one with the smaller seq commits last). The horizon must hold
 * live readers below a gap until the transaction that owns it has ended; and a live
 * reader held there gets the rows once the gap closes, even if nothing wakes it.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { EventFeed } from '../../src/notify/event-feed.js';
import { PgEventHorizon } from '../../src/notify/event-horizon.js';
import type { NotificationRow } from '../../src/store/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';

const suite = postgresAdminUrl ? describe : describe.skip;

suite('PgEventHorizon', () => {
  let database: TestDatabase;
  let store: Store;
  const clients: pg.Client[] = [];

  beforeAll(async () => {
    database = await tempPostgres();
    store = await openStore(database.url);
    await store.db.kysely.insertInto('tenants').values({ id: 't', name: 't', created_at: 0 }).execute();
    await store.db.kysely.insertInto('agents').values({ id: 'a', tenant_id: 't', name: 'a', role: 'seller', url: 'http://x', protocol: 'mcp', created_at: 0 } as never).execute();
  });
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
    await store?.close();
    await database?.drop();
  });

  async function session(): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    clients.push(c);
    return c;
  }

  /** An operation row, so events can reference it; in its own transaction like the engine's writers. */
  async function newOperation(c: pg.Client): Promise<string> {
    const id = randomUUID();
    await c.query(
      `INSERT INTO operations (id, tenant_id, agent_id, type, status, idempotency_key, request_body, needs_input, stalled, poll_count, attempt, lease_epoch, created_at, updated_at, check_kind)
       VALUES ($1, 't', 'a', 'create_media_buy', 'requested', $1, '{}', 0, 0, 0, 0, 0, 0, 0, 'send')`,
      [id],
    );
    return id;
  }

  /** A notification about `op`, as the operations repo writes one after locking the operation row. */
  const insertNotification = async (c: pg.Client, op: string) =>
    Number(
      (await c.query(`INSERT INTO notifications (id, tenant_id, type, operation_id, created_at, body) VALUES ($1, 't', 'operation.created', $2, 0, '{}') RETURNING seq`, [`ntf_${randomUUID()}`, op])).rows[0].seq,
    );

  /** A horizon past its first look, and two sessions A and B with an operation each. */
  async function twoWriters() {
    const horizon = new PgEventHorizon(store.db, createLogger('silent'));
    const [a, b] = [await session(), await session()];
    const ops = { a: await newOperation(a), b: await newOperation(b) };
    await horizon.current();
    return { horizon, a, b, ops };
  }

  /** Opens a transaction on `c` that locks `op` (as the engine's writers do) and draws a seq in it. */
  async function openWriter(c: pg.Client, op: string, takeIdFirst = false): Promise<number> {
    await c.query('BEGIN');
    await c.query('SELECT id FROM operations WHERE id = $1 FOR UPDATE', [op]);
    if (takeIdFirst) await c.query('SELECT pg_current_xact_id()');
    return insertNotification(c, op);
  }

  it('does not pass an id whose transaction is still running, and passes it once that commits or rolls back', async () => {
    const { horizon, a, b, ops } = await twoWriters();
    const [opA, opB] = [ops.a, ops.b];

    // A draws the smaller id but commits last.
    const idA = await openWriter(a, opA);
    await b.query('BEGIN');
    const idB = await insertNotification(b, opB);
    await b.query('COMMIT');
    expect(idB).toBeGreaterThan(idA);
    expect(await horizon.current()).toBe(idA - 1);

    await a.query('COMMIT');
    expect(await horizon.current()).toBe(idB);

    // A rolled-back id leaves a permanent gap; it is passed once the rollback is done.
    const lost = await openWriter(a, opA);
    const after = await insertNotification(b, opB);
    expect(await horizon.current()).toBe(lost - 1);
    await a.query('ROLLBACK');
    expect(await horizon.current()).toBe(after);
  });

  it('starts a new reader at the newest visible seq, not 0, while its first look waits for a transaction', async () => {
    const [a, b] = [await session(), await session()];
    const opA = await newOperation(a);
    const opB = await newOperation(b);
    await openWriter(a, opA);
    const visible = await insertNotification(b, opB);
    const horizon = new PgEventHorizon(store.db, createLogger('silent'));
    // Nothing is known final yet (A may still commit below `visible`)…
    expect(await horizon.current()).toBe(0);
    // …but a stream asking only for what is new must not replay the whole history.
    expect(await horizon.startingPoint()).toBe(visible);
    await a.query('COMMIT');
    expect(await horizon.current()).toBe(visible);
  });

  it('is not held up by a transaction running in another database of the same server', async () => {
    const elsewhere = new pg.Client({ connectionString: postgresAdminUrl });
    await elsewhere.connect();
    clients.push(elsewhere);
    await elsewhere.query('BEGIN');
    await elsewhere.query('SELECT pg_current_xact_id()');
    const b = await session();
    const op = await newOperation(b);
    const seq = await insertNotification(b, op);
    // Its first look sees the other database's transaction in the server-wide snapshot.
    const horizon = new PgEventHorizon(store.db, createLogger('silent'));
    expect(await horizon.current()).toBe(seq);
    await elsewhere.query('ROLLBACK');
  });

  it('holds a gap whose writer took its transaction id after the visible row\'s writer (no snapshot lists it)', async () => {
    const { horizon, a, b, ops } = await twoWriters();
    // B takes its id first; A takes a later one, then draws the smaller seq; B commits.
    // A snapshot's xmax is now one past B's id: A, running above it, is in no in-progress list.
    await b.query('BEGIN');
    await b.query('SELECT pg_current_xact_id()');
    const idA = await openWriter(a, ops.a, true);
    const idB = await insertNotification(b, ops.b);
    await b.query('COMMIT');
    expect(idB).toBeGreaterThan(idA);
    expect(await horizon.current()).toBe(idA - 1);
    await a.query('COMMIT');
    expect(await horizon.current()).toBe(idB);
  });

  it('delivers to a reader held at a gap once the gap closes, though no commit or tick wakes it', async () => {
    // The fallback tick is off, as in the multi-instance test: only a wake-up, or the reader's own look, can move it.
    const log = createLogger('silent');
    const feed = new EventFeed(store, new PgEventHorizon(store.db, log), log, { fallbackPollMs: 0, pageSize: 50 });
    const got: NotificationRow[] = [];
    const [a, b] = [await session(), await session()];
    const opA = await newOperation(a);
    const opB = await newOperation(b);
    const sub = feed.subscribe('t', await feed.startingPoint(), { deliver: async (rows) => void got.push(...rows), end: () => undefined });
    try {
      // A holds the smaller seq open; B's row above it is visible and B's NOTIFY wakes the reader.
      await openWriter(a, opA);
      const idB = await insertNotification(b, opB);
      feed.wake('t');
      await new Promise((r) => setTimeout(r, 100));
      expect(got).toEqual([]);
      // A rolls back: its seq will never exist, and a rollback notifies nobody.
      await a.query('ROLLBACK');
      const until = Date.now() + 5_000;
      while (got.length < 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(got.map((n) => Number(n.seq))).toEqual([idB]);
    } finally {
      sub.close();
      feed.stop();
    }
  });
});
