/**
 * Reporting fires that arrive together are stored and applied together on SQLite
 * (src/engine/media-buys/report-batch.ts): one grouped transaction, one statement per
 * table. Fired over real HTTP (HMAC-signed, as a seller sends them) at live buys made by
 * a real sandbox seller; each fire must end exactly as it would alone: stored once,
 * every buy holding exactly the sum of its fires, duplicates and payload mismatches
 * told apart, a row naming an unknown buy recorded unmatched, a replayed nonce refused,
 * each buy's fires taken in the order they came. The last two go through the engine's
 * entry (as the receiver calls it once authenticated), to queue fires in one turn for
 * certain and to hand it RFC 9421 nonces without a signing seller. On PostgreSQL (TEST_DATABASE_URL) each fire keeps its own transaction: the same
 * answers and figures, no batch.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PendingNonce } from '../../src/engine/webhook-ingest.js';
import { webhookFingerprint } from '../../src/webhooks/fingerprint.js';
import { dialects } from '../helpers/databases.js';
import { bareFire, buyLive, postSigned, reportingChannel, startLiveBuyStack, type LiveBuyStack } from '../helpers/live-buys.js';

const MINUTE = 60_000;

for (const dialect of dialects) {
  describe(`reporting fires applied together (${dialect.name})`, () => {
    let stack: LiveBuyStack;
    let base: number;
    beforeAll(async () => {
      stack = await startLiveBuyStack({ database: await dialect.make() });
      base = Date.now() - 60 * MINUTE;
    }, 60_000);
    afterAll(async () => stack?.close());

    const orch = () => stack.orch;
    const db = () => orch().app.store.db.kysely;
    /** Live buys with their reporting URL and secret. */
    const newBuys = async (n: number) =>
      Promise.all(
        Array.from({ length: n }, async () => {
          const buy = await buyLive(orch(), stack.agentId);
          return { id: buy.id as string, mediaBuyId: buy.media_buy_id as string, ...(await reportingChannel(orch(), buy.id)) };
        }),
      );
    type Buy = Awaited<ReturnType<typeof newBuys>>[number];
    /** Period `k` (one minute) of a buy, `spend` reported, keyed. */
    const fire = (buy: Buy, k: number, spend: number, key = `fire-${buy.id}-${k}`, mediaBuyId = buy.mediaBuyId) =>
      JSON.stringify(
        bareFire(
          mediaBuyId,
          { idempotency_key: key, sequence_number: k, reporting_period: { start: new Date(base + k * MINUTE).toISOString(), end: new Date(base + (k + 1) * MINUTE).toISOString() } },
          { totals: { impressions: Math.round(spend * 100), spend } },
        ),
      );
    const post = (buy: Buy, body: string) => postSigned(buy.url, buy.secret, body);
    const stored = async (id: string) => (await orch().app.store.mediaBuys.get(id))!;
    /** How many fires went through a batch: the rows of every multi-row fire INSERT. */
    const batchedFires = () => {
      const spy = vi.spyOn(orch().app.store.fires, 'recordAppliedManyIn');
      return {
        count: () => spy.mock.calls.reduce((n, [, rows]) => n + rows.length, 0),
        done: () => spy.mockRestore(),
      };
    };

    it('many fires at once to different buys: each stored once, every buy holding exactly the sum of its fires', async () => {
      const buys = await newBuys(10);
      const batched = batchedFires();
      const spends = buys.map((_, j) => [1, 2, 3].map((k) => Math.round((10 + j + k * 0.37) * 100) / 100));
      for (const k of [1, 2, 3]) {
        // Every buy's k-th period at once; a buy's periods in order.
        const answers = await Promise.all(buys.map((b, j) => post(b, fire(b, k, spends[j]![k - 1]!))));
        for (const a of answers) expect(a).toMatchObject({ status: 200, body: { status: 'accepted', applied: 1, unmatched: 0 } });
      }
      for (const [j, b] of buys.entries()) {
        const row = await stored(b.id);
        const sum = Math.round(spends[j]!.reduce((x, y) => x + y, 0) * 100) / 100;
        expect({ spend: row.spend, received: row.reports_received, sequence: row.last_sequence }).toEqual({ spend: sum, received: 3, sequence: 3 });
        expect((await orch().app.store.reports.forBuy(b.id)).map((r) => r.spend)).toEqual(spends[j]);
        const fires = await db().selectFrom('reporting_fires').select(['state', 'outcome']).where('buy_id', '=', b.id).execute();
        expect(fires).toEqual([1, 2, 3].map(() => ({ state: 'applied', outcome: 'applied' })));
        const events = await db().selectFrom('media_buy_events').select('kind').where('buy_id', '=', b.id).where('kind', '=', 'report_received').execute();
        expect(events).toHaveLength(3);
      }
      // SQLite: concurrent fires share group commits, and there many went as one batch. PostgreSQL: never.
      if (dialect.name === 'sqlite') expect(batched.count()).toBeGreaterThan(1);
      else expect(batched.count()).toBe(0);
      batched.done();
    });

    it('a duplicate inside a batch and after it is answered duplicate and counted once; the same key with another payload is refused', async () => {
      const buys = await newBuys(4);
      const twice = fire(buys[0]!, 1, 7);
      const answers = await Promise.all([post(buys[0]!, twice), post(buys[0]!, twice), ...buys.slice(1).map((b) => post(b, fire(b, 1, 5)))]);
      expect(answers.slice(0, 2).map((a) => a.body.status).sort()).toEqual(['accepted', 'duplicate']);
      for (const a of answers) expect(a.status).toBe(200);
      // After: the same body again, beside fresh fires of the others.
      const later = await Promise.all([post(buys[0]!, twice), ...buys.slice(1).map((b) => post(b, fire(b, 2, 5)))]);
      expect(later[0]).toMatchObject({ status: 200, body: { status: 'duplicate' } });
      for (const a of later.slice(1)) expect(a).toMatchObject({ status: 200, body: { status: 'accepted', applied: 1 } });
      const mismatch = await post(buys[0]!, fire(buys[0]!, 1, 8, `fire-${buys[0]!.id}-1`));
      expect(mismatch.status).toBe(409);
      expect(await stored(buys[0]!.id)).toMatchObject({ spend: 7, reports_received: 1 });
      expect(await db().selectFrom('reporting_fires').select('id').where('buy_id', '=', buys[0]!.id).execute()).toHaveLength(1);
      for (const b of buys.slice(1)) expect(await stored(b.id)).toMatchObject({ spend: 10, reports_received: 2 });
    });

    it('a fire whose row names an unknown buy is recorded unmatched on the buy it came to, beside fires applied together', async () => {
      const buys = await newBuys(4);
      const answers = await Promise.all([post(buys[0]!, fire(buys[0]!, 1, 9, 'unknown-1', 'mb_nobody')), ...buys.slice(1).map((b) => post(b, fire(b, 1, 3)))]);
      expect(answers[0]).toMatchObject({ status: 200, body: { status: 'accepted', applied: 0, unmatched: 1 } });
      for (const a of answers.slice(1)) expect(a).toMatchObject({ status: 200, body: { status: 'accepted', applied: 1 } });
      expect(await stored(buys[0]!.id)).toMatchObject({ spend: 0, reports_received: 0 });
      const unmatched = await db().selectFrom('media_buy_events').select('detail').where('buy_id', '=', buys[0]!.id).where('kind', '=', 'report_unmatched').execute();
      expect(unmatched.map((e) => JSON.parse(e.detail!).media_buy_id)).toEqual(['mb_nobody']);
      for (const b of buys.slice(1)) expect(await stored(b.id)).toMatchObject({ spend: 3, reports_received: 1 });
    });

    it('a buy takes its fires in the order they came, when an earlier one is left to its own job (several rows)', async () => {
      const [a, b, c] = await newBuys(3);
      const ingest = orch().app.reportIngest;
      const prepare = async (to: Buy, body: string) => {
        const read = ingest.read(JSON.parse(body));
        if (!read.ok) throw new Error(read.message);
        return { target: (await ingest.target(to.url.split('/').pop()!))!, reading: read.reading, fingerprint: webhookFingerprint(JSON.parse(body)), text: body };
      };
      // Period 1 of a and b in one body (the one-fire path), then period 2 of a and period 1 of c, all queued in one turn.
      const both = JSON.parse(fire(a!, 1, 1, 'both-1'));
      both.media_buy_deliveries.push({ ...both.media_buy_deliveries[0], media_buy_id: b!.mediaBuyId });
      const fires = await Promise.all([prepare(a!, JSON.stringify(both)), prepare(a!, fire(a!, 2, 2)), prepare(c!, fire(c!, 1, 3)), prepare(c!, fire(c!, 2, 3))]);
      const outcomes = await Promise.all(fires.map((f) => ingest.ingest(f)));
      expect(outcomes).toEqual([
        { kind: 'applied', applied: 2, superseded: 0, duplicates: 0, unmatched: 0 },
        ...[1, 2, 3].map(() => ({ kind: 'applied', applied: 1, superseded: 0, duplicates: 0, unmatched: 0 })),
      ]);
      const sequences = async (id: string) =>
        (await db().selectFrom('media_buy_events').select('detail').where('buy_id', '=', id).where('kind', '=', 'report_received').orderBy('id').execute()).map((e) => JSON.parse(e.detail!).sequence_number);
      expect(await stored(a!.id)).toMatchObject({ spend: 3, reports_received: 2 });
      expect(await stored(b!.id)).toMatchObject({ spend: 1, reports_received: 1 });
      // SQLite runs the jobs of one group in queue order; PostgreSQL runs concurrent fires in transactions of their own, in no promised order.
      if (dialect.name === 'sqlite') {
        expect(await sequences(a!.id)).toEqual([1, 2]);
        expect(await sequences(c!.id)).toEqual([1, 2]);
        expect(await stored(a!.id)).toMatchObject({ last_sequence: 2 });
      }
    });

    it('RFC 9421 nonces: recorded with the batch; a replayed one is refused alone and nothing of its fire is written', async () => {
      // Through the engine's entry, as the receiver calls it once a signature verified (the nonce still to record).
      const buys = await newBuys(4);
      const keyid = `key-${dialect.name}-${Date.now()}`;
      const nonce = (n: string): PendingNonce => ({ keyid, nonce: n, expiresAtMs: Date.now() + 300_000, nowMs: Date.now() });
      const ingest = orch().app.reportIngest;
      const prepare = async (b: Buy, body: string, n: PendingNonce) => {
        const target = (await ingest.target(b.url.split('/').pop()!))!;
        const read = ingest.read(JSON.parse(body));
        if (!read.ok) throw new Error(read.message);
        return { target, reading: read.reading, fingerprint: webhookFingerprint(JSON.parse(body)), text: body, nonce: n };
      };
      const first = await Promise.all(buys.map((b, j) => prepare(b, fire(b, 1, 2), nonce(`n-${j}`))));
      expect((await Promise.all(first.map((f) => ingest.ingest(f)))).map((o) => o.kind)).toEqual(['applied', 'applied', 'applied', 'applied']);
      // n-0 again (a replay), beside fresh ones, all queued in one turn.
      const second = await Promise.all(buys.map((b, j) => prepare(b, fire(b, 2, 2), nonce(j === 0 ? 'n-0' : `m-${j}`))));
      const outcomes = await Promise.all(second.map((f) => ingest.ingest(f)));
      expect(outcomes[0]).toEqual({ kind: 'refused', reason: 'webhook_signature_replayed' });
      expect(outcomes.slice(1).map((o) => o.kind)).toEqual(['applied', 'applied', 'applied']);
      expect(await stored(buys[0]!.id)).toMatchObject({ spend: 2, reports_received: 1 });
      expect(await db().selectFrom('reporting_fires').select('id').where('buy_id', '=', buys[0]!.id).execute()).toHaveLength(1);
      for (const b of buys.slice(1)) expect(await stored(b.id)).toMatchObject({ spend: 4, reports_received: 2 });
      const nonces = await db().selectFrom('webhook_nonces').select('nonce').where('keyid', '=', keyid).orderBy('nonce').execute();
      expect(nonces.map((r) => r.nonce)).toEqual(['m-1', 'm-2', 'm-3', 'n-0', 'n-1', 'n-2', 'n-3']);
    });
  });
}
