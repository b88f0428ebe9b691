/**
 * Notifications lead people to the dashboard, and the dashboard shows what was
 * sent: against a real `serve --sandbox`, a Slack-format subscription receives a
 * readable message whose link opens the operation's page (through sign-in), and a
 * delivery that failed is shown with its attempts and redelivered from the page
 * by an admin (a viewer sees no such button).
 */
import { createServer, type Server } from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { describeInBrowser, launchBrowser, screenshot, signIn, startSandboxServer, type SandboxServer } from '../helpers/browser.js';
import { whenBodyRead } from '../helpers/request-body.js';

interface Received {
  path: string;
  body: any;
}

describeInBrowser('notification links and subscriptions in a browser', () => {
  let server: SandboxServer;
  let browser: Browser;
  let receiver: Server;
  let receiverUrl: string;
  const received: Received[] = [];
  /** The standard receiver answers 500 until told otherwise. */
  let standardOk = false;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      whenBodyRead(req, (text) => {
        received.push({ path: req.url ?? '', body: JSON.parse(text) });
        res.statusCode = req.url === '/standard' && !standardOk ? 500 : 200;
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const addr = receiver.address();
    receiverUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    // Two quick retries, then failed: a failed delivery within the test's time.
    server = await startSandboxServer({ ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS: '100,100' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise((r) => receiver?.close(r));
  });

  it('posts a Slack message whose link opens the operation’s page, and shows a failed delivery that an admin redelivers', async () => {
    const subscribe = async (path: string, format: string) => {
      const res = await server.api(server.adminKey, 'POST', '/v1/subscriptions', { url: `${receiverUrl}${path}`, events: ['operation.input_required'], format });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id as string;
    };
    await subscribe('/slack', 'slack');
    const standardId = await subscribe('/standard', 'standard');
    const buy = await server.api(server.adminKey, 'POST', '/v1/media-buys', { agent_id: server.sellerId, request: mediaBuyRequest('sandbox_input_required') });
    const id = buy.body.id as string;

    const slack = await eventually(async () => received.find((r) => r.path === '/slack'));
    const link = `${server.serve.url}/operations/${id}`;
    expect(slack.body.text).toContain(`<${link}|Open the operation>`);
    const standard = await eventually(async () => received.find((r) => r.path === '/standard'));
    expect(standard.body.data.link).toBe(link);

    // Opened from the message in a browser that is not signed in: sign-in first, then the page.
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await page.goto(link);
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByLabel('API key').fill(server.adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(link);
    await page.locator('#operation h1 [data-status="input-required"]').waitFor();

    // The standard delivery failed three times (first try and two retries).
    await eventually(async () => {
      const res = await server.api(server.adminKey, 'GET', `/v1/subscriptions/${standardId}/deliveries`);
      return res.body.deliveries[0]?.status === 'failed' ? true : undefined;
    });
    await page.goto(`${server.serve.url}/subscriptions`);
    await page.locator(`tr[data-subscription-id="${standardId}"] a`).click();
    const failed = page.locator('tr[data-status="failed"]');
    await failed.waitFor();
    await expect(failed.textContent()).resolves.toContain('HTTP 500');
    await failed.locator('summary').click();
    expect(await failed.locator('ol.attempts li').count()).toBe(3);
    await screenshot(page, 'subscription-deliveries');

    standardOk = true;
    await failed.getByRole('button', { name: 'Redeliver' }).click();
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('The delivery was queued to be sent again');
    await eventually(async () => {
      await page.reload();
      return (await page.locator('tr[data-status="delivered"]').count()) === 1 ? true : undefined;
    });
    await expect(page.locator('tr[data-status="delivered"]').textContent()).resolves.toContain('redelivered by sandbox-admin');
    await context.close();

    // A viewer sees the deliveries but no button to send them again.
    const viewer = await browser.newContext();
    const viewerPage = await viewer.newPage();
    await signIn(viewerPage, server.serve.url, await server.createKey('watcher', 'viewer'));
    await viewerPage.goto(`${server.serve.url}/subscriptions/${standardId}`);
    await viewerPage.locator('tr[data-status="delivered"]').waitFor();
    expect(await viewerPage.getByRole('button', { name: /redeliver|send now/i }).count()).toBe(0);
    await viewer.close();
  });
});
