/**
 * A buy its seller no longer knows (a restarted seller forgot it): its status read
 * lists no row for it, or says MEDIA_BUY_NOT_FOUND. The buy is marked unreadable
 * once (one event, one media_buy.unreadable, `unreadable` in its JSON, a banner on
 * its page), asked again with backoff rather than at every interval, and recovers
 * by itself when the seller lists it again (one event, one media_buy.readable).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { DashboardClient } from '../helpers/dashboard-client.js';
import { startForgetfulSeller, type ForgetfulSeller, type Forgetting } from '../helpers/forgetful-seller.js';
import { buyLive, buyNotifications, buyWhen, LIVE_BUY_ENV } from '../helpers/live-buys.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';

/** Status reads every 200 ms: the old code wrote an event at each one, for ever. */
const INTERVAL_MS = 200;

let seller: SandboxSeller | undefined;
let proxy: ForgetfulSeller | undefined;
let orch: TestOrchestrator | undefined;
afterEach(async () => {
  await orch?.close();
  await proxy?.close();
  await seller?.close();
  orch = proxy = seller = undefined;
});

async function start(): Promise<{ orch: TestOrchestrator; proxy: ForgetfulSeller; agentId: string }> {
  seller = await startSandboxSeller({ reportClock: false, statusStepMs: 0, flightPeriods: 8 });
  proxy = await startForgetfulSeller(seller.url);
  orch = await startOrchestrator({ env: { ...LIVE_BUY_ENV, ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: String(INTERVAL_MS) } });
  const agentId = await orch.registerAgent({ url: `${proxy.origin}${new URL(seller.url).pathname}`, webhook_signing: { jwks_uri: seller.jwksUrl } });
  return { orch, proxy, agentId };
}

const eventsOf = (buy: any, kind: string) => buy.events.filter((e: any) => e.kind === kind);

describe('a buy its seller no longer knows', () => {
  it.each<[Forgetting, RegExp]>([
    ['no_row', /did not list this buy/],
    ['not_found', /MEDIA_BUY_NOT_FOUND/],
  ])('(%s) is recorded and told once, read with backoff, shown, and recovers by itself', async (how, reason) => {
    const { orch, proxy, agentId } = await start();
    const buy = await buyLive(orch, agentId);
    const id = buy.media_buy_id;
    // The seller knows it: its status is read at the interval.
    await proxy.waitForStatusReads(id, 2);

    proxy.forget(id, how);
    const forgottenAt = proxy.statusReads(id).length;
    const unreadable = await buyWhen(orch, buy.id, (b) => b.unreadable !== null);
    expect(unreadable.unreadable).toEqual({ since: expect.any(String), reason: expect.stringMatching(reason) });
    // Still what the seller last said of it: the page says so beside it.
    expect(unreadable.status).toBe(buy.status);

    // Asked again, further and further apart: past the normal interval, not at it.
    await proxy.waitForStatusReads(id, forgottenAt + 5);
    const reads = proxy.statusReads(id).slice(forgottenAt);
    const gaps = reads.slice(1).map((at, i) => at - reads[i]!);
    expect(gaps.at(-1)!).toBeGreaterThan(1.5 * INTERVAL_MS);
    expect(gaps.at(-1)!).toBeGreaterThan(gaps[0]!);
    const during = (await orch.api('GET', `/v1/media-buys/${buy.id}`)).body;
    expect(eventsOf(during, 'status_unreadable')).toHaveLength(1);
    expect(await buyNotifications(orch, buy.id, 'media_buy.unreadable')).toHaveLength(1);
    expect(during.unreadable).toEqual(unreadable.unreadable);

    // Its page says so, first.
    const dashboard = new DashboardClient(orch.url);
    await dashboard.signIn(await orch.app.store.tenants.createApiKey(orch.tenantId, { name: `viewer-${randomUUID().slice(0, 6)}`, role: 'viewer' }));
    const page = (await dashboard.get(`/media-buys/${buy.id}`)).text;
    expect(page).toContain('The seller no longer answers for this buy');
    expect(page).toContain(`data-unreadable-since="${unreadable.unreadable.since}"`);

    // The seller knows it again: one event, one notification, and its status read at the interval again.
    proxy.remember(id);
    const back = await buyWhen(orch, buy.id, (b) => b.unreadable === null);
    expect(eventsOf(back, 'status_readable')).toHaveLength(1);
    expect(eventsOf(back, 'status_readable')[0].detail).toMatchObject({ unreadable_since: unreadable.unreadable.since });
    expect(await buyNotifications(orch, buy.id, 'media_buy.readable')).toHaveLength(1);
    const recoveredAt = proxy.statusReads(id).length;
    await proxy.waitForStatusReads(id, recoveredAt + 2);
    const after = (await orch.api('GET', `/v1/media-buys/${buy.id}`)).body;
    expect(eventsOf(after, 'status_unreadable')).toHaveLength(1);
    expect(eventsOf(after, 'status_readable')).toHaveLength(1);
    expect(await buyNotifications(orch, buy.id, 'media_buy.unreadable')).toHaveLength(1);
    expect((await dashboard.get(`/media-buys/${buy.id}`)).text).not.toContain('The seller no longer answers for this buy');
  });
});
