/**
 * Creatives refused before anything is stored or sent (README, Creatives): no ids,
 * assignments to another buy's package, another tenant's buy, a role that may not
 * send, an ended buy; a person's bad correction leaves the inbox item waiting.
 * Each refusal is a clear 4xx with its code, and the seller hears nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayCreative, operationWhen } from '../helpers/creatives.js';
import { buyLive, buyWhen, startLiveBuyStack, type LiveBuyStack } from '../helpers/live-buys.js';

let stack: LiveBuyStack;
let buy: any;
let otherBuy: any;

beforeAll(async () => {
  stack = await startLiveBuyStack({ seller: { creativeReviewMs: 100 }, env: { ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: '200' } });
  buy = await buyLive(stack.orch, stack.agentId);
  otherBuy = await buyLive(stack.orch, stack.agentId);
});
afterAll(async () => {
  await stack?.close();
});

const syncCalls = () => stack.seller.stats().calls.filter((c) => c.tool === 'sync_creatives').length;
const syncOperations = async () => (await stack.orch.api('GET', '/v1/operations?type=sync_creatives')).body.operations.length;

/** Sends, then checks nothing reached the seller or the store. */
async function refused(path: string, body: unknown, status: number, code: string, headers: Record<string, string> = {}) {
  const [calls, ops] = [syncCalls(), await syncOperations()];
  const res = await stack.orch.api('POST', path, body, headers);
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(syncCalls()).toBe(calls);
  expect(await syncOperations()).toBe(ops);
  return res.body.error;
}

describe('POST /v1/media-buys/:id/creatives refuses', () => {
  it('creatives without ids, or twice the same id', async () => {
    const { creative_id: _id, ...nameless } = displayCreative('x', 'No id', stack.seller.url);
    const error = await refused(`/v1/media-buys/${buy.id}/creatives`, { creatives: [displayCreative('ok', 'Fine', stack.seller.url), nameless] }, 400, 'creative_id_required');
    expect(error.message).toContain('creatives[1]');
    await refused(`/v1/media-buys/${buy.id}/creatives`, { creatives: [displayCreative('a', 'A', stack.seller.url), displayCreative('a', 'A again', stack.seller.url)] }, 400, 'duplicate_creative_id');
    await refused(`/v1/media-buys/${buy.id}/creatives`, { creatives: [] }, 400, 'invalid_request');
    expect((await stack.orch.api('GET', `/v1/media-buys/${buy.id}`)).body.creatives).toEqual([]);
  });

  it('an assignment to a package of another buy, or of a creative not sent', async () => {
    const foreign = otherBuy.packages[0].package_id;
    const error = await refused(
      `/v1/media-buys/${buy.id}/creatives`,
      { creatives: [displayCreative('cr_a', 'A', stack.seller.url)], assignments: [{ creative_id: 'cr_a', package_id: foreign }] },
      400,
      'unknown_package',
    );
    expect(error.details).toMatchObject({ package_id: foreign, packages: [buy.packages[0].package_id] });
    await refused(
      `/v1/media-buys/${buy.id}/creatives`,
      { creatives: [displayCreative('cr_a', 'A', stack.seller.url)], assignments: [{ creative_id: 'cr_other', package_id: buy.packages[0].package_id }] },
      400,
      'unknown_creative',
    );
  });

  it("another tenant's buy (404), a viewer (403), an unknown buy (404)", async () => {
    const other = await stack.orch.app.store.tenants.ensureTenant('other-tenant');
    const otherKey = await stack.orch.app.store.tenants.createApiKey(other.id);
    const body = { creatives: [displayCreative('cr_t', 'T', stack.seller.url)] };
    await refused(`/v1/media-buys/${buy.id}/creatives`, body, 404, 'media_buy_not_found', { authorization: `Bearer ${otherKey}` });
    const viewer = await stack.orch.app.store.tenants.createApiKey(stack.orch.tenantId, { name: 'creative-viewer', role: 'viewer' });
    await refused(`/v1/media-buys/${buy.id}/creatives`, body, 403, 'forbidden', { authorization: `Bearer ${viewer}` });
    await refused('/v1/media-buys/buy_nope/creatives', body, 404, 'media_buy_not_found');
  });

  it('an ended buy (409)', async () => {
    const ended = await buyLive(stack.orch, stack.agentId);
    await stack.seller.reporting.rejectAsSeller(ended.media_buy_id, 'no inventory');
    await stack.orch.api('POST', `/v1/media-buys/${ended.id}/refresh`);
    await buyWhen(stack.orch, ended.id, (b) => b.status === 'rejected');
    await refused(`/v1/media-buys/${ended.id}/creatives`, { creatives: [displayCreative('cr_e', 'E', stack.seller.url)] }, 409, 'media_buy_ended');
  });
});

describe('a bad correction of a rejected creative', () => {
  it('is refused and leaves the inbox item waiting, nothing sent', async () => {
    const sent = await stack.orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, {
      creatives: [displayCreative('cr_r', 'Reject this one', stack.seller.url)],
      assignments: [{ creative_id: 'cr_r', package_id: buy.packages[0].package_id }],
    });
    expect(sent.status).toBe(202);
    const waiting = await operationWhen(stack.orch, sent.body.id, (op) => op.needs_input === true);
    const path = `/v1/operations/${sent.body.id}/input`;
    const { creative_id: _id, ...nameless } = displayCreative('x', 'Fixed', stack.seller.url);
    await refused(path, { decision: 'respond', question_id: waiting.input_request.id, params: { creatives: [nameless] } }, 400, 'creative_id_required');
    await refused(
      path,
      { decision: 'respond', question_id: waiting.input_request.id, params: { creatives: [displayCreative('cr_r', 'Fixed', stack.seller.url)], assignments: [{ creative_id: 'cr_r', package_id: otherBuy.packages[0].package_id }] } },
      400,
      'unknown_package',
    );
    await refused(path, { decision: 'respond', question_id: waiting.input_request.id, params: { creatives: [displayCreative('cr_r', 'Fixed', stack.seller.url)], brand: { domain: 'x.example' } } }, 400, 'unsupported_params');
    await refused(path, { decision: 'approve', question_id: waiting.input_request.id }, 409, 'decision_not_allowed');
    const still = (await stack.orch.api('GET', `/v1/operations/${sent.body.id}`)).body;
    expect(still).toMatchObject({ needs_input: true, input_request: { id: waiting.input_request.id } });
    expect(still.events.filter((e: any) => e.kind === 'answered')).toEqual([]);
  });
});

describe('a retried send', () => {
  it('under the same Idempotency-Key is the same operation; the seller syncs once', async () => {
    const body = { creatives: [displayCreative('cr_once', 'Once', stack.seller.url)] };
    const calls = syncCalls();
    const first = await stack.orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, body, { 'idempotency-key': 'creatives-once-1' });
    const again = await stack.orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, body, { 'idempotency-key': 'creatives-once-1' });
    expect(first.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(syncCalls()).toBe(calls + 1);
  });
});
