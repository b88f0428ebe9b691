/**
 * Answering from the inbox, in a browser against a real `serve --sandbox`, with a
 * sandbox seller run by the test (registered over the API, on A2A so that a
 * seller's question can be approved on its continuation) whose own log proves
 * what reached it. The answers go through the same engine call and rules as
 * POST /v1/operations/:id/input; each is recorded with the signed-in key's name.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { describeInBrowser, launchBrowser, screenshot, signIn, startSandboxServer, type SandboxServer } from '../helpers/browser.js';

describeInBrowser('answering from the inbox in a browser', () => {
  let server: SandboxServer;
  let seller: SandboxSeller;
  let browser: Browser;
  let a2aAgent: string;
  let mcpAgent: string;
  let traderKey: string;
  let viewerKey: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    server = await startSandboxServer();
    seller = await startSandboxSeller({ port: 0, submittedDelayMs: 500, workingDelayMs: 300 });
    const agent = await server.api(server.adminKey, 'POST', '/v1/agents', { name: 'premium-seller (A2A)', role: 'seller', protocol: 'a2a', url: seller.a2aUrl });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    a2aAgent = agent.body.id;
    const mcp = await server.api(server.adminKey, 'POST', '/v1/agents', { name: 'premium-seller (MCP)', role: 'seller', protocol: 'mcp', url: seller.url });
    expect(mcp.status, JSON.stringify(mcp.body)).toBe(201);
    mcpAgent = mcp.body.id;
    traderKey = await server.createKey('trader', 'approver');
    viewerKey = await server.createKey('auditor', 'viewer');
    browser = await launchBrowser();
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    await seller?.close();
  });

  const pageAs = async (key: string): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    await signIn(page, server.serve.url, key);
    return page;
  };
  const buy = async (product: string, extra: Record<string, unknown> = {}) => {
    const res = await server.api(server.adminKey, 'POST', '/v1/media-buys', { agent_id: a2aAgent, request: mediaBuyRequest(product), webhook: 'none', ...extra });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body as { id: string; idempotency_key: string; status: string };
  };
  const item = (page: Page, id: string) => page.locator(`li.inbox-item[data-operation-id="${id}"]`);
  const show = async (id: string) => (await server.api(server.adminKey, 'GET', `/v1/operations/${id}`)).body;
  const sellerSaw = (key: string) => seller.stats().calls.filter((c) => c.idempotency_key === key).length + (seller.stats().mediaBuysCreatedByKey[key] ?? 0);

  it('approves a seller’s question from the inbox: the buy ends completed and the answer names the signed-in key', async () => {
    const page = await pageAs(traderKey);
    await page.goto(`${server.serve.url}/inbox`);
    await page.locator('[data-live-state][data-state="open"]').waitFor();
    const asked = await buy('sandbox_input_required');
    const held = await buy('sandbox_instant', { approval: 'required' });
    await item(page, asked.id).waitFor({ timeout: 20_000 });
    await item(page, held.id).waitFor({ timeout: 20_000 });
    await expect(item(page, held.id).locator('.kind').textContent()).resolves.toBe('Spend approval');
    await expect(item(page, asked.id).locator('.kind').textContent()).resolves.toBe('Seller asks');
    await screenshot(page, 'inbox');

    await item(page, asked.id).getByLabel(/^Message/).fill('IO signed by finance');
    await item(page, asked.id).getByRole('button', { name: 'Approve', exact: true }).click();
    await page.waitForURL(/\/inbox\?notice=answered/);
    await expect(page.getByRole('status').filter({ hasText: 'Your answer was taken' }).count()).resolves.toBe(1);

    await page.goto(`${server.serve.url}/operations/${asked.id}`);
    await page.locator('#operation h1 [data-status="completed"]').waitFor({ timeout: 30_000 });
    const answered = page.locator('table.timeline tr[data-event-kind="answered"]');
    await expect(answered.locator('td.actor').textContent()).resolves.toBe('trader');
    await expect(answered.textContent()).resolves.toContain('IO signed by finance');
    expect((await show(asked.id)).result.media_buy_id).toMatch(/^mb_/);
  });

  it('rejects a spend approval from the page with a reason: it ends rejected and never reaches the seller', async () => {
    const held = await buy('sandbox_instant', { approval: 'required' });
    const page = await pageAs(traderKey);
    await page.goto(`${server.serve.url}/inbox`);
    await item(page, held.id).waitFor();

    // The API's rule holds here too: turning down spend needs a reason.
    await item(page, held.id).getByRole('button', { name: 'Reject' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('rejecting a spend approval needs a message saying why');
    // A held buy was never sent: it waits in `requested`.
    expect(await show(held.id)).toMatchObject({ status: 'requested', needs_input: true });

    await page.goto(`${server.serve.url}/inbox`);
    await item(page, held.id).getByLabel(/^Message/).fill('over the quarter’s budget');
    await item(page, held.id).getByRole('button', { name: 'Reject' }).click();
    await page.waitForURL(/\/inbox\?notice=answered/);
    expect(await item(page, held.id).count()).toBe(0);

    const op = await show(held.id);
    expect(op.status).toBe('rejected');
    expect(op.task_id).toBeNull();
    expect(op.events.some((e: { to: string | null }) => e.to === 'calling_adcp')).toBe(false);
    expect(op.events.find((e: { kind: string }) => e.kind === 'answered')).toMatchObject({ actor: 'trader', detail: { decision: 'reject', message: 'over the quarter’s budget' } });
    expect(sellerSaw(held.idempotency_key)).toBe(0);

    // Approving the other one sends it, once.
    const approved = await buy('sandbox_instant', { approval: 'required' });
    await page.goto(`${server.serve.url}/operations/${approved.id}`);
    await page.getByRole('button', { name: 'Approve and send' }).click();
    await page.locator('#operation h1 [data-status="completed"]').waitFor({ timeout: 30_000 });
    expect(seller.stats().mediaBuysCreatedByKey[approved.idempotency_key]).toBe(1);
  });

  it("shows the seller's own reason and message, and a reject from the inbox answers the question shown", async () => {
    const res = await server.api(server.adminKey, 'POST', '/v1/media-buys', { agent_id: mcpAgent, request: mediaBuyRequest('sandbox_input_required_untracked') });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const asked = res.body as { id: string; idempotency_key: string; input_request: { id: string; message: string } };
    const page = await pageAs(traderKey);
    await page.goto(`${server.serve.url}/inbox`);
    const card = item(page, asked.id);
    await card.waitFor({ timeout: 20_000 });
    await expect(card.locator('.reason').textContent()).resolves.toBe('Reason: APPROVAL_REQUIRED (seller status input-required)');
    await expect(card.locator('.message').textContent()).resolves.toBe(asked.input_request.message);
    // Every form says which question it answers.
    const named = await card.locator('input[name="question_id"]').evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).value));
    expect(named.length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(new Set([asked.input_request.id]));

    await card.getByLabel(/^Message/).fill('not this flight');
    await card.getByRole('button', { name: 'Reject' }).click();
    await page.waitForURL(/\/inbox\?notice=answered/);
    const op = await show(asked.id);
    expect(op.status).toBe('rejected');
    expect(op.events.find((e: { kind: string }) => e.kind === 'answered')).toMatchObject({ actor: 'trader', detail: { decision: 'reject', question_id: asked.input_request.id } });
    // Sent once: the question was waited on, never resent.
    expect(seller.stats().calls.filter((c) => c.tool === 'create_media_buy' && c.idempotency_key === asked.idempotency_key)).toHaveLength(1);

    // The operation's own page shows the reason too.
    const other = await server.api(server.adminKey, 'POST', '/v1/media-buys', { agent_id: mcpAgent, request: mediaBuyRequest('sandbox_input_required_untracked') });
    await page.goto(`${server.serve.url}/operations/${other.body.id}`);
    await expect(page.locator('section.waiting .reason').textContent()).resolves.toBe('Reason: APPROVAL_REQUIRED (seller status input-required)');
  });

  it('shows a viewer no answer button, and refuses a forged answer posted with its session', async () => {
    const held = await buy('sandbox_instant', { approval: 'required' });
    const page = await pageAs(viewerKey);
    await page.goto(`${server.serve.url}/inbox`);
    await item(page, held.id).waitFor();
    expect(await page.getByRole('button', { name: /approve|reject|send/i }).count()).toBe(0);
    await expect(item(page, held.id).locator('.role-note').textContent()).resolves.toBe('Answering needs the approver role; you are signed in as viewer.');

    const forged = await page.evaluate(async (id) => {
      const csrf = (document.querySelector('input[name="_csrf"]') as HTMLInputElement).value;
      const res = await fetch(`/operations/${id}/input`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrf, decision: 'approve', return_to: 'inbox' }),
      });
      return { status: res.status, text: await res.text() };
    }, held.id);
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('This action needs the approver role; key &#39;auditor&#39; has viewer. Nothing was changed.');
    const op = await show(held.id);
    expect(op).toMatchObject({ status: 'requested', needs_input: true });
    expect(sellerSaw(held.idempotency_key)).toBe(0);
  });
});
