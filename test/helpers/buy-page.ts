/**
 * A live buy worth looking at, for the buy page's browser test and the README's
 * screenshot (scripts/media-buy-screenshot.ts): a sandbox seller with its clock
 * stopped, an orchestrator in this process, and a buy whose periods are reported
 * one by one by the seller's hooks (so the test decides when a report arrives).
 * No vitest here: the screenshot script uses it too.
 */
import type { Page } from 'playwright-core';
import { buyOf, buyWhen, startLiveBuyStack, type LiveBuyStack } from './live-buys.js';

const HOUR = 3_600_000;

/** An 8-hour hourly flight starting now: by default two packages of the linear product (10,000 in all). */
export function eightHourRequest(products: Array<[string, number]> = [['sandbox_instant', 6000], ['sandbox_instant', 4000]]): Record<string, unknown> {
  return {
    account: { account_id: 'acc_live' },
    brand: { domain: 'brand.example' },
    start_time: 'asap',
    end_time: new Date(Date.now() + 8 * HOUR).toISOString(),
    packages: products.map(([product_id, budget]) => ({ product_id, pricing_option_id: 'cpm_usd_fixed', budget })),
  };
}

export async function startBuyPageStack(): Promise<LiveBuyStack> {
  return startLiveBuyStack({ seller: { flightPeriods: 12 } });
}

/** Buys through the API (hourly reports); the buy as GET /v1/media-buys/:id shows it. */
export async function buyForPage(stack: LiveBuyStack, products?: Array<[string, number]>): Promise<any> {
  const { orch, agentId } = stack;
  const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: eightHourRequest(products), reporting: { frequency: 'hourly' } });
  if (created.status !== 202) throw new Error(`buy refused: ${created.status} ${JSON.stringify(created.body)}`);
  return buyOf(orch, created.body.id);
}

/** The seller reports the buy's next period; resolves once the buy has taken it (`received` reports in all). */
export async function reportNextPeriod(stack: LiveBuyStack, buy: { id: string; media_buy_id: string }, received: number): Promise<any> {
  const fire = await stack.seller.reporting.fireNow(buy.media_buy_id);
  if (!fire) throw new Error('the seller had nothing left to report');
  return buyWhen(stack.orch, buy.id, (b) => b.reports.received >= received);
}

/** The seller restates a period it reported (an `adjusted` fire); resolves once the buy has taken it. */
export async function restatePeriod(stack: LiveBuyStack, buy: { id: string; media_buy_id: string }, periodIndex: number, factor: number, received: number): Promise<any> {
  await stack.seller.reporting.sendAdjusted(buy.media_buy_id, { periodIndex, factor });
  return buyWhen(stack.orch, buy.id, (b) => b.reports.received >= received);
}

/** Signs a page in with a key through the form, as a person does. */
export async function signInAs(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${baseUrl}/operations`);
}
