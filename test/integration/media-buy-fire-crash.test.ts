/**
 * "Stored before acknowledged": a reporting fire whose application fails is
 * stored on its own and answered 503 (not acknowledged); a process that dies
 * then loses nothing: the next one, on the same database, applies the stored
 * fire at start, and the seller's retry of it is a 2xx duplicate, counted once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { tempSqlite } from '../helpers/databases.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { bareFire, buyLive, LIVE_BUY_ENV, postSigned, reportingChannel } from '../helpers/live-buys.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a reporting fire across a crash', () => {
  it('stored but not applied when the process dies: applied once by the next process; the retry is a duplicate', async () => {
    const seller: SandboxSeller = await startSandboxSeller({ reportClock: false, statusStepMs: 0, flightPeriods: 8 });
    cleanups.push(() => seller.close());
    const database = tempSqlite();
    cleanups.push(() => database.drop());
    const first: TestOrchestrator = await startOrchestrator({ database, keepDatabase: true, env: LIVE_BUY_ENV });
    let firstOpen = true;
    cleanups.push(async () => {
      if (firstOpen) await first.close();
    });
    const agentId = await first.registerAgent({ url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
    const buy = await buyLive(first, agentId);
    const channel = await reportingChannel(first, buy.id);

    // Every application fails in this process (as if it died right after storing the fire).
    (first.app.reportIngest as unknown as { deps: { beforeApply?: () => void } }).deps.beforeApply = () => {
      throw new Error('the process is going down');
    };
    const body = JSON.stringify(bareFire(buy.media_buy_id, { sequence_number: 1 }));
    const answer = await postSigned(channel.url, channel.secret, body);
    expect(answer.status).toBe(503);
    expect(answer.body.error.code).toBe('webhook_apply_failed');
    const stored = await first.app.store.db.kysely.selectFrom('reporting_fires').selectAll().execute();
    expect(stored.map((f) => [f.state, f.buy_id])).toEqual([['received', buy.id]]);
    expect((await first.app.store.mediaBuys.get(buy.id))!.reports_received).toBe(0);
    // The seller's retry meanwhile is told to wait: still in flight, not taken.
    expect((await postSigned(channel.url, channel.secret, body)).status).toBe(503);
    await first.app.close();
    firstOpen = false;

    const second = await startOrchestrator({ database, keepDatabase: true, env: LIVE_BUY_ENV });
    cleanups.push(() => second.app.close());
    // Same tenant (the helper names it), a key of this process.
    const after = (await second.api('GET', `/v1/media-buys/${buy.id}`)).body;
    expect(after.reports.received).toBe(1);
    expect(after.delivery.spend).toBe(10);
    const again = await postSigned(`${second.url}/webhooks/adcp/reporting/${channel.url.split('/').pop()}`, channel.secret, body);
    expect(again).toMatchObject({ status: 200, body: { status: 'duplicate' } });
    expect((await second.app.store.mediaBuys.get(buy.id))!.reports_received).toBe(1);
    expect((await second.app.store.reports.forBuy(buy.id)).length).toBe(1);
  });
});
