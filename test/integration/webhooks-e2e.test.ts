/**
 * End to end over loopback: the sandbox seller sends real signed webhooks
 * (RFC 9421 with its published keys, or legacy HMAC with the per-operation
 * secret we minted) to the orchestrator's receiver.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller, type SandboxSellerOptions } from '../../src/sandbox/seller.js';
import { mediaBuyRequest, statusPath } from '../helpers/media-buy.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';

let seller: SandboxSeller | undefined;
let orch: TestOrchestrator | undefined;

afterEach(async () => {
  await orch?.close();
  await seller?.close();
  orch = seller = undefined;
});

async function setUp(sellerOpts: SandboxSellerOptions, env: Record<string, string> = {}) {
  seller = await startSandboxSeller({ submittedDelayMs: 300, ...sellerOpts });
  orch = await startOrchestrator({ env });
  const agentId = await orch.registerAgent({ url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
  return { seller, orch, agentId };
}

const webhookMetric = async (o: TestOrchestrator, outcome: string) => {
  const text = await (await fetch(`${o.url}/metrics`)).text();
  const m = new RegExp(`adcp_orch_webhooks_received_total\\{outcome="${outcome}"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
};

describe.each(['rfc9421', 'hmac'] as const)('webhooks signed with %s', (mode) => {
  it('a submitted media buy is completed by the webhook alone, never polled', async () => {
    const { seller, orch, agentId } = await setUp({});
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_submitted'), webhook: mode });
    expect(created.body.status).toBe('submitted');
    // The URL's token is for the seller only: the API shows where, not which.
    expect(created.body.request.push_notification_config.url).toBe(`${orch.config.ADCP_ORCH_PUBLIC_URL}/webhooks/adcp/[redacted]`);
    if (mode === 'hmac') {
      expect(created.body.request.push_notification_config.authentication).toEqual({ schemes: ['HMAC-SHA256'], credentials: '[redacted]' });
    } else {
      expect(created.body.request.push_notification_config.authentication).toBeUndefined();
    }
    const done = await waitForStatus(orch, created.body.id, ['completed']);
    expect(statusPath(done)).toEqual(['requested', 'calling_adcp', 'submitted', 'completed']);
    expect(done.events.at(-1).source).toBe('webhook');
    expect(done.result.media_buy_id).toMatch(/^mb_/);
    expect(seller.stats().pollsByTask[created.body.task_id] ?? 0).toBe(0);
    expect(seller.stats().webhooks.filter((w) => w.task_id === created.body.task_id).every((w) => w.auth === mode)).toBe(true);
    expect(await webhookMetric(orch, 'accepted')).toBeGreaterThanOrEqual(1);
  });
});

describe('webhooks with backup polling', () => {
  it('a lost webhook is made up for by backup polling after the quiet period', async () => {
    const { seller, orch, agentId } = await setUp({ dropWebhooks: true }, { ADCP_ORCH_BACKUP_POLL_AFTER_MS: '800' });
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_submitted'), webhook: 'rfc9421' });
    const done = await waitForStatus(orch, created.body.id, ['completed']);
    expect(done.events.at(-1).source).toBe('poll');
    // The first poll waited for the quiet period, not the (much shorter) polling interval.
    const firstPoll = seller.stats().pollLog.find((p) => p.task_id === created.body.task_id)!;
    expect(Date.parse(firstPoll.at) - Date.parse(created.body.created_at)).toBeGreaterThanOrEqual(800);
    expect(seller.stats().webhooks.some((w) => w.dropped)).toBe(true);
  });

  it('a duplicated delivery is applied once', async () => {
    const { seller, orch, agentId } = await setUp({ duplicateWebhooks: true });
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_submitted'), webhook: 'rfc9421' });
    const done = await waitForStatus(orch, created.body.id, ['completed']);
    await seller.webhooksSettled();
    const after = (await orch.api('GET', `/v1/operations/${created.body.id}`)).body;
    expect(after.events.filter((e: any) => e.to === 'completed')).toHaveLength(1);
    expect(after.events).toHaveLength(done.events.length);
    expect(await webhookMetric(orch, 'duplicate')).toBeGreaterThanOrEqual(1);
    const deliveries = await orch.app.store.db.kysely.selectFrom('webhook_deliveries').selectAll().where('operation_id', '=', created.body.id).execute();
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0].state).toBe('applied');
  });

  it('two deliveries out of order converge on the newer state', async () => {
    const { seller, orch, agentId } = await setUp({});
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_input_required'), webhook: 'rfc9421' });
    expect(created.body.status).toBe('input-required');
    const taskId = created.body.task_id;
    const t0 = Date.now();
    // The newer report (working) goes out first, the older one (submitted) after it.
    seller.sendWebhook(taskId, { status: 'working', timestamp: new Date(t0 + 2000).toISOString() });
    await seller.webhooksSettled();
    seller.sendWebhook(taskId, { status: 'submitted', timestamp: new Date(t0 + 1000).toISOString() });
    await seller.webhooksSettled();
    const op = (await orch.api('GET', `/v1/operations/${created.body.id}`)).body;
    expect(op.status).toBe('working');
    expect(statusPath(op)).toEqual(['requested', 'calling_adcp', 'input-required', 'working']);
    expect(await webhookMetric(orch, 'stale')).toBe(1);
  });

  it('a terminal delivery beats a late older one, and a poll seeing the same terminal adds nothing', async () => {
    const { seller, orch, agentId } = await setUp({}, { ADCP_ORCH_BACKUP_POLL_AFTER_MS: '60000' });
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_input_required'), webhook: 'rfc9421' });
    const taskId = created.body.task_id;
    seller.setTaskStatus(taskId, 'completed', { result: { media_buy_id: 'mb_final', packages: [] } });
    await waitForStatus(orch, created.body.id, ['completed']);
    seller.sendWebhook(taskId, { status: 'working', timestamp: new Date(Date.now() - 60_000).toISOString() });
    await seller.webhooksSettled();
    // A poll after the fact (the engine's own poll path) reports the same terminal.
    const row = (await orch.app.store.operations.get(created.body.id))!;
    await orch.app.operations.observe(row.id, null, { status: 'completed', source: 'poll', data: { media_buy_id: 'mb_final', packages: [] } });
    const op = (await orch.api('GET', `/v1/operations/${created.body.id}`)).body;
    expect(op.status).toBe('completed');
    expect(op.result.media_buy_id).toBe('mb_final');
    expect(op.events.filter((e: any) => e.to === 'completed')).toHaveLength(1);
    expect(op.events.filter((e: any) => e.kind === 'conflict')).toHaveLength(0);
  });

  it('a different terminal after the first is recorded as a conflict and changes nothing', async () => {
    const { seller, orch, agentId } = await setUp({});
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_input_required'), webhook: 'rfc9421' });
    const taskId = created.body.task_id;
    seller.sendWebhook(taskId, { status: 'completed', result: { media_buy_id: 'mb_first', packages: [] } });
    await seller.webhooksSettled();
    seller.sendWebhook(taskId, { status: 'failed', message: 'changed its mind' });
    await seller.webhooksSettled();
    const op = await eventually(async () => {
      const o = (await orch!.api('GET', `/v1/operations/${created.body.id}`)).body;
      return o.events.some((e: any) => e.kind === 'conflict') ? o : undefined;
    });
    expect(op.status).toBe('completed');
    expect(op.result.media_buy_id).toBe('mb_first');
    expect(op.events.find((e: any) => e.kind === 'conflict')).toMatchObject({ from: 'completed', to: 'failed' });
    const metrics = await (await fetch(`${orch!.url}/metrics`)).text();
    expect(metrics).toMatch(/adcp_orch_terminal_conflicts_total\{type="create_media_buy"\} 1/);
  });
});
