/**
 * An expired dashboard session, in a browser against `serve --sandbox` with short
 * sessions (ADCP_ORCH_SESSION_TTL_MS): a form sent after the end is refused and
 * says so, a page sends the person to sign in with the reason, and signing in
 * again leads back to the page they asked for.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { describeInBrowser, launchBrowser, signIn, startSandboxServer, type SandboxServer } from '../helpers/browser.js';

const TTL_MS = 4000;

describeInBrowser('an expired dashboard session', () => {
  let server: SandboxServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startSandboxServer({ ADCP_ORCH_SESSION_TTL_MS: String(TTL_MS) });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('is refused with a clear message, on a form and on a page, and signing in again returns to the page', async () => {
    const buy = await server.api(server.adminKey, 'POST', '/v1/media-buys', { agent_id: server.sellerId, request: mediaBuyRequest('sandbox_input_required') });
    const id = buy.body.id as string;
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, server.serve.url, server.adminKey);
    await page.goto(`${server.serve.url}/operations/${id}`);
    await page.locator('details.cancel-panel summary').click();

    // The session ends on the server's clock: wait until the server says so.
    await eventually(
      () =>
        page.evaluate(async () => {
          const res = await fetch('/agents', { redirect: 'manual' });
          return res.type === 'opaqueredirect' ? true : undefined;
        }),
      TTL_MS + 20_000,
      250,
    );

    const [response] = await Promise.all([
      page.waitForResponse(`${server.serve.url}/operations/${id}/cancel`),
      page.getByRole('button', { name: 'Yes, cancel it' }).click(),
    ]);
    expect(response.status()).toBe(401);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Your session has expired, so this was not done');
    expect((await server.api(server.adminKey, 'GET', `/v1/operations/${id}`)).body.status).toBe('input-required');

    await page.goto(`${server.serve.url}/operations/${id}`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await expect(page.getByRole('status').textContent()).resolves.toContain('Your session has expired. Sign in again to continue.');
    await page.getByLabel('API key').fill(server.adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.serve.url}/operations/${id}`);
    await page.locator('#operation h1 [data-status="input-required"]').waitFor();
    await context.close();
  });
});
