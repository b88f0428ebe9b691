/**
 * The live buys' loop looks before it claims: a wake-up with nothing due reads the
 * two due times and claims nothing (a claim is a write transaction), and work that
 * is due, or whose due time cannot be read, is claimed. Wake-ups that come together
 * are answered by one look.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { BuyWorker, WAKE_COALESCE_MS } from '../../../src/engine/media-buys/buy-worker.js';
import type { MediaBuyRow, Store } from '../../../src/store/index.js';

interface FakeTables {
  buyDue: number | null | Error;
  outcomeDue: number | null;
  buys: MediaBuyRow[];
}

function fakeStore(t: FakeTables) {
  const calls = { buyClaims: 0, outcomeClaims: 0, reads: 0 };
  const store = {
    mediaBuys: {
      nextDueAt: async () => {
        calls.reads++;
        if (t.buyDue instanceof Error) throw t.buyDue;
        return t.buyDue;
      },
      claimDue: async () => {
        calls.buyClaims++;
        if (t.buyDue instanceof Error) throw t.buyDue;
        const taken = t.buys;
        t.buys = [];
        t.buyDue = null;
        return taken;
      },
    },
    deliveryOutcomes: {
      nextDueAt: async () => t.outcomeDue,
      claimDue: async () => {
        calls.outcomeClaims++;
        return [];
      },
    },
  } as unknown as Store;
  return { store, calls };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let worker: BuyWorker | undefined;
afterEach(async () => {
  await worker?.stop(1_000);
  worker = undefined;
});

function start(store: Store, ran: string[]): BuyWorker {
  const w = new BuyWorker(
    store,
    async (b) => void ran.push(b.id),
    async () => undefined,
    { now: () => Date.now(), random: () => 0.5 },
    pino({ level: 'silent' }),
    { instanceId: 'i1', leaseMs: 30_000, concurrency: 4, tickMs: 60_000 },
  );
  w.start();
  return w;
}

describe('BuyWorker', () => {
  it('reads and does not claim when woken with nothing due', async () => {
    const t: FakeTables = { buyDue: Date.now() + 3_600_000, outcomeDue: null, buys: [] };
    const { store, calls } = fakeStore(t);
    worker = start(store, []);
    await expect.poll(() => calls.reads, { timeout: 2_000 }).toBeGreaterThan(0);
    const before = calls.reads;
    for (let i = 0; i < 3; i++) {
      worker.wake();
      await sleep(WAKE_COALESCE_MS * 3);
    }
    // Each wake-up, apart from the others, is answered by a look (the tick is a minute).
    expect(calls.reads - before).toBeGreaterThanOrEqual(3);
    expect(calls.buyClaims).toBe(0);
    expect(calls.outcomeClaims).toBe(0);
  });

  it('answers a burst of wake-ups with one look, not one each', async () => {
    const t: FakeTables = { buyDue: Date.now() + 3_600_000, outcomeDue: null, buys: [] };
    const { store, calls } = fakeStore(t);
    worker = start(store, []);
    await expect.poll(() => calls.reads, { timeout: 2_000 }).toBeGreaterThan(0);
    await sleep(WAKE_COALESCE_MS * 2);
    const before = calls.reads;
    const burstStart = performance.now();
    for (let i = 0; i < 50; i++) worker.wake();
    await expect.poll(() => calls.reads, { timeout: 2_000 }).toBeGreaterThan(before);
    await sleep(WAKE_COALESCE_MS * 3);
    expect(calls.reads - before).toBe(1);
    // Answered within the coalescing window, not at the tick.
    expect(performance.now() - burstStart).toBeLessThan(1_000);
  });

  it('stops at once, even while a wake-up is being coalesced', async () => {
    const t: FakeTables = { buyDue: Date.now() + 3_600_000, outcomeDue: null, buys: [] };
    const { store, calls } = fakeStore(t);
    const w = start(store, []);
    await expect.poll(() => calls.reads, { timeout: 2_000 }).toBeGreaterThan(0);
    w.wake();
    const t0 = performance.now();
    await w.stop(1_000);
    expect(performance.now() - t0).toBeLessThan(WAKE_COALESCE_MS);
  });

  it('claims a buy once it is due, and only the table whose work is due', async () => {
    const t: FakeTables = { buyDue: null, outcomeDue: null, buys: [] };
    const { store, calls } = fakeStore(t);
    const ran: string[] = [];
    worker = start(store, ran);
    await sleep(10);
    t.buys = [{ id: 'mb_1' } as MediaBuyRow];
    t.buyDue = Date.now() - 1;
    worker.wake();
    await expect.poll(() => ran, { timeout: 2_000 }).toEqual(['mb_1']);
    expect(calls.buyClaims).toBe(1);
    expect(calls.outcomeClaims).toBe(0);
  });

  it('claims when a due time cannot be read, so the claim meets the error', async () => {
    const t: FakeTables = { buyDue: new Error('database away'), outcomeDue: null, buys: [] };
    const { store, calls } = fakeStore(t);
    worker = start(store, []);
    await expect.poll(() => calls.buyClaims, { timeout: 2_000 }).toBeGreaterThan(0);
  });
});

describe('BuyWorker wake-ups while awake', () => {
  it('does not lose a wake-up that comes while it reads the due times', async () => {
    const t: FakeTables = { buyDue: null, outcomeDue: null, buys: [] };
    const { store } = fakeStore(t);
    const ran: string[] = [];
    // The read answers "nothing due", and the buy is made due (and announced) while that answer is on its way.
    const read = store.mediaBuys.nextDueAt.bind(store.mediaBuys);
    let raced = false;
    (store.mediaBuys as { nextDueAt: (now: number) => Promise<number | null> }).nextDueAt = async (now) => {
      const answer = await read(now);
      if (!raced && worker) {
        raced = true;
        t.buys = [{ id: 'mb_late' } as MediaBuyRow];
        t.buyDue = Date.now() - 1;
        worker.wake();
      }
      return answer;
    };
    worker = start(store, ran);
    // The tick is a minute: only the kept wake-up can run it this soon.
    await expect.poll(() => ran, { timeout: 2_000 }).toEqual(['mb_late']);
  });
});
