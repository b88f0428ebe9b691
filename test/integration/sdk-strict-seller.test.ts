/**
 * The orchestrator's main flows against a second seller built directly on
 * @adcp/sdk's server with strict request and response validation and nothing
 * of our sandbox (test/helpers/sdk-seller). Our sandbox seller once took a
 * request every real seller refuses; here the SDK's own validator judges every
 * call, so a drift between what we send and the AdCP schema fails a test, and
 * each test ends by checking that every call the seller received passed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SUBMITTED_PRODUCT, SYNC_PRODUCT } from '../helpers/sdk-seller/catalog.js';
import type { SdkSeller, SdkSellerOptions } from '../helpers/sdk-seller/index.js';
import { eventually, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { buyOfOperation, buyThrough, expectAllRequestsValid, startStrictOrchestrator, startStrictSeller, strictBuyRequest } from '../helpers/sdk-strict-stack.js';

let orch: TestOrchestrator;
let seller: SdkSeller | undefined;
beforeAll(async () => {
  // Creative reviews are asked for often, so a review decided by the seller is seen within the test.
  orch = await startStrictOrchestrator({ ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: '200' });
});
afterEach(async () => {
  await seller?.close();
  seller = undefined;
});
afterAll(async () => {
  await orch?.close();
});

async function withSeller(opts: SdkSellerOptions = {}): Promise<{ seller: SdkSeller; agentId: string }> {
  const started = await startStrictSeller(orch, opts);
  seller = started.seller;
  return started;
}

const transitions = (op: any): Array<[string, string]> => op.events.filter((e: any) => e.kind === 'transition').map((e: any) => [e.to, e.source]);

describe('the orchestrator against a strict SDK seller', () => {
  it('reads products, buys at once, and takes the HMAC-signed delivery report into the buy', async () => {
    const { seller, agentId } = await withSeller();
    const products = await orch.api('POST', '/v1/operations', { agent_id: agentId, task: 'get_products', params: { buying_mode: 'brief', brief: 'display for a spring launch' } });
    expect(products.status).toBe(202);
    const read = await waitForStatus(orch, products.body.id, ['completed', 'failed']);
    expect(read.status, JSON.stringify(read.error)).toBe('completed');

    const op = await buyThrough(orch, { agent_id: agentId, request: strictBuyRequest(SYNC_PRODUCT), reporting: { frequency: 'hourly' } });
    expect(op.status, JSON.stringify(op.error)).toBe('completed');
    const buy = await buyOfOperation(orch, op.id);
    expect(buy).toMatchObject({ status: 'active', reports: { webhook: 'hmac', frequency: 'hourly' } });

    // What the seller was sent: our reporting webhook, authenticated as the 3.0 schema requires.
    const [create] = seller.log.of('create_media_buy');
    expect(create!.args.reporting_webhook).toMatchObject({ reporting_frequency: 'hourly', authentication: { schemes: ['HMAC-SHA256'] } });

    const fire = await seller.reporting.fire(buy.media_buy_id);
    expect([fire.status, fire.response]).toEqual([200, expect.stringContaining('accepted')]);
    const reported = await eventually(async () => {
      const b = (await orch.api('GET', `/v1/media-buys/${buy.id}`)).body;
      return b.reports.received === 1 ? b : undefined;
    });
    expect(reported.delivery).toMatchObject({ spend: 400, impressions: 40_000, source: 'webhook' });
    expect(reported.reports).toMatchObject({ last_sequence: 1, missing: 0 });

    // A refresh reads the buy's status and delivery from the seller.
    const refresh = await orch.api('POST', `/v1/media-buys/${buy.id}/refresh`);
    expect(refresh.status, JSON.stringify(refresh.body)).toBe(202);
    for (const read of refresh.body.operations as any[]) {
      const done = await waitForStatus(orch, read.id, ['completed', 'failed']);
      expect([done.type, done.status, done.error]).toEqual([read.type, 'completed', null]);
    }

    expectAllRequestsValid(seller, ['get_products', 'create_media_buy', 'get_media_buys', 'get_media_buy_delivery']);
  });

  it('follows a submitted create to its completion by the seller’s RFC 9421-signed webhook', async () => {
    const { seller, agentId } = await withSeller({ submittedDelayMs: 300 });
    const op = await buyThrough(orch, { agent_id: agentId, request: strictBuyRequest(SUBMITTED_PRODUCT) });
    expect(op.status, JSON.stringify(op.error)).toBe('completed');
    expect(transitions(op)).toEqual([
      ['calling_adcp', 'call'],
      ['submitted', 'call'],
      ['completed', 'webhook'],
    ]);
    expect(op.result.media_buy_id).toMatch(/^mb_/);
    await seller.tasks.settled();
    expect(seller.pushes.records().map((p) => [p.status, p.delivered, p.final_status])).toEqual([['completed', true, 200]]);
    const buy = await buyOfOperation(orch, op.id);
    expect(buy.media_buy_id).toBe(op.result.media_buy_id);

    expectAllRequestsValid(seller, ['create_media_buy']);
  });

  it('takes the completion webhook signed with the legacy HMAC the request asked for (webhook: hmac)', async () => {
    const { seller, agentId } = await withSeller({ submittedDelayMs: 300 });
    const op = await buyThrough(orch, { agent_id: agentId, request: strictBuyRequest(SUBMITTED_PRODUCT), webhook: 'hmac' });
    expect(op.status, JSON.stringify(op.error)).toBe('completed');
    expect(transitions(op).at(-1)).toEqual(['completed', 'webhook']);
    const [create] = seller.log.of('create_media_buy');
    expect(create!.args.push_notification_config).toMatchObject({ authentication: { schemes: ['HMAC-SHA256'] } });
    await seller.tasks.settled();
    expect(seller.pushes.records().map((p) => [p.delivered, p.final_status])).toEqual([[true, 200]]);

    expectAllRequestsValid(seller, ['create_media_buy']);
  });

  it('follows a submitted create without a webhook by polling tasks/get, and reconciles with tasks/list', async () => {
    const { seller, agentId } = await withSeller({ submittedDelayMs: 300 });
    const op = await buyThrough(orch, { agent_id: agentId, request: strictBuyRequest(SUBMITTED_PRODUCT), webhook: 'none' });
    expect(op.status, JSON.stringify(op.error)).toBe('completed');
    expect(transitions(op).at(-1)).toEqual(['completed', 'poll']);
    expect(seller.log.of('tasks/get').length).toBeGreaterThan(0);
    expect(seller.pushes.records()).toEqual([]);

    const reconciled = await orch.api('POST', '/v1/reconcile', { agent_id: agentId });
    expect(reconciled.status).toBe(200);
    expect(reconciled.body.reports[0], JSON.stringify(reconciled.body)).not.toHaveProperty('error');

    expectAllRequestsValid(seller, ['create_media_buy', 'tasks/get', 'tasks/list']);
  });

  it('resends a create whose reply was lost with the same key and payload: the SDK’s idempotency store replays it, one buy', async () => {
    const { seller, agentId } = await withSeller();
    seller.faults.dropReplies('create_media_buy');
    const op = await buyThrough(orch, { agent_id: agentId, request: strictBuyRequest(SYNC_PRODUCT), reporting: { frequency: 'daily' } });
    expect(op.status, JSON.stringify(op.error)).toBe('completed');
    const creates = seller.log.of('create_media_buy');
    expect(creates.length).toBeGreaterThanOrEqual(2);
    // Every resend was the first request again: replayed, never IDEMPOTENCY_CONFLICT.
    expect(new Set(creates.map((c) => c.args.idempotency_key)).size).toBe(1);
    expect(creates.slice(1).map((c) => [c.errorCode ?? null, c.replayed ?? false])).toEqual(creates.slice(1).map(() => [null, true]));
    expect(seller.book.all()).toHaveLength(1);
    expect(op.result.media_buy_id).toBe(seller.book.all()[0]!.media_buy_id);

    expectAllRequestsValid(seller, ['create_media_buy']);
  });

  it('sends creatives to a live buy (sync_creatives) and follows their review to approval', async () => {
    const { seller, agentId } = await withSeller({ creativeReviewMs: 200 });
    const op = await buyThrough(orch, { agent_id: agentId, request: strictBuyRequest(SYNC_PRODUCT) });
    expect(op.status, JSON.stringify(op.error)).toBe('completed');
    const buy = await buyOfOperation(orch, op.id);
    const packageId = buy.packages[0].package_id as string;

    const sent = await orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, {
      creatives: [
        {
          creative_id: 'cr_spring',
          name: 'Spring banner',
          format_id: { agent_url: seller.url, id: 'display_300x250' },
          assets: { image: { asset_type: 'image', url: 'https://cdn.example/spring.png', width: 300, height: 250 } },
        },
      ],
      assignments: [{ creative_id: 'cr_spring', package_id: packageId }],
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const synced = await waitForStatus(orch, sent.body.id, ['completed', 'failed']);
    expect(synced.status, JSON.stringify(synced.error)).toBe('completed');

    const approved = await eventually(async () => {
      const b = (await orch.api('GET', `/v1/media-buys/${buy.id}`)).body;
      const c = (b.creatives as any[]).find((x) => x.creative_id === 'cr_spring');
      return c?.status === 'approved' ? c : undefined;
    });
    expect(approved).toMatchObject({ package_ids: [packageId], sync: { state: 'synced' } });
    expect(seller.creatives.get('id:acc_sdk', 'cr_spring')?.packages.has(packageId)).toBe(true);

    expectAllRequestsValid(seller, ['create_media_buy', 'sync_creatives']);
  });

  it('pauses and resumes a live buy at the seller', async () => {
    const { seller, agentId } = await withSeller();
    const op = await buyThrough(orch, { agent_id: agentId, request: strictBuyRequest(SYNC_PRODUCT) });
    expect(op.status, JSON.stringify(op.error)).toBe('completed');
    const buy = await buyOfOperation(orch, op.id);

    const pause = await orch.api('POST', `/v1/media-buys/${buy.id}/pause`);
    expect(pause.status, JSON.stringify(pause.body)).toBe(202);
    expect((await waitForStatus(orch, pause.body.id, ['completed', 'failed'])).status).toBe('completed');
    expect(seller.book.get(buy.media_buy_id)!.status).toBe('paused');
    await eventually(async () => ((await orch.api('GET', `/v1/media-buys/${buy.id}`)).body.status === 'paused' ? true : undefined));

    const resume = await orch.api('POST', `/v1/media-buys/${buy.id}/resume`);
    expect(resume.status, JSON.stringify(resume.body)).toBe(202);
    expect((await waitForStatus(orch, resume.body.id, ['completed', 'failed'])).status).toBe('completed');
    expect(seller.book.get(buy.media_buy_id)!.status).toBe('active');
    await eventually(async () => ((await orch.api('GET', `/v1/media-buys/${buy.id}`)).body.status === 'active' ? true : undefined));

    expect(seller.log.of('update_media_buy').map((c) => c.args.paused)).toEqual([true, false]);
    expectAllRequestsValid(seller, ['create_media_buy', 'update_media_buy']);
  });

  it('cancels a completed buy at the seller', async () => {
    const { seller, agentId } = await withSeller();
    const op = await buyThrough(orch, { agent_id: agentId, request: strictBuyRequest(SYNC_PRODUCT) });
    expect(op.status, JSON.stringify(op.error)).toBe('completed');
    const buy = await buyOfOperation(orch, op.id);

    const cancel = await orch.api('POST', `/v1/operations/${op.id}/cancel`, { reason: 'campaign pulled' });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(202);
    const child = await eventually(async () => {
      const children = (await orch.api('GET', `/v1/operations?type=update_media_buy&limit=50`)).body.operations as any[];
      const mine = children.find((c) => c.parent_id === op.id);
      return mine && ['completed', 'failed'].includes(mine.status) ? mine : undefined;
    });
    expect(child.status, JSON.stringify(child.error)).toBe('completed');
    expect(seller.book.get(buy.media_buy_id)).toMatchObject({ status: 'canceled', canceled: { reason: 'campaign pulled' } });
    await eventually(async () => ((await orch.api('GET', `/v1/media-buys/${buy.id}`)).body.status === 'canceled' ? true : undefined));

    expectAllRequestsValid(seller, ['create_media_buy', 'update_media_buy']);
  });
});
