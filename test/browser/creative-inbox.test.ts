/**
 * A rejected creative answered from the dashboard, in a browser against a real
 * `serve --sandbox` (its own sandbox seller reviews creatives in a fraction of a
 * second): the rejection waits in the inbox beside the other kinds with the
 * seller's reason; a person edits the prefilled creative and sends it; the
 * correction goes out as a child sync_creatives, the seller approves it, the buy
 * leaves pending_creatives, and the buy's page lists its creatives with their
 * reviews. Another rejection is dismissed from the operation's page.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { displayCreative } from '../helpers/creatives.js';
import { describeInBrowser, launchBrowser, screenshot, signIn, startSandboxServer, type SandboxServer } from '../helpers/browser.js';
import { eventually } from '../helpers/orchestrator.js';

describeInBrowser('a rejected creative answered from the dashboard', () => {
  let server: SandboxServer;
  let browser: Browser;
  let traderKey: string;
  let sellerUrl: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    server = await startSandboxServer({ SANDBOX_CREATIVE_REVIEW_MS: '300', ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: '300', ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: '500' });
    traderKey = await server.createKey('trader', 'approver');
    sellerUrl = (await server.api(server.adminKey, 'GET', `/v1/agents/${server.sellerId}`)).body.url;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
  });

  const pageAs = async (key: string): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    await signIn(page, server.serve.url, key);
    return page;
  };
  /** A live buy of the product, as GET /v1/media-buys/:id shows it. */
  const liveBuy = async (product: string) => {
    const created = await server.api(server.adminKey, 'POST', '/v1/media-buys', { agent_id: server.sellerId, request: mediaBuyRequest(product) });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    return eventually(async () => {
      const found = (await server.api(server.adminKey, 'GET', '/v1/media-buys?limit=100')).body.media_buys.find((b: any) => b.operation_id === created.body.id);
      return found ? (await server.api(server.adminKey, 'GET', `/v1/media-buys/${found.id}`)).body : undefined;
    }, 30_000);
  };
  const send = async (buy: any, creative: Record<string, unknown>) => {
    const res = await server.api(server.adminKey, 'POST', `/v1/media-buys/${buy.id}/creatives`, { creatives: [creative], assignments: [{ creative_id: creative.creative_id, package_id: buy.packages[0].package_id }] });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body as { id: string };
  };
  const item = (page: Page, id: string) => page.locator(`li.inbox-item[data-operation-id="${id}"]`);

  it('sends a corrected creative from the inbox; the seller approves it and the buy moves on', async () => {
    const buy = await liveBuy('sandbox_awaiting_creatives');
    expect(buy.status).toBe('pending_creatives');
    const page = await pageAs(traderKey);
    await page.goto(`${server.serve.url}/inbox`);
    await page.locator('[data-live-state][data-state="open"]').waitFor();
    const sync = await send(buy, displayCreative('cr_hero', 'Hero banner (reject me)', sellerUrl));

    // It arrives live, beside any other kind, with the seller's reason.
    const card = item(page, sync.id);
    await card.waitFor({ timeout: 30_000 });
    await expect(card.locator('.kind').textContent()).resolves.toBe('Creative rejected');
    await expect(card.locator('.rejected-creatives li[data-creative-id="cr_hero"] .reason').textContent()).resolves.toContain('landing page domain does not match');
    await expect(card.getByRole('button', { name: 'Dismiss the rejection' }).count()).resolves.toBe(1);
    await screenshot(page, 'inbox-creative-rejected');

    await card.getByText('Send a corrected creative…').click();
    const params = card.getByLabel(/^Corrected creatives/);
    const sent = JSON.parse(await params.inputValue());
    expect(sent.creatives).toEqual([displayCreative('cr_hero', 'Hero banner (reject me)', sellerUrl)]);
    sent.creatives[0].name = 'Hero banner, landing page fixed';
    await params.fill(JSON.stringify(sent));
    await card.getByLabel(/^Note with the corrections/).fill('landing page now on brand.example');
    await card.getByRole('button', { name: 'Send corrected creative' }).click();
    await page.waitForURL(/\/inbox\?notice=answered/);
    await expect(item(page, sync.id).count()).resolves.toBe(0);

    // The answer is recorded with the signed-in key's name; the correction is a child sync_creatives.
    const answered = (await server.api(server.adminKey, 'GET', `/v1/operations/${sync.id}`)).body;
    expect(answered).toMatchObject({ status: 'completed', needs_input: false });
    expect(answered.events.find((e: any) => e.kind === 'answered')).toMatchObject({ actor: 'trader', detail: { decision: 'respond', kind: 'creative_rejected' } });
    const child = (await server.api(server.adminKey, 'GET', `/v1/operations?type=sync_creatives`)).body.operations.find((o: any) => o.parent_id === sync.id);
    expect(child.request.creatives[0].name).toBe('Hero banner, landing page fixed');

    const moved = await eventually(async () => {
      const b = (await server.api(server.adminKey, 'GET', `/v1/media-buys/${buy.id}`)).body;
      return b.creatives[0]?.status === 'approved' && b.status !== 'pending_creatives' ? b : undefined;
    }, 30_000);
    expect(moved.creatives[0].sync.operation_id).toBe(child.id);

    // The buy's page lists its creatives with their reviews.
    await page.goto(`${server.serve.url}/media-buys/${buy.id}`);
    const row = page.locator('#buy-creatives tr[data-creative-id="cr_hero"]');
    await expect(row.locator('[data-creative-status]').getAttribute('data-creative-status')).resolves.toBe('approved');
    await expect(row.locator('td').first().textContent()).resolves.toContain('Hero banner, landing page fixed');
    await screenshot(page, 'buy-creatives');
  });

  it('dismisses a rejection from the operation page: it stays rejected, nothing is sent again', async () => {
    const buy = await liveBuy('sandbox_instant');
    const sync = await send(buy, displayCreative('cr_teaser', 'Teaser (reject)', sellerUrl));
    const page = await pageAs(traderKey);
    await page.goto(`${server.serve.url}/operations/${sync.id}`);
    const panel = page.locator('section.waiting');
    await panel.waitFor({ timeout: 30_000 });
    await expect(panel.locator('.rejected-creatives li[data-creative-id="cr_teaser"]').count()).resolves.toBe(1);
    await panel.getByLabel(/^Message/).fill('campaign dropped this teaser');
    await panel.getByRole('button', { name: 'Dismiss the rejection' }).click();
    await page.waitForURL(/\/operations\/.+\?notice=answered/);
    const after = (await server.api(server.adminKey, 'GET', `/v1/media-buys/${buy.id}`)).body.creatives[0];
    expect(after).toMatchObject({ status: 'rejected', inbox: 'answered', dismissed: { by: 'trader' } });
    const children = (await server.api(server.adminKey, 'GET', `/v1/operations?type=sync_creatives`)).body.operations.filter((o: any) => o.parent_id === sync.id);
    expect(children).toEqual([]);
  });
});
