/**
 * What a reporting fire may not do: bad input gets a clear 4xx (never a 5xx) and
 * changes no total; what changes no meaning (an `aggregated_totals` a fire should
 * not carry) is taken. And delivery reports sent to a completed create's own
 * webhook URL (3.1 `media_buy_delivery` envelopes, Prebid's `update_media_buy`
 * ones) are applied to its buy instead of refused as a task-type conflict.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForStatus } from '../helpers/orchestrator.js';
import { bareFire, buyLive, buyOf, liveBuyRequest, postSigned, reportingChannel, settledBuy, startLiveBuyStack, type LiveBuyStack } from '../helpers/live-buys.js';

let stack: LiveBuyStack;
let buy: any;
let channel: { url: string; secret: string };

beforeAll(async () => {
  // Our own clock's rules: a period may not begin more than the default 5 minutes ahead.
  stack = await startLiveBuyStack({ env: { ADCP_ORCH_REPORT_CLOCK_SKEW_MS: '300000' } });
  buy = await buyLive(stack.orch, stack.agentId);
  channel = await reportingChannel(stack.orch, buy.id);
});
afterAll(async () => {
  await stack?.close();
});

describe('bad reporting fires', () => {
  const DAY = 86_400_000;
  const bad: Array<[string, string, string]> = [
    ['malformed JSON', '{"notification_type": "scheduled",', 'webhook_body_malformed'],
    ['a duplicate key', '{"media_buy_deliveries": [], "media_buy_deliveries": []}', 'webhook_body_malformed'],
    ['no report at all', JSON.stringify({ hello: 'world' }), 'report_body_unrecognized'],
    ['an unknown notification_type', JSON.stringify({ ...bareFire('X'), notification_type: 'hourly_digest' }), 'report_notification_type_unknown'],
    ['negative spend', JSON.stringify(bareFire('X', {}, { totals: { impressions: 10, spend: -5 } })), 'report_invalid'],
    ['a period in the future', JSON.stringify(bareFire('X', { reporting_period: { start: new Date(Date.now() + DAY).toISOString(), end: new Date(Date.now() + 2 * DAY).toISOString() } })), 'report_invalid'],
    ['a period ending before it starts', JSON.stringify(bareFire('X', { reporting_period: { start: new Date().toISOString(), end: new Date(Date.now() - DAY).toISOString() } })), 'report_invalid'],
    ['an absurd spend', JSON.stringify(bareFire('X', {}, { totals: { impressions: 10, spend: 1e15 } })), 'report_invalid'],
    ['an absurd number of rows', JSON.stringify({ ...bareFire('X'), media_buy_deliveries: Array.from({ length: 1001 }, (_, i) => ({ media_buy_id: `m${i}`, totals: { spend: 1 } })) }), 'report_invalid'],
    ['a sequence number of 0', JSON.stringify({ ...bareFire('X'), sequence_number: 0 }), 'report_invalid'],
  ];

  it.each(bad)('refuses %s with 400 and changes no total', async (_what, text, code) => {
    const before = await settledBuy(stack.orch, buy.id);
    const res = await postSigned(channel.url, channel.secret, text.replaceAll('"X"', JSON.stringify(buy.media_buy_id)));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(code);
    const after = (await stack.orch.api('GET', `/v1/media-buys/${buy.id}`)).body;
    expect(after.delivery).toEqual(before.delivery);
    expect(after.reports).toEqual(before.reports);
    // Recorded on the buy, for people to see why a report did not count.
    expect(after.events.at(-1)).toMatchObject({ kind: 'report_refused', detail: { code } });
  });

  it('refuses the wrong content type (415), a body over 1 MB (413) and an unknown URL (404)', async () => {
    const ok = JSON.stringify(bareFire(buy.media_buy_id));
    expect((await postSigned(channel.url, channel.secret, ok, { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await postSigned(channel.url, channel.secret, `{"pad":"${'x'.repeat(1024 * 1024)}"}`)).status).toBe(413);
    expect((await postSigned(`${stack.orch.url}/webhooks/adcp/reporting/${randomBytes(24).toString('base64url')}`, channel.secret, ok)).status).toBe(404);
    expect((await postSigned(channel.url, 'another-secret-of-at-least-thirty-two-bytes!', ok)).status).toBe(401);
  });

  it('takes a bare fire that carries aggregated_totals (lenient: it changes no meaning)', async () => {
    const body = bareFire(buy.media_buy_id, { sequence_number: 7, aggregated_totals: { impressions: 1000, spend: 10, media_buy_count: 1 } });
    const res = await postSigned(channel.url, channel.secret, JSON.stringify(body));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'accepted', applied: 1 });
    const after = (await stack.orch.api('GET', `/v1/media-buys/${buy.id}`)).body;
    expect(after.reports.received).toBe(1);
    expect(after.delivery.spend).toBe(10);
  });
});

describe("delivery reports at a completed create's own webhook URL", () => {
  async function hmacBuy() {
    const created = await stack.orch.api('POST', '/v1/media-buys', { agent_id: stack.agentId, request: liveBuyRequest(['sandbox_instant']), webhook: 'hmac' });
    await waitForStatus(stack.orch, created.body.id, ['completed']);
    const op = (await stack.orch.app.store.operations.get(created.body.id))!;
    return { buy: await buyOf(stack.orch, created.body.id), url: `${stack.orch.url}/webhooks/adcp/${op.webhook_token}`, secret: stack.orch.app.secrets.open(op.webhook_secret_enc!) };
  }
  // 3.1 envelopes carry an operation_id the seller minted for the report, not ours.
  const envelope = (taskType: string, result: Record<string, unknown>, operationId = 'seller-minted-operation') =>
    JSON.stringify({
      idempotency_key: `dlv_${randomBytes(12).toString('hex')}`,
      ...(operationId ? { operation_id: operationId } : {}),
      task_id: `reporting_${randomBytes(4).toString('hex')}`,
      task_type: taskType,
      status: 'completed',
      timestamp: new Date().toISOString(),
      result,
    });

  it('applies a 3.1 media_buy_delivery envelope and a Prebid-style update_media_buy one to the buy', async () => {
    const { buy: b, url, secret } = await hmacBuy();
    const first = await postSigned(url, secret, envelope('media_buy_delivery', bareFire(b.media_buy_id, { sequence_number: 1 })));
    expect(first).toMatchObject({ status: 200, body: { status: 'accepted', outcome: 'delivery_report' } });
    const prebid = bareFire(b.media_buy_id, { sequence_number: 2, aggregated_totals: { impressions: 1000, spend: 20, media_buy_count: 1 } }, { totals: { impressions: 2000, spend: 20 } });
    const second = await postSigned(url, secret, envelope('update_media_buy', prebid));
    expect(second.status).toBe(200);
    const after = (await stack.orch.api('GET', `/v1/media-buys/${b.id}`)).body;
    expect(after.reports).toMatchObject({ received: 2, last_sequence: 2 });
    // The operation itself is untouched: no conflict, still completed.
    const op = (await stack.orch.api('GET', `/v1/operations/${b.operation_id}`)).body;
    expect(op.status).toBe('completed');
    expect(op.events.some((e: any) => e.kind === 'conflict')).toBe(false);
  });

  it('still refuses another task type at that URL as a conflict', async () => {
    const { url, secret } = await hmacBuy();
    const res = await postSigned(url, secret, envelope('sync_creatives', { creatives: [] }, ''));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('webhook_task_type_conflict');
  });
});
