/**
 * The media buys pages in a real browser (chromium, headless) against a real
 * orchestrator and a real sandbox seller over loopback, the seller's clock stopped so
 * that the test says when each report arrives: the buy page's chart draws exactly
 * the periods GET /v1/media-buys/:id/delivery counts, and takes a new report without
 * a reload; the list shows the buys as GET /v1/media-buys lists them, filtered and
 * live; a viewer sees no action and is refused one; an operator's pause, resume and
 * cancel go through the engine and are recorded with the key's name; hostile names
 * stay text. Screenshots go to test-results/.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buyForPage, reportNextPeriod, restatePeriod, signInAs, startBuyPageStack } from '../helpers/buy-page.js';
import { buyWhen, type LiveBuyStack } from '../helpers/live-buys.js';
import { describeInBrowser, launchBrowser, screenshot } from '../helpers/browser.js';
import { eventually } from '../helpers/orchestrator.js';

const HOSTILE = '<img src=x onerror="window.pwned=1">"\'`&';

interface Bar {
  id: string;
  start: string;
  end: string;
  spend: number;
  adjusted: boolean;
}

describeInBrowser('media buys in a browser', () => {
  let stack: LiveBuyStack;
  let browser: Browser;
  let viewerKey: string;
  let operatorKey: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    stack = await startBuyPageStack();
    browser = await launchBrowser();
    const tenants = stack.orch.app.store.tenants;
    viewerKey = await tenants.createApiKey(stack.orch.tenantId, { name: 'auditor', role: 'viewer' });
    operatorKey = await tenants.createApiKey(stack.orch.tenantId, { name: 'trader', role: 'operator' });
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await stack?.close();
  });

  const base = () => stack.orch.url;
  const api = (path: string) => stack.orch.api('GET', path).then((r) => r.body);
  const newPage = async (key: string): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    await signInAs(page, base(), key);
    return page;
  };
  const bars = (page: Page): Promise<Bar[]> =>
    page.locator('svg.delivery-chart rect.bar').evaluateAll((els) =>
      els.map((e) => ({
        id: e.getAttribute('data-report-id')!,
        start: e.getAttribute('data-period-start')!,
        end: e.getAttribute('data-period-end')!,
        spend: Number(e.getAttribute('data-spend')),
        adjusted: e.getAttribute('data-adjusted') === 'true',
      })),
    );
  /** The periods the API counts (nothing supersedes them; snapshots never count), in time order. */
  const countedPeriods = async (id: string): Promise<Bar[]> => {
    const delivery = await api(`/v1/media-buys/${id}/delivery`);
    return (delivery.reports as any[])
      .filter((r) => !r.superseded_by && r.notification_type !== 'snapshot')
      .map((r) => ({ id: r.id, start: r.period.start, end: r.period.end, spend: r.spend, adjusted: r.is_adjusted || r.notification_type === 'adjusted' || delivery.reports.some((o: any) => o.superseded_by === r.id) }))
      .sort((a, b) => a.start.localeCompare(b.start));
  };
  const stayed = (page: Page) => page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed === true);
  const markStay = (page: Page) => page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));

  it('the buy page’s chart draws the periods the API reports, restated ones marked, and takes a new report live', async () => {
    const buy = await buyForPage(stack);
    for (let i = 1; i <= 3; i++) await reportNextPeriod(stack, buy, i);
    await restatePeriod(stack, buy, 1, 0.7, 4);

    const page = await newPage(viewerKey);
    await page.goto(`${base()}/media-buys/${buy.id}`);
    await page.locator('[data-live-state][data-state="open"]').waitFor();
    const expected = await countedPeriods(buy.id);
    expect(expected).toHaveLength(3);
    expect(await bars(page)).toEqual(expected);
    // The restated period is the second hour: hatched, with the figure it replaced (the superseded report's) outlined.
    const delivery = await api(`/v1/media-buys/${buy.id}/delivery`);
    const superseded = delivery.reports.find((r: any) => r.superseded_by);
    const restated = page.locator(`rect.bar-adjusted[data-report-id="${superseded.superseded_by}"]`);
    await expect(restated.getAttribute('data-replaced')).resolves.toBe(String(superseded.spend));
    await expect(page.locator('svg.delivery-chart').getAttribute('data-spend')).resolves.toBe(String(delivery.totals.spend));
    // Every report is listed, the superseded one pointing at its replacement.
    expect(await page.locator('table.reports tbody tr').count()).toBe(delivery.reports.length);
    await expect(page.locator(`tr[data-report-id="${superseded.id}"]`).getAttribute('data-superseded-by')).resolves.toBe(superseded.superseded_by);
    // Described for people who cannot see it.
    const described = await page.evaluate(() => {
      const svg = document.querySelector('svg.delivery-chart')!;
      return { role: svg.getAttribute('role'), names: svg.getAttribute('aria-labelledby')!.split(' ').map((id) => document.getElementById(id)?.textContent ?? '') };
    });
    expect(described.role).toBe('img');
    expect(described.names[0]).toContain(buy.media_buy_id);
    expect(described.names[1]).toContain('3 periods reported');
    await screenshot(page, 'media-buy-page');

    // The seller reports the next period: the chart, the table and the header follow, without a reload.
    await markStay(page);
    await reportNextPeriod(stack, buy, 5);
    await page.locator('svg.delivery-chart rect.bar').nth(3).waitFor({ timeout: 15_000 });
    const after = await countedPeriods(buy.id);
    expect(after).toHaveLength(4);
    await eventually(async () => (JSON.stringify(await bars(page)) === JSON.stringify(after) ? true : undefined), 10_000);
    const now = await buyWhen(stack.orch, buy.id, () => true);
    await page.locator(`[data-stat="spend"] .spend[data-spend="${now.delivery.spend}"]`).waitFor({ timeout: 10_000 });
    await page.locator(`[data-reports-received="${now.reports.received}"]`).waitFor({ timeout: 10_000 });
    expect(await page.locator('table.reports tbody tr').count()).toBe(5);
    expect(await stayed(page)).toBe(true);
    // A viewer sees no action at all.
    expect(await page.locator('[data-action], form[action*="/pause"], form[action*="/cancel"], form[action*="/resume"]').count()).toBe(0);

    // Every control labelled; on a phone the page itself never scrolls sideways (the chart and tables scroll in their frames).
    for (const path of [`/media-buys/${buy.id}`, '/media-buys']) {
      await page.goto(`${base()}${path}`);
      const unlabelled = await page.evaluate(() =>
        [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button, meter')]
          .filter((el) => !(el as HTMLInputElement).labels?.length && !el.getAttribute('aria-label') && !(el.tagName === 'BUTTON' && el.textContent!.trim() !== ''))
          .map((el) => el.outerHTML.slice(0, 80)),
      );
      expect(unlabelled, path).toEqual([]);
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${base()}${path}`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), path).toBeLessThanOrEqual(0);
      await screenshot(page, `media-buy-phone${path === '/media-buys' ? '-list' : ''}`);
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('the list shows the buys as GET /v1/media-buys does, filters them, and follows a report live', async () => {
    const under = await buyForPage(stack, [['sandbox_underpacing', 8000]]);
    for (let i = 1; i <= 3; i++) await reportNextPeriod(stack, under, i);
    const page = await newPage(viewerKey);
    await page.goto(`${base()}/media-buys`);
    await page.locator('[data-live-state][data-state="open"]').waitFor();
    const listed = (await api('/v1/media-buys?limit=50')).media_buys as any[];
    const rows = await page.locator('table.buys-list tbody tr').evaluateAll((els) => els.map((e) => [e.getAttribute('data-buy-id'), e.getAttribute('data-status'), e.getAttribute('data-pacing')]));
    expect(rows).toEqual(listed.map((b) => [b.id, b.status, b.delivery.pacing.state]));
    expect(listed.find((b) => b.id === under.id).delivery.pacing.state).toBe('under');

    await page.getByLabel('Pacing').selectOption('under');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/\/media-buys\?.*pacing=under/);
    const filtered = (await api('/v1/media-buys?pacing=under')).media_buys as any[];
    expect(await page.locator('table.buys-list tbody tr').evaluateAll((els) => els.map((e) => e.getAttribute('data-buy-id')))).toEqual(filtered.map((b) => b.id));
    await screenshot(page, 'media-buys-list');

    // A report arrives for the listed buy: its spend moves on the open page.
    await page.goto(`${base()}/media-buys`);
    await page.locator('[data-live-state][data-state="open"]').waitFor();
    await markStay(page);
    const moved = await reportNextPeriod(stack, under, 4);
    await page.locator(`tr[data-buy-id="${under.id}"] .spend[data-spend="${moved.delivery.spend}"]`).waitFor({ timeout: 15_000 });
    expect(await stayed(page)).toBe(true);
  });

  it('refuses a viewer’s forged pause; an operator pauses, resumes and cancels through the engine, recorded by name', async () => {
    const buy = await buyForPage(stack);
    await reportNextPeriod(stack, buy, 1);
    const viewer = await newPage(viewerKey);
    await viewer.goto(`${base()}/media-buys/${buy.id}`);
    const forged = await viewer.evaluate(async (id) => {
      const csrf = (document.querySelector('input[name="_csrf"]') as HTMLInputElement).value;
      const res = await fetch(`/media-buys/${id}/pause`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: csrf }) });
      return { status: res.status, text: await res.text() };
    }, buy.id);
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('needs the operator role');
    expect((await api(`/v1/operations?type=update_media_buy`)).operations).toEqual([]);

    const page = await newPage(operatorKey);
    await page.goto(`${base()}/media-buys/${buy.id}`);
    await page.locator('[data-live-state][data-state="open"]').waitFor();
    await page.locator('button[data-action="pause"]').click();
    await page.waitForURL(`${base()}/media-buys/${buy.id}?notice=pause_sent`);
    await page.locator('#media-buy h1 [data-buy-status="paused"]').waitFor({ timeout: 15_000 });
    const paused = await api(`/v1/media-buys/${buy.id}`);
    expect(paused.status).toBe('paused');
    expect(paused.events.find((e: any) => e.kind === 'pause_requested')).toMatchObject({ source: 'user', actor: 'trader' });
    const [pause] = (await api('/v1/operations?type=update_media_buy')).operations;
    expect(pause.request).toMatchObject({ media_buy_id: buy.media_buy_id, paused: true });
    expect(pause.parent_id).toBe(buy.operation_id);

    await page.locator('button[data-action="resume"]').click();
    await page.waitForURL(`${base()}/media-buys/${buy.id}?notice=resume_sent`);
    await page.locator('#media-buy h1 [data-buy-status="active"]').waitFor({ timeout: 15_000 });
    expect((await api(`/v1/media-buys/${buy.id}`)).events.find((e: any) => e.kind === 'resume_requested')).toMatchObject({ actor: 'trader' });

    await page.locator('#buy-cancel summary').click();
    await page.getByLabel('Reason').fill('campaign pulled');
    await page.locator('button[data-action="cancel"]').click();
    await page.waitForURL(`${base()}/media-buys/${buy.id}?notice=cancel_sent`);
    await page.locator('#media-buy h1 [data-buy-status="canceled"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-action]').count()).toBe(0);
    const create = await api(`/v1/operations/${buy.operation_id}`);
    expect(create.events.some((e: any) => e.actor === 'trader' && JSON.stringify(e.detail ?? '').includes('campaign pulled'))).toBe(true);
    await screenshot(page, 'media-buy-canceled');
  });

  it('keeps hostile agent and key names as text on both pages', async () => {
    const agentId = await stack.orch.registerAgent({ name: HOSTILE, url: stack.seller.url, webhook_signing: { jwks_uri: stack.seller.jwksUrl } });
    const created = await stack.orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: (await import('../helpers/buy-page.js')).eightHourRequest(), reporting: { frequency: 'hourly' } });
    expect(created.status).toBe(202);
    const buy = await eventually(async () => ((await api('/v1/media-buys?agent_id=' + agentId)).media_buys as any[])[0]);
    const hostileKey = await stack.orch.app.store.tenants.createApiKey(stack.orch.tenantId, { name: HOSTILE, role: 'admin' });
    const page = await newPage(hostileKey);
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${base()}/media-buys/${buy.id}`);
    await page.locator('button[data-action="refresh"]').click();
    await page.waitForURL(`${base()}/media-buys/${buy.id}?notice=refresh_sent`);
    await page.locator('table.buy-timeline td.actor', { hasText: HOSTILE }).first().waitFor();
    await expect(page.locator('.op-id strong').textContent()).resolves.toBe(HOSTILE);
    await page.goto(`${base()}/media-buys?campaign=${encodeURIComponent(HOSTILE)}`);
    await expect(page.getByLabel('Campaign').inputValue()).resolves.toBe(HOSTILE);
    await page.goto(`${base()}/media-buys?agent=${agentId}`);
    await expect(page.locator(`tr[data-buy-id="${buy.id}"] td`).nth(1).textContent()).resolves.toBe(HOSTILE);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });
});
