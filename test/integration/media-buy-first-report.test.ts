/**
 * A seller that never sends a reporting fire: its first report, not come by its
 * time + ADCP_ORCH_REPORT_GRACE_MS, is a missing report like any later one: one
 * media_buy.report_missing, the metric counted once, then the delivery read from
 * the seller. Its time is a period after the flight's start, the flight's end if
 * sooner, and the buy's end if the seller ends it sooner still.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { waitForStatus } from '../helpers/orchestrator.js';
import { buyNotifications, buyOf, buyWhen, liveBuyRequest, metric, sellerCalls, startLiveBuyStack, type LiveBuyStack } from '../helpers/live-buys.js';

const GRACE_MS = 300;

let stack: LiveBuyStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function silentBuy(request: Record<string, unknown> = {}): Promise<any> {
  stack = await startLiveBuyStack({ env: { ADCP_ORCH_REPORT_GRACE_MS: String(GRACE_MS), ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: '200' } });
  const { orch, agentId } = stack;
  const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: { ...liveBuyRequest(['sandbox_instant']), ...request }, reporting: { frequency: 'hourly' } });
  expect(created.status).toBe(202);
  await waitForStatus(orch, created.body.id, ['completed']);
  const buy = await buyOf(orch, created.body.id);
  stack.seller.reporting.goSilent(buy.media_buy_id);
  return buy;
}

/** One report_missing (overdue), counted once, and the delivery read from the seller after it. */
async function expectOneMissingThenThePoll(buy: any, done: any): Promise<void> {
  const { orch, seller } = stack!;
  expect(done.reports).toMatchObject({ received: 0, missing: 1 });
  const missing = await buyNotifications(orch, buy.id, 'media_buy.report_missing');
  expect(missing).toHaveLength(1);
  expect(missing[0].data.event.detail).toMatchObject({ reason: 'overdue', grace_ms: GRACE_MS });
  expect(await metric(orch, 'delivery_reports_missing_total')).toBe(1);
  const kinds = done.events.map((e: any) => `${e.source}:${e.kind}`);
  expect(kinds.indexOf('timer:report_missing')).toBeGreaterThan(-1);
  expect(kinds.indexOf('poll:report_received')).toBeGreaterThan(kinds.indexOf('timer:report_missing'));
  expect(sellerCalls(seller, 'get_media_buy_delivery', buy.media_buy_id).length).toBeGreaterThanOrEqual(1);
  expect(done.delivery.source).toBe('poll');
}

describe('the first report of a seller that never fires', () => {
  it('is missing once the seller ends the buy without it: one report_missing, counted, then the poll', async () => {
    const buy = await silentBuy();
    // The seller delivers its whole flight and completes the buy, reporting none of it.
    const fires = await stack!.seller.reporting.runToEnd(buy.media_buy_id);
    expect(fires.every((f) => f.outcome === 'silenced')).toBe(true);
    const done = await buyWhen(stack!.orch, buy.id, (b) => b.ended_at !== null);
    expect(done.status).toBe('completed');
    await expectOneMissingThenThePoll(buy, done);
    const lifetime = stack!.seller.reporting.buy(buy.media_buy_id)!.delivered.reduce((n, d) => n + d.packages.reduce((m, p) => m + p.spend, 0), 0);
    expect(done.delivery.spend).toBeCloseTo(lifetime, 2);
  });

  it('is missing once a flight shorter than a period has ended without it', async () => {
    const end = Date.now() + 1_500;
    const buy = await silentBuy({ end_time: new Date(end).toISOString() });
    expect(Date.parse(buy.reports.next_expected_at)).toBe(Date.parse(buy.flight.end));
    const after = await buyWhen(stack!.orch, buy.id, (b) => b.delivery.source === 'poll');
    expect(Date.now()).toBeGreaterThanOrEqual(end + GRACE_MS);
    await expectOneMissingThenThePoll(buy, after);
  });
});
