/**
 * A change that raises no notification reaches an open page at once: against a
 * real `serve --sandbox`, an operation's page shows the seller moving its task to
 * `working` (a webhook; `working` is no notification type) within seconds, without
 * a reload, where before only the page's 30 s refresh brought it.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAdcpClient } from '../../src/adcp/client.js';
import { notificationTypeFor } from '../../src/domain/notification-types.js';
import { eventually } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { describeInBrowser, launchBrowser, signIn, startSandboxServer, type SandboxServer } from '../helpers/browser.js';

describeInBrowser('changes without a notification, live in a browser', () => {
  let server: SandboxServer;
  let browser: Browser;

  beforeAll(async () => {
    // A working task stays working for the whole test: nothing else refreshes the page meanwhile.
    server = await startSandboxServer({ SANDBOX_WORKING_DELAY_MS: '600000' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows an operation going working without a reload, well before the 30 s refresh', async () => {
    expect(notificationTypeFor({ kind: 'transition', to_status: 'working' })).toBeNull();
    const created = await server.api(server.adminKey, 'POST', '/v1/media-buys', { agent_id: server.sellerId, request: mediaBuyRequest('sandbox_input_required') });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const id = created.body.id as string;
    const waiting = await eventually(async () => {
      const op = (await server.api(server.adminKey, 'GET', `/v1/operations/${id}`)).body;
      return op.status === 'input-required' && op.task_id ? op : undefined;
    });

    const page = await browser.newPage();
    await signIn(page, server.serve.url, server.adminKey);
    await page.goto(`${server.serve.url}/operations/${id}`);
    await page.locator('#operation h1 [data-status="input-required"]').waitFor();
    await page.locator('[data-live-state][data-state="open"]').waitFor();
    await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));

    // The seller moves its own task on (its approval came out of band): it tells us `working` by webhook.
    const agents = (await server.api(server.adminKey, 'GET', '/v1/agents')).body.agents as Array<{ id: string; url: string }>;
    const sellerUrl = agents.find((a) => a.id === server.sellerId)!.url;
    const reply = await createAdcpClient().callTask({ url: sellerUrl, protocol: 'mcp' }, 'sandbox_respond', { task_id: waiting.task_id, approve: true, then: 'working' });
    expect(JSON.stringify(reply)).toContain('working');
    const started = Date.now();
    await page.locator('#operation h1 [data-status="working"]').waitFor({ timeout: 10_000 });
    const tookMs = Date.now() - started;
    expect(tookMs).toBeLessThan(10_000);
    expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);

    // It is the webhook's change the page shows, and it raised no notification.
    const op = (await server.api(server.adminKey, 'GET', `/v1/operations/${id}`)).body;
    const toWorking = op.events.find((e: { kind: string; to: string }) => e.kind === 'transition' && e.to === 'working');
    expect(toWorking?.source).toBe('webhook');
    await expect(page.locator('table.timeline').textContent()).resolves.toContain('working');
    await page.close();
  });
});
