/**
 * An on-plan buy whose first hour is reported late: a `delayed` report (partial
 * figures, the row `reporting_delayed`), then the whole figures for the same period.
 * Judged on the partial figures it read as under-pacing, and people were told of a
 * crossing that never happened; it is judged on the whole figures only.
 */
import { afterEach, expect, it } from 'vitest';
import { bareFire, buyLive, buyNotifications, buyWhen, metric, postSigned, reportingChannel, sellerCalls, settledBuy, startLiveBuyStack, type LiveBuyStack } from '../helpers/live-buys.js';
import { eventually } from '../helpers/orchestrator.js';

const HOUR = 3_600_000;

let stack: LiveBuyStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

it('a delayed report of partial figures raises no pacing alert on an on-plan buy; the whole figures judge it on track', async () => {
  stack = await startLiveBuyStack();
  const { orch, seller, agentId } = stack;
  // 4,000 over four hours: the plan by the end of the first hour is 1,000.
  const buy = await buyLive(orch, agentId);
  const channel = await reportingChannel(orch, buy.id);
  const start = Date.parse(buy.flight.start);
  const firstHour = { start: new Date(start).toISOString(), end: new Date(start + HOUR).toISOString() };
  const row = (spend: number, status: string) => ({
    status,
    totals: { impressions: spend * 100, spend },
    by_package: buy.packages.map((p: any) => ({ package_id: p.package_id, spend, impressions: spend * 100 })),
  });
  const statusReads = sellerCalls(seller, 'get_media_buys', buy.media_buy_id).length;

  // The seller's data for the hour is late: a tenth of it so far.
  const delayed = bareFire(buy.media_buy_id, { notification_type: 'delayed', sequence_number: 1, reporting_period: firstHour, partial_data: true, unavailable_count: 1 }, row(100, 'reporting_delayed'));
  expect((await postSigned(channel.url, channel.secret, JSON.stringify(delayed))).status).toBe(200);
  await buyWhen(orch, buy.id, (b) => b.reports.received === 1);
  // The status read that follows a report judges nothing new either.
  await eventually(async () => (sellerCalls(seller, 'get_media_buys', buy.media_buy_id).length > statusReads ? true : undefined));
  const held = await settledBuy(orch, buy.id);
  expect(held.delivery.spend).toBe(100);
  expect(held.delivery.pacing.state).toBe('not_started');

  // The whole hour: on plan.
  const whole = bareFire(buy.media_buy_id, { notification_type: 'scheduled', sequence_number: 2, reporting_period: firstHour }, row(1000, 'active'));
  expect((await postSigned(channel.url, channel.secret, JSON.stringify(whole))).status).toBe(200);
  const judged = await buyWhen(orch, buy.id, (b) => b.reports.received === 2);
  expect(judged.delivery.spend).toBe(1000);
  expect(judged.delivery.pacing.state).toBe('on_track');
  expect(judged.events.filter((e: any) => e.kind === 'pacing_alert')).toEqual([]);
  expect(await buyNotifications(orch, buy.id, 'media_buy.underpacing')).toEqual([]);
  expect(await metric(orch, 'pacing_alerts_total')).toBe(0);
});
