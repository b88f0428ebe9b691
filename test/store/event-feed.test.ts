/**
 * The SSE feed on a real database (both dialects): local changes are handed to
 * streams from the ChangeBus publication itself, with no read of the table; a
 * notification this process did not publish (another instance's, or published
 * late) sends the reader to the table, and either way each stream gets its
 * tenant's notifications once, in seq order.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { EventFeed } from '../../src/notify/event-feed.js';
import { eventHorizonFor } from '../../src/notify/event-horizon.js';
import { openStore, type NotificationRow, type Store } from '../../src/store/index.js';
import { newNotificationId } from '../../src/store/notifications-repo.js';
import { inWriteTransaction } from '../../src/store/tx.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';
import { eventually } from '../helpers/orchestrator.js';

describe.each(dialects)('event feed on $name', ({ make }) => {
  let database: TestDatabase;
  let store: Store;
  let feed: EventFeed;
  const log = createLogger('silent');

  beforeAll(async () => {
    database = await make();
    store = await openStore(database.url);
    await store.tenants.ensureTenant('t');
    feed = new EventFeed(store, eventHorizonFor(store.db, log), log, { fallbackPollMs: 0, pageSize: 3 });
  });
  afterAll(async () => {
    feed?.stop();
    await store?.close();
    await database?.drop();
  });

  /** Commits notifications for `tenant` (one transaction), as a change would. */
  const write = (tenant: string, n = 1): Promise<NotificationRow[]> =>
    inWriteTransaction(store.db, (trx) =>
      store.notifications.insertIn(
        trx,
        Array.from({ length: n }, () => ({ id: newNotificationId(), tenant_id: tenant, type: 'campaign.completed', operation_id: null, created_at: Date.now(), body: '{}' })),
      ),
    );

  function reader(tenant: string, after: number) {
    const got: NotificationRow[] = [];
    const sub = feed.subscribe(tenant, after, { deliver: async (rows) => void got.push(...rows), end: () => undefined });
    const until = (n: number) => eventually(async () => (got.length >= n ? true : undefined), 10_000, 5);
    return { got, sub, until };
  }

  it('catches up from the table in pages, then takes local changes from the publication alone', async () => {
    const start = await feed.startingPoint();
    const history = await write('t', 5);
    const r = reader('t', start);
    await r.until(5);
    expect(r.got.map((n) => n.id)).toEqual(history.map((n) => n.id));

    const reads = vi.spyOn(store.notifications, 'after');
    const live: NotificationRow[] = [];
    for (let i = 0; i < 10; i++) {
      const rows = await write(i % 3 === 0 ? 'u' : 't');
      live.push(...rows);
      feed.publish(rows);
    }
    const mine = live.filter((n) => n.tenant_id === 't');
    await r.until(5 + mine.length);
    expect(r.got.slice(5).map((n) => n.id)).toEqual(mine.map((n) => n.id));
    // Another tenant's rows were walked over, never handed out, and nothing was read back.
    expect(reads).not.toHaveBeenCalled();
    reads.mockRestore();
    r.sub.close();
  });

  it('reads the table when a seq is missing from the publications, and never repeats one', async () => {
    const r = reader('t', await feed.startingPoint());
    const reads = vi.spyOn(store.notifications, 'after');
    // Published out of order: the later one alone shows a gap below it.
    const [a] = await write('t');
    const [b] = await write('t');
    feed.publish([b!]);
    await r.until(2);
    expect(r.got.map((n) => n.id)).toEqual([a!.id, b!.id]);
    expect(reads).toHaveBeenCalled();
    feed.publish([a!]);

    // Written elsewhere and never published here (another instance): found through the next local one's gap.
    const [c] = await write('t');
    const [d] = await write('t');
    feed.publish([d!]);
    await r.until(4);
    expect(r.got.map((n) => n.id)).toEqual([a!.id, b!.id, c!.id, d!.id]);

    // A wake-up from another instance reads the table even with nothing published.
    const [e] = await write('t');
    feed.wake('t');
    await r.until(5);
    expect(r.got.map((n) => n.id)).toEqual([a!.id, b!.id, c!.id, d!.id, e!.id]);
    reads.mockRestore();
    r.sub.close();
  });

  it('keeps only recent publications in memory, by age and by count; a reader behind them reads the table', async () => {
    let now = 1_000_000;
    const aged = new EventFeed(store, eventHorizonFor(store.db, log), log, { fallbackPollMs: 0, pageSize: 50, windowSize: 3, windowMs: 30_000, now: () => now });
    try {
      const start = await aged.startingPoint();
      const first = await write('t', 2);
      aged.publish(first);
      expect(aged.windowLength).toBe(2);
      now += 31_000;
      const second = await write('t', 1);
      aged.publish(second);
      // The two older than 30 s went; only the new one is held.
      expect(aged.windowLength).toBe(1);
      const more = await write('t', 4);
      aged.publish(more);
      expect(aged.windowLength).toBe(3);

      // A stream from before all of them still gets every one, once, in order: from the table.
      const reads = vi.spyOn(store.notifications, 'after');
      const got: NotificationRow[] = [];
      const sub = aged.subscribe('t', start, { deliver: async (rows) => void got.push(...rows), end: () => undefined });
      await eventually(async () => (got.length >= 7 ? true : undefined), 10_000, 5);
      expect(got.map((n) => n.id)).toEqual([...first, ...second, ...more].map((n) => n.id));
      expect(reads).toHaveBeenCalled();
      reads.mockRestore();
      sub.close();
    } finally {
      aged.stop();
    }
  });
});
