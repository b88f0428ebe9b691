/** Job leases on SQLite and (with TEST_DATABASE_URL) PostgreSQL: one holder at a time, taken over only once expired. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';

describe.each(dialects)('job leases on $name', ({ make }) => {
  let database: TestDatabase;
  let a: Store;
  let b: Store;

  beforeAll(async () => {
    database = await make();
    // Two stores on one database stand for two instances.
    a = await openStore(database.url);
    b = await openStore(database.url);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  it('gives a lease to one owner; others are refused until it expires', async () => {
    const now = 1_000_000;
    expect(await a.jobLeases.claim('job-1', 'A', now, now + 1000)).toBe(true);
    expect(await b.jobLeases.claim('job-1', 'B', now + 10, now + 1010)).toBe(false);
    expect(await b.jobLeases.claim('job-1', 'B', now + 999, now + 2000)).toBe(false);
    expect((await a.jobLeases.get('job-1'))?.owner).toBe('A');
    // Expired: B takes over, and A cannot extend what is no longer its.
    expect(await b.jobLeases.claim('job-1', 'B', now + 1000, now + 3000)).toBe(true);
    expect(await a.jobLeases.extend('job-1', 'A', now + 9000)).toBe(false);
    expect(await a.jobLeases.get('job-1')).toEqual({ owner: 'B', lease_until: now + 3000 });
  });

  it('lets the holder claim again and extend; release frees it at once', async () => {
    const now = 2_000_000;
    expect(await a.jobLeases.claim('job-2', 'A', now, now + 1000)).toBe(true);
    expect(await a.jobLeases.claim('job-2', 'A', now + 1, now + 5000)).toBe(true);
    expect(await a.jobLeases.extend('job-2', 'A', now + 6000)).toBe(true);
    expect(await b.jobLeases.claim('job-2', 'B', now + 5500, now + 7000)).toBe(false);
    await b.jobLeases.release('job-2', 'B'); // not B's: no effect
    expect((await a.jobLeases.get('job-2'))?.owner).toBe('A');
    await a.jobLeases.release('job-2', 'A');
    expect(await b.jobLeases.claim('job-2', 'B', now + 5500, now + 7000)).toBe(true);
  });

  it('under concurrent claims exactly one instance wins', async () => {
    const now = 3_000_000;
    for (let round = 0; round < 10; round++) {
      const name = `race-${round}`;
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).jobLeases.claim(name, `owner-${i}`, now, now + 60_000)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    }
  });
});
