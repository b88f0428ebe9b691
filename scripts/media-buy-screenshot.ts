/**
 * The README's pictures of the media buys pages (docs/images/media-buy.png,
 * docs/images/media-buys.png): a sandbox seller and an orchestrator in this
 * process, a few buys, one of them an 8-hour hourly flight with five periods
 * reported and one of them restated, photographed in headless chromium as an operator sees it.
 *
 *   npx tsx scripts/media-buy-screenshot.ts [--out docs/images]
 */
import { mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { buyForPage, reportNextPeriod, restatePeriod, signInAs, startBuyPageStack } from '../test/helpers/buy-page.js';

const { values } = parseArgs({ options: { out: { type: 'string', default: 'docs/images' } } });
const out = values.out!;
mkdirSync(out, { recursive: true });

const stack = await startBuyPageStack();
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true });
try {
  // Others first, so the list shows a few states: one under-pacing, one over-pacing, one just bought.
  const under = await buyForPage(stack, [['sandbox_underpacing', 8000]]);
  for (let i = 1; i <= 4; i++) await reportNextPeriod(stack, under, i);
  const over = await buyForPage(stack, [['sandbox_overpacing', 5000]]);
  for (let i = 1; i <= 3; i++) await reportNextPeriod(stack, over, i);
  await buyForPage(stack, [['sandbox_instant', 2500]]);
  const buy = await buyForPage(stack);
  for (let i = 1; i <= 5; i++) await reportNextPeriod(stack, buy, i);
  await restatePeriod(stack, buy, 2, 0.8, 6);
  const key = await stack.orch.app.store.tenants.createApiKey(stack.orch.tenantId, { name: 'trader', role: 'operator' });
  // Tall enough for the header, the chart, the packages and the newest reports; the events run on below.
  const page = await browser.newPage({ viewport: { width: 1280, height: 1500 }, deviceScaleFactor: 1 });
  await signInAs(page, stack.orch.url, key);
  await page.goto(`${stack.orch.url}/media-buys/${buy.id}`);
  await page.locator('[data-live-state][data-state="open"]').waitFor();
  await page.screenshot({ path: `${out}/media-buy.png` });
  await page.goto(`${stack.orch.url}/media-buys`);
  await page.locator('[data-live-state][data-state="open"]').waitFor();
  await page.setViewportSize({ width: 1280, height: 560 });
  await page.screenshot({ path: `${out}/media-buys.png` });
  process.stdout.write(`wrote ${out}/media-buy.png and ${out}/media-buys.png\n`);
} finally {
  await browser.close();
  await stack.close();
}
