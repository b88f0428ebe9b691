/**
 * The orchestrator against the sandbox seller speaking AdCP 3.1 (adcpVersion: '3.1'),
 * registered through the API as a user registers one, so its capabilities are asked:
 * it is spoken to in 3.1 (every request pinned `adcp_major_version: 3`,
 * `adcp_version: "3.1"`, every one valid for the 3.1.19 schemas as the seller checks
 * them); a create answered `completed` with `media_buy_status: "pending_creatives"`
 * makes a buy waiting for creatives that takes them; a submitted create is polled with
 * `get_task_status` (asking for the result) or completed by a 3.1 webhook, and
 * reconciliation lists with `list_tasks`. The seller serves no 3.0 task tool, and its
 * call log shows none was asked for.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { displayCreative } from '../helpers/creatives.js';
import { buyLive, buyWhen, LIVE_BUY_ENV, liveBuyRequest } from '../helpers/live-buys.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';

let seller: SandboxSeller | undefined;
let orch: TestOrchestrator | undefined;
afterEach(async () => {
  await orch?.close();
  await seller?.close();
  orch = seller = undefined;
});

const OLD_TASK_TOOLS = ['tasks/get', 'tasks_get', 'tasks/list'];

async function start(sellerOpts: Parameters<typeof startSandboxSeller>[0] = {}, env: Record<string, string> = {}) {
  seller = await startSandboxSeller({ adcpVersion: '3.1', reportClock: false, statusStepMs: 0, flightPeriods: 8, ...sellerOpts });
  orch = await startOrchestrator({ env: { ...LIVE_BUY_ENV, ...env } });
  const res = await orch.api('POST', '/v1/agents', { name: 'seller-31', role: 'seller', protocol: 'mcp', url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
  expect(res.status).toBe(201);
  return { seller, orch, agent: res.body };
}

/** Every call the seller took was pinned to 3.1 and valid for its 3.1.19 schema; none was a 3.0 task tool. */
function expectSpokenIn31(s: SandboxSeller): void {
  const calls = s.stats().calls;
  expect(calls.length).toBeGreaterThan(0);
  for (const c of calls) {
    expect({ tool: c.tool, major: c.args.adcp_major_version, release: c.args.adcp_version, valid: c.valid, issues: c.issues }).toEqual({
      tool: c.tool,
      major: 3,
      release: '3.1',
      valid: true,
      issues: undefined,
    });
  }
  expect(calls.filter((c) => OLD_TASK_TOOLS.includes(c.tool))).toEqual([]);
  expect(s.stats().pollLog.filter((p) => OLD_TASK_TOOLS.includes(p.tool))).toEqual([]);
}

describe('a seller speaking AdCP 3.1', () => {
  it('is asked for its capabilities at registration and spoken to in 3.1', async () => {
    const { agent } = await start();
    expect(agent).toMatchObject({
      adcp_version: '3.1',
      capabilities_error: null,
      capabilities: {
        adcp: { major_versions: [3], supported_versions: ['3.0', '3.1'], idempotency: { supported: true, replay_ttl_seconds: 86400 } },
        media_buy: { governance_aware: false },
        webhook_signing: { supported: true },
      },
    });
  });

  it('a create answered completed with media_buy_status pending_creatives makes a buy waiting for creatives, which takes them', async () => {
    const { seller: s, orch: o, agent } = await start({ reportClock: true, statusStepMs: 100, reportIntervalMs: 600_000, creativeReviewMs: 300 }, {
      ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: '200',
      ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: '300',
    });
    const buy = await buyLive(o, agent.id, {}, ['sandbox_awaiting_creatives']);
    // The seller's own words: the task completed, the buy waits for creatives.
    const op = (await o.api('GET', `/v1/operations/${buy.operation_id}`)).body;
    expect(op.result).toMatchObject({ status: 'completed', media_buy_status: 'pending_creatives', adcp_version: '3.1' });
    expect(buy.status).toBe('pending_creatives');

    const packageId = buy.packages[0].package_id;
    const sent = await o.api('POST', `/v1/media-buys/${buy.id}/creatives`, {
      creatives: [displayCreative('cr_31', 'Banner for a 3.1 seller', s.url)],
      assignments: [{ creative_id: 'cr_31', package_id: packageId }],
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    expect(sent.body).toMatchObject({ type: 'sync_creatives', status: 'completed' });
    const moved = await buyWhen(o, buy.id, (b) => b.status === 'active');
    expect(moved.creatives[0]).toMatchObject({ creative_id: 'cr_31', status: 'approved' });
    expect(s.reporting.buy(buy.media_buy_id)!.history.map((h) => h.action)).toEqual(['created', 'creatives_approved', 'activated']);
    expectSpokenIn31(s);
  });

  it('a submitted create is polled with get_task_status for its result; reconciliation lists with list_tasks', async () => {
    const { seller: s, orch: o, agent } = await start({ submittedDelayMs: 400 });
    const created = await o.api('POST', '/v1/media-buys', { agent_id: agent.id, request: liveBuyRequest(['sandbox_submitted']), webhook: 'none' });
    expect(created.status).toBe(202);
    const done = await waitForStatus(o, created.body.id, ['completed']);
    expect(done.result).toMatchObject({ media_buy_id: expect.stringMatching(/^mb_/), media_buy_status: 'pending_creatives' });
    const polls = s.stats().calls.filter((c) => c.tool === 'get_task_status');
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((c) => c.args.task_id === done.task_id && c.args.include_result === true)).toBe(true);
    const buy = await eventually(async () => (await o.api('GET', '/v1/media-buys?limit=50')).body.media_buys.find((b: any) => b.operation_id === created.body.id));
    expect(buy.status).toBe('pending_creatives');

    // A task the buyer never heard of is found by listing.
    const orphan = s.createTaskBehindBuyersBack();
    const report = await o.api('POST', '/v1/reconcile', { agent_id: agent.id });
    expect(report.status).toBe(200);
    expect(report.body.reports[0]).toMatchObject({ agent_id: agent.id, orphaned_on_server: [orphan] });
    expect(s.stats().calls.filter((c) => c.tool === 'list_tasks').length).toBeGreaterThan(0);
    expectSpokenIn31(s);
  });

  it('a submitted create completes by its 3.1 webhook', async () => {
    const { seller: s, orch: o, agent } = await start({ submittedDelayMs: 300 });
    const created = await o.api('POST', '/v1/media-buys', { agent_id: agent.id, request: liveBuyRequest(['sandbox_submitted']) });
    expect(created.status).toBe(202);
    const done = await waitForStatus(o, created.body.id, ['completed']);
    expect(done.events.some((e: any) => e.kind === 'transition' && e.to === 'completed' && e.source === 'webhook')).toBe(true);
    await s.webhooksSettled();
    const [hook] = s.stats().webhooks;
    expect(hook).toMatchObject({ task_id: done.task_id, status: 'completed', delivered: true });
    const push = s.stats().calls.find((c) => c.tool === 'create_media_buy')!.args.push_notification_config as Record<string, unknown>;
    expect(push.operation_id).toEqual(expect.any(String));
    expect(done.result).toMatchObject({ status: 'completed', media_buy_status: 'pending_creatives' });
    expectSpokenIn31(s);
  });
});
