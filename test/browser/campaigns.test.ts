/**
 * Governed campaigns in a real browser against a real `serve --sandbox` (its
 * sandbox governance agent and the seller that trusts it): the campaigns page
 * shows a campaign's budget planned vs committed and its buys by state, exactly
 * as GET /v1/campaigns/:id states them, live as the buys move; a campaign's page
 * lists its buys with links to their operations; a governed buy's page shows the
 * governance panel. Screenshots go to test-results/.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { plan } from '../helpers/governance.js';
import { governedRequest } from '../helpers/governed.js';
import { eventually } from '../helpers/orchestrator.js';
import { describeInBrowser, launchBrowser, screenshot, signIn, startSandboxServer, type SandboxServer } from '../helpers/browser.js';

const PLAN_ID = 'plan_browser_campaign';
const pkg = (product: string, budget: number, extra: Record<string, unknown> = {}) => [{ product_id: product, pricing_option_id: 'cpm_usd_fixed', budget, ...extra }];
const within = { end_time: '2030-06-30T00:00:00Z' };

describeInBrowser('campaigns in a browser', () => {
  let server: SandboxServer;
  let browser: Browser;
  let viewerKey: string;
  let governanceId: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    server = await startSandboxServer({ SANDBOX_SUBMITTED_DELAY_MS: '1500' });
    browser = await launchBrowser();
    viewerKey = await server.createKey('auditor', 'viewer');
    const agents = (await server.api(server.adminKey, 'GET', '/v1/agents')).body.agents as Array<{ id: string; role: string; url: string }>;
    governanceId = agents.find((a) => a.role === 'governance')!.id;
    const sellerUrl = agents.find((a) => a.id === server.sellerId)!.url;
    const sync = await server.api(server.adminKey, 'POST', '/v1/plans', {
      agent_id: governanceId,
      plans: [plan(PLAN_ID, { approved_sellers: [sellerUrl], budget: { total: 50_000, currency: 'USD', reallocation_threshold: 5_000 }, flight: { start: '2026-01-01T00:00:00Z', end: '2030-12-31T23:59:59Z' } })],
    });
    expect(sync.status, JSON.stringify(sync.body)).toBe(202);
    await eventually(async () => ((await server.api(server.adminKey, 'GET', `/v1/operations/${sync.body.id}`)).body.status === 'completed' ? true : undefined));
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
  });

  const newPage = async (key: string): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    contexts.push(context);
    const page = await context.newPage();
    await signIn(page, server.serve.url, key);
    return page;
  };
  const campaignApi = async (id: string) => (await server.api(server.adminKey, 'GET', `/v1/campaigns/${id}`)).body;

  let campaignId: string;
  let buyIds: string[];

  it('lists a governed campaign live: planned vs committed and buys by state, as the API states them', async () => {
    const page = await newPage(viewerKey);
    await page.goto(`${server.serve.url}/campaigns`);
    await page.locator('[data-live-state][data-state="open"]').waitFor();
    await expect(page.locator('#campaigns .empty').textContent()).resolves.toContain('No campaigns yet');
    await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));

    const res = await server.api(server.adminKey, 'POST', '/v1/campaigns', {
      name: 'Browser launch',
      governance: { agent_id: governanceId, plan_id: PLAN_ID },
      buys: [
        { agent_id: server.sellerId, request: governedRequest('sandbox_instant', { ...within, packages: pkg('sandbox_instant', 5_000) }) },
        { agent_id: server.sellerId, request: governedRequest('sandbox_submitted', { ...within, packages: pkg('sandbox_submitted', 3_000) }) },
        // Runs past the plan's flight: approved on conditions, for a person.
        { agent_id: server.sellerId, request: governedRequest('sandbox_instant', { end_time: '2031-06-30T00:00:00Z', packages: pkg('sandbox_instant', 7_000) }) },
        // Outside the plan's countries: denied.
        { agent_id: server.sellerId, request: governedRequest('sandbox_instant', { ...within, packages: pkg('sandbox_instant', 2_000, { targeting_overlay: { geo_countries: ['FR'] } }) }) },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    campaignId = res.body.id;
    buyIds = res.body.buys.map((b: { id: string }) => b.id);

    // Settled as far as it goes without a person: two done, one waiting, one denied.
    const settled = await eventually(async () => {
      const c = await campaignApi(campaignId);
      return c.summary.done === 2 && c.summary.waiting_on_people === 1 && c.summary.denied === 1 && c.budget.committed === 8_000 ? c : undefined;
    }, 30_000);
    const row = page.locator(`tr[data-campaign-id="${campaignId}"]`);
    // Arrived without a reload, and refreshed until the counts reached the API's.
    await row.locator('.state-count[data-state="done"][data-count="2"]').waitFor({ timeout: 20_000 });
    await row.locator('.budget[data-committed="8000"]').waitFor({ timeout: 20_000 });
    const budget = row.locator('.budget');
    expect(Number(await budget.getAttribute('data-planned'))).toBe(settled.budget.planned);
    expect(Number(await budget.getAttribute('data-committed'))).toBe(settled.budget.committed);
    expect(Number(await budget.getAttribute('data-remaining'))).toBe(settled.budget.remaining);
    expect(settled.budget).toMatchObject({ planned: 17_000, committed: 8_000, remaining: 42_000 });
    const counts = Object.fromEntries(
      await row.locator('.state-count').evaluateAll((els) => els.map((e) => [e.getAttribute('data-state'), Number(e.getAttribute('data-count'))])),
    );
    const { total: _total, ...byState } = settled.summary as Record<string, number>;
    expect(counts).toEqual(Object.fromEntries(Object.entries(byState).filter(([, n]) => n > 0)));
    await expect(row.locator('[data-campaign-status]').getAttribute('data-campaign-status')).resolves.toBe(settled.status);
    await expect(row.textContent()).resolves.toContain('Browser launch');
    await expect(row.textContent()).resolves.toContain(PLAN_ID);
    expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
    await screenshot(page, 'campaigns');
  });

  it('shows a campaign’s buys with links to their operations, status and amount', async () => {
    const page = await newPage(viewerKey);
    await page.goto(`${server.serve.url}/campaigns`);
    await page.locator(`tr[data-campaign-id="${campaignId}"] a`).first().click();
    await page.waitForURL(`${server.serve.url}/campaigns/${campaignId}`);
    const c = await campaignApi(campaignId);
    await expect(page.locator('[data-budget="planned"]').textContent()).resolves.toBe('17,000');
    await expect(page.locator('[data-budget="committed"]').textContent()).resolves.toBe(c.budget.committed.toLocaleString('en-US'));
    const rows = page.locator('table.buys tbody tr');
    expect(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-operation-id')))).toEqual(buyIds);
    for (const b of c.buys) {
      const r = page.locator(`table.buys tr[data-operation-id="${b.id}"]`);
      await expect(r.locator('[data-buy-state]').getAttribute('data-buy-state')).resolves.toBe(b.campaign_state);
      await expect(r.locator('[data-status]').getAttribute('data-status')).resolves.toBe(b.status);
      await expect(r.locator('[data-amount]').getAttribute('data-amount')).resolves.toBe(String(b.request.packages[0].budget));
      await expect(r.locator('td:first-child a').getAttribute('href')).resolves.toBe(`/operations/${b.id}`);
    }
    // The denied buy committed nothing; the done ones what the agent recorded.
    await expect(page.locator(`tr[data-operation-id="${buyIds[3]}"] [data-committed]`).getAttribute('data-committed')).resolves.toBe('');
    await expect(page.locator(`tr[data-operation-id="${buyIds[0]}"] [data-committed]`).getAttribute('data-committed')).resolves.toBe('5000');
    await screenshot(page, 'campaign-page');
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button, meter')]
        .filter((el) => !((el as HTMLInputElement).labels?.length) && !el.getAttribute('aria-label') && !(el.tagName === 'BUTTON' && el.textContent!.trim() !== ''))
        .map((el) => el.outerHTML.slice(0, 80)),
    );
    expect(unlabelled).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.serve.url}/campaigns`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.goto(`${server.serve.url}/campaigns/${campaignId}`);

    // Another tenant's campaign, or none: not found, and nothing about it.
    const missing = await page.goto(`${server.serve.url}/campaigns/cmp_not-a-campaign`);
    expect(missing?.status()).toBe(404);
  });

  it('shows the governance panel of a governed buy: approved, until when, and the outcome reported', async () => {
    const page = await newPage(viewerKey);
    await page.goto(`${server.serve.url}/operations/${buyIds[0]}`);
    const op = (await server.api(server.adminKey, 'GET', `/v1/operations/${buyIds[0]}`)).body;
    expect(op.governance).toMatchObject({ step: 'reported', check: { decision: 'approved' }, outcome: { status: 'accepted', outcome: 'completed', committed_budget: 5_000 } });
    const panel = page.locator('#governance');
    await expect(panel.getAttribute('data-step')).resolves.toBe('reported');
    await expect(panel.locator('[data-decision]').getAttribute('data-decision')).resolves.toBe('approved');
    await expect(panel.locator('[data-gov="check-id"] dd').textContent()).resolves.toBe(op.governance.check.check_id);
    await expect(panel.locator('[data-gov="expires"] time').getAttribute('datetime')).resolves.toBe(new Date(op.governance.check.expires_at).toISOString());
    await expect(panel.locator('[data-gov="outcome"] dd').textContent()).resolves.toBe('reported: completed, accepted');
    await expect(panel.locator('[data-gov="committed"] dd').textContent()).resolves.toBe('5,000');
    await expect(panel.textContent()).resolves.toContain(op.governance.outcome.idempotency_key);
    // No token reaches the page.
    expect(await page.content()).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/);
    await screenshot(page, 'operation-governance');
    // The buy leads back to its campaign.
    await page.locator('ul.related a', { hasText: 'cmp_' }).click();
    await page.waitForURL(`${server.serve.url}/campaigns/${campaignId}`);
    await page.goto(`${server.serve.url}/operations/${buyIds[0]}`);
    await page.locator('#governance').waitFor();

    // A denied buy: its decision and findings, and no outcome owed.
    await page.goto(`${server.serve.url}/operations/${buyIds[3]}`);
    await expect(page.locator('#governance [data-decision]').getAttribute('data-decision')).resolves.toBe('denied');
    await expect(page.locator('#governance [data-gov="outcome"] dd').textContent()).resolves.toContain('none owed');

    // An ungoverned operation has no panel.
    const plain = await server.api(server.adminKey, 'GET', '/v1/operations?type=sync_plans');
    await page.goto(`${server.serve.url}/operations/${plain.body.operations[0].id}`);
    await page.locator('#operation h1').waitFor();
    expect(await page.locator('#governance').count()).toBe(0);
  });
});
