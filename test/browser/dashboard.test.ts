/**
 * The dashboard in a real browser (chromium, headless) against a real
 * `serve --sandbox`: sign-in, the live operations list, an operation's page,
 * the inbox, what a viewer may not do, and the refusals a person must understand.
 * Screenshots of the three main pages are written to test-results/.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { describeInBrowser, launchBrowser, screenshot, signIn, startSandboxServer, type SandboxServer } from '../helpers/browser.js';

describeInBrowser('dashboard in a browser', () => {
  let server: SandboxServer;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let traderKey: string;
  let viewerKey: string;

  beforeAll(async () => {
    server = await startSandboxServer({ LOG_LEVEL: 'info' });
    browser = await launchBrowser();
    traderKey = await server.createKey('trader', 'approver');
    viewerKey = await server.createKey('auditor', 'viewer');
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
  });

  const newPage = async (viewport = { width: 1280, height: 860 }): Promise<Page> => {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    return context.newPage();
  };
  const buy = async (product: string, extra: Record<string, unknown> = {}) => {
    const res = await server.api(server.adminKey, 'POST', '/v1/media-buys', { agent_id: server.sellerId, request: mediaBuyRequest(product), ...extra });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body as { id: string; status: string };
  };
  const row = (page: Page, id: string) => page.locator(`tr[data-operation-id="${id}"]`);
  const base = () => server.serve.url;

  it('signs in with an API key: an HttpOnly, SameSite=Strict session cookie, and the key in neither the page, the URL nor the logs', async () => {
    const page = await newPage();
    await signIn(page, base(), traderKey);
    expect(page.url()).toBe(`${base()}/operations`);
    await expect(page.locator('.who-name').textContent()).resolves.toBe('trader');
    await expect(page.locator('.role').textContent()).resolves.toBe('approver');
    expect(await page.content()).not.toContain(traderKey);
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === 'adcp_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', secure: false, path: '/' });
    expect(session.value).not.toContain(traderKey);
    expect(cookies.map((c) => c.value).join(' ')).not.toContain(traderKey);
    // Logged at info: the sign-in is recorded by name, the key never.
    expect(server.serve.output()).toContain('dashboard sign-in');
    expect(server.serve.output()).not.toContain(traderKey);
  });

  it('shows a media buy created through the API without a reload, and its status reaching completed', async () => {
    const page = await newPage();
    await signIn(page, base(), traderKey);
    await page.locator('[data-live-state][data-state="open"]').waitFor();
    await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));
    const op = await buy('sandbox_submitted');
    await row(page, op.id).waitFor({ timeout: 20_000 });
    await row(page, op.id).locator('[data-status="completed"]').waitFor({ timeout: 30_000 });
    expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);

    // More kinds of operations, for a list worth looking at.
    const others = [await buy('sandbox_instant'), await buy('sandbox_rejected'), await buy('sandbox_input_required'), await buy('sandbox_failed'), await buy('sandbox_instant', { approval: 'required' })];
    for (const o of others) await row(page, o.id).waitFor({ timeout: 20_000 });
    await row(page, others[2]!.id).locator('[data-status="input-required"]').waitFor({ timeout: 20_000 });
    await expect(page.locator('#inbox-count').textContent()).resolves.toMatch(/\d/);
    await screenshot(page, 'operations-list');

    // Filters and search are links a person can keep.
    await page.getByLabel('Status').selectOption('rejected');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/status=rejected/);
    await row(page, others[1]!.id).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(1);
    await page.goto(`${base()}/operations?q=${encodeURIComponent(op.id)}`);
    await row(page, op.id).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(1);
  });

  it('shows an operation: status and time, the timeline with its actor, the request and result as JSON', async () => {
    const op = await buy('sandbox_submitted');
    const page = await newPage();
    await signIn(page, base(), traderKey);
    await page.goto(`${base()}/operations/${op.id}`);
    await page.locator('#operation h1 [data-status="completed"]').waitFor({ timeout: 30_000 });
    await expect(page.locator('[data-waited]').textContent()).resolves.toMatch(/^Ended completed, took \d/);
    const created = page.locator('table.timeline tr[data-event-kind="created"]');
    await expect(created.locator('td.actor').textContent()).resolves.toBe('sandbox-admin');
    await expect(page.locator('table.timeline').textContent()).resolves.toContain('submitted');
    await expect(page.locator('#json-request').textContent()).resolves.toContain('"product_id": "sandbox_submitted"');
    await expect(page.locator('#json-result').textContent()).resolves.toContain('media_buy_id');
    await screenshot(page, 'operation-page');
  });

  it('shows an input-required buy in the inbox as it arrives, with its message and how long it has waited', async () => {
    const page = await newPage();
    await signIn(page, base(), traderKey);
    await page.goto(`${base()}/inbox`);
    await page.locator('[data-live-state][data-state="open"]').waitFor();
    const op = await buy('sandbox_input_required');
    const item = page.locator(`li.inbox-item[data-operation-id="${op.id}"]`);
    await item.waitFor({ timeout: 20_000 });
    await expect(item.locator('.message').textContent()).resolves.toContain('insertion order');
    await expect(item.locator('.meta:not(.reason)').textContent()).resolves.toMatch(/Waiting \d/);
  });

  it('shows a viewer no cancel or answer button, and refuses a forged form post with its session', async () => {
    const op = await buy('sandbox_input_required');
    const page = await newPage();
    await signIn(page, base(), viewerKey);
    await page.goto(`${base()}/operations/${op.id}`);
    await page.locator('#operation h1 [data-status="input-required"]').waitFor({ timeout: 20_000 });
    expect(await page.getByRole('button', { name: /cancel/i }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /approve|reject/i }).count()).toBe(0);
    await page.goto(`${base()}/inbox`);
    await page.locator(`li.inbox-item[data-operation-id="${op.id}"]`).waitFor();
    expect(await page.getByRole('button', { name: /approve|reject/i }).count()).toBe(0);
    await expect(page.locator(`li.inbox-item[data-operation-id="${op.id}"] .role-note`).textContent()).resolves.toContain('needs the approver role');

    // A form the page never offered, posted with the viewer's own valid session and CSRF token.
    const forged = await page.evaluate(async (id) => {
      const csrf = (document.querySelector('input[name="_csrf"]') as HTMLInputElement).value;
      const res = await fetch(`/operations/${id}/cancel`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: csrf, reason: 'forged' }) });
      return { status: res.status, text: await res.text() };
    }, op.id);
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('This action needs the operator role; key &#39;auditor&#39; has viewer');
    const after = await server.api(server.adminKey, 'GET', `/v1/operations/${op.id}`);
    expect(after.body.status).toBe('input-required');
    expect(after.body.events.some((e: { actor: string | null }) => e.actor === 'auditor')).toBe(false);
  });

  it('refuses a wrong key at sign-in with a clear message, and sets no session', async () => {
    const page = await newPage();
    await page.goto(`${base()}/login`);
    await page.getByLabel('API key').fill('aok_this-key-was-never-issued-000000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('That API key was not recognised');
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(page.url()).not.toContain('aok_');
    expect((await page.context().cookies()).some((c) => c.name === 'adcp_session')).toBe(false);
    await page.goto(`${base()}/operations`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });

  it('refuses a form without its CSRF token with a clear message, and changes nothing', async () => {
    const op = await buy('sandbox_input_required');
    const page = await newPage();
    await signIn(page, base(), traderKey);
    await page.goto(`${base()}/operations/${op.id}`);
    await page.locator('details.cancel-panel summary').click();
    await page.evaluate(() => document.querySelector('details.cancel-panel input[name="_csrf"]')!.remove());
    const [response] = await Promise.all([page.waitForResponse(`${base()}/operations/${op.id}/cancel`), page.getByRole('button', { name: 'Yes, cancel it' }).click()]);
    expect(response.status()).toBe(403);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('it carried no CSRF token');
    expect((await server.api(server.adminKey, 'GET', `/v1/operations/${op.id}`)).body.status).toBe('input-required');

    // The same form with its token goes through, and the timeline names who canceled.
    await page.goto(`${base()}/operations/${op.id}`);
    await page.locator('details.cancel-panel summary').click();
    await page.getByLabel(/Reason/).fill('wrong flight dates');
    await page.getByRole('button', { name: 'Yes, cancel it' }).click();
    await page.locator('#operation h1 [data-status="canceled"]').waitFor();
    const canceled = page.locator('table.timeline tr', { hasText: 'canceled' }).last();
    await expect(canceled.locator('td.actor').textContent()).resolves.toBe('trader');
    await expect(canceled.textContent()).resolves.toContain('wrong flight dates');
  });

  it('signs out: the session ends at once, and its cookie no longer opens a page', async () => {
    const page = await newPage();
    await signIn(page, base(), traderKey);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'adcp_session')!.value;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/login\?reason=signed_out/);
    await expect(page.getByRole('status').textContent()).resolves.toContain('You are signed out');
    const reused = await fetch(`${base()}/operations`, { headers: { cookie: `adcp_session=${cookie}` }, redirect: 'manual' });
    expect(reused.status).toBe(303);
    expect(reused.headers.get('location')).toMatch(/^\/login/);
  });

  it('can be used from the keyboard, and labels every control', async () => {
    const op = await buy('sandbox_instant', { approval: 'required' });
    const page = await newPage();
    await signIn(page, base(), traderKey);
    for (const path of ['/operations', `/operations/${op.id}`, '/inbox', '/campaigns', '/agents', '/subscriptions']) {
      await page.goto(`${base()}${path}`);
      // The first Tab reaches the skip link, and it leads to the main region.
      await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Skip to content');
      await expect(page.evaluate(() => (document.activeElement as HTMLAnchorElement).hash)).resolves.toBe('#main');
      const unlabelled = await page.evaluate(() =>
        [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
          .filter((el) => {
            const e = el as HTMLInputElement;
            return !(e.labels && e.labels.length > 0) && !e.getAttribute('aria-label') && !(el.tagName === 'BUTTON' && el.textContent!.trim() !== '');
          })
          .map((el) => el.outerHTML.slice(0, 80)),
      );
      expect(unlabelled, path).toEqual([]);
    }
    // Approving by keyboard alone: focus the button, press Enter.
    await page.goto(`${base()}/operations/${op.id}`);
    await page.getByRole('button', { name: 'Approve and send' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#operation h1 [data-status="completed"]').waitFor({ timeout: 30_000 });
  });

  it('fits a phone: the list is readable at 390 px wide', async () => {
    const page = await newPage({ width: 390, height: 844 });
    await signIn(page, base(), traderKey);
    await page.locator('tbody tr').first().waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'operations-list-phone');
  });
});
