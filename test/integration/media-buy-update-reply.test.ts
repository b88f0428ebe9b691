/**
 * A pause's or resume's reply is applied to the buy in the commit that completes the
 * update, through the real sandbox seller: a resume asked the moment a pause has
 * completed is taken (no waiting for the status read that follows), and so is a pause
 * right after that resume.
 */
import { afterEach, expect, it } from 'vitest';
import { waitForStatus } from '../helpers/orchestrator.js';
import { buyLive, buyNotifications, buyWhen, sellerCalls, settledBuy, startLiveBuyStack, type LiveBuyStack } from '../helpers/live-buys.js';

let stack: LiveBuyStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

it('resume right after a pause completes, and pause right after that resume, are taken: the replies say what the buy is', async () => {
  stack = await startLiveBuyStack();
  const { seller, orch, agentId } = stack;
  const buy = await buyLive(orch, agentId);
  await seller.reporting.fireNow(buy.media_buy_id); // moves it active
  await buyWhen(orch, buy.id, (b) => b.status === 'active');

  const paused = await orch.api('POST', `/v1/media-buys/${buy.id}/pause`);
  expect(paused.status).toBe(202);
  await waitForStatus(orch, paused.body.id, ['completed']);
  // No sleep and no status read awaited: the buy took the pause's reply with the update's completion.
  const pausedBuy = (await orch.api('GET', `/v1/media-buys/${buy.id}`)).body;
  expect(pausedBuy.status).toBe('paused');
  expect(pausedBuy.events.find((e: any) => e.kind === 'status_changed' && e.to === 'paused')).toMatchObject({
    source: 'call',
    from: 'active',
    detail: { operation_id: paused.body.id, stated: true },
  });
  expect(pausedBuy.valid_actions).toContain('resume');

  const resumed = await orch.api('POST', `/v1/media-buys/${buy.id}/resume`);
  expect(resumed.status, JSON.stringify(resumed.body)).toBe(202);
  await waitForStatus(orch, resumed.body.id, ['completed']);
  expect((await orch.api('GET', `/v1/media-buys/${buy.id}`)).body.status).toBe('active');

  const pausedAgain = await orch.api('POST', `/v1/media-buys/${buy.id}/pause`);
  expect(pausedAgain.status, JSON.stringify(pausedAgain.body)).toBe(202);
  await waitForStatus(orch, pausedAgain.body.id, ['completed']);
  expect(sellerCalls(seller, 'update_media_buy', buy.media_buy_id).map((a) => a.paused)).toEqual([true, false, true]);

  // The status reads that follow agree, and raise nothing more: one notification per change.
  const settled = await settledBuy(orch, buy.id);
  expect(settled.status).toBe('paused');
  expect(await buyNotifications(orch, buy.id, 'media_buy.paused')).toHaveLength(2);
  expect(await buyNotifications(orch, buy.id, 'media_buy.resumed')).toHaveLength(1);
});
