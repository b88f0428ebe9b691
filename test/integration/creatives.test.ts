/**
 * Creatives of live buys against a real sandbox seller over loopback (README,
 * Creatives): a buy waiting for creatives gets them, the seller approves them and
 * the buy moves on; a rejection reaches the buy with its reason and the inbox, a
 * person's corrected creative goes out as a child sync_creatives and is approved,
 * or the rejection is dismissed; a review that never comes is stalled at the
 * configured timeout. What the sync reply says of each creative is never taken for
 * a review.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_REJECTION_REASON } from '../../src/sandbox/seller.js';
import { creativeWhen, displayCreative, operationWhen } from '../helpers/creatives.js';
import { buyLive, buyNotifications, buyWhen, metric, startLiveBuyStack, type LiveBuyStack } from '../helpers/live-buys.js';
import { eventually } from '../helpers/orchestrator.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { Webhook } from 'standardwebhooks';

let stack: LiveBuyStack | undefined;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** The seller reviews quickly and its flight clock runs (a started buy turns active); the orchestrator looks often. */
function fastReviews(env: Record<string, string> = {}) {
  return startLiveBuyStack({
    seller: { reportClock: true, statusStepMs: 100, reportIntervalMs: 600_000, creativeReviewMs: 300 },
    env: { ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: '200', ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: '300', ...env },
  });
}

const syncCalls = (s: LiveBuyStack) => s.seller.stats().calls.filter((c) => c.tool === 'sync_creatives');

describe('creatives of a live buy', () => {
  it('a buy waiting for creatives gets them, the seller approves them, and the buy moves on', async () => {
    stack = await fastReviews();
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId, {}, ['sandbox_awaiting_creatives']);
    expect(buy.status).toBe('pending_creatives');
    expect(buy.creatives).toEqual([]);
    const packageId = buy.packages[0].package_id;

    const sent = await orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, {
      creatives: [displayCreative('cr_summer', 'Summer banner', seller.url)],
      assignments: [{ creative_id: 'cr_summer', package_id: packageId }],
    });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ type: 'sync_creatives', parent_id: buy.operation_id, status: 'completed' });
    expect(sent.body.request).toMatchObject({ account: { account_id: 'acc_live' }, assignments: [{ creative_id: 'cr_summer', package_id: packageId }] });

    const right = (await orch.api('GET', `/v1/media-buys/${buy.id}`)).body.creatives[0];
    expect(right).toMatchObject({ creative_id: 'cr_summer', name: 'Summer banner', package_ids: [packageId], sync: { operation_id: sent.body.id, state: 'synced', advisory_status: 'pending_review' } });

    const approved = await creativeWhen(orch, buy.id, 'cr_summer', (c) => c.status === 'approved');
    expect(approved.approvals).toEqual([{ package_id: packageId, status: 'approved' }]);
    expect(approved.stalled).toBe(false);
    const moved = await buyWhen(orch, buy.id, (b) => b.status === 'active');
    expect(moved.events.map((e: any) => e.kind)).toEqual(expect.arrayContaining(['creatives_sent', 'creative_approved']));
    // Waiting for creatives until the seller approved them (pending_start may pass between two reads).
    const statuses = moved.events.filter((e: any) => e.kind === 'status_changed').map((e: any) => e.to);
    expect(statuses[0]).toBe('pending_creatives');
    expect(statuses.at(-1)).toBe('active');
    expect(seller.reporting.buy(buy.media_buy_id)!.history.map((h) => h.action)).toEqual(['created', 'creatives_approved', 'activated']);
    const told = await buyNotifications(orch, buy.id, 'creative.approved');
    expect(told).toHaveLength(1);
    expect(told[0].data.event.detail).toMatchObject({ creative_id: 'cr_summer', status: 'approved' });
    expect(await metric(orch, 'creative_reviews_total', { outcome: 'approved' })).toBe(1);
    // Learnt by asking (the buy's creative_approvals), never from the sync reply.
    expect(approved.sync.advisory_status).toBe('pending_review');
    expect(seller.stats().calls.map((c) => c.tool)).toContain('get_media_buys');
  });

  it("a sync reply that says approved is advice, not an approval: the buy waits for the seller's review", async () => {
    stack = await startLiveBuyStack({
      seller: { reportClock: true, statusStepMs: 100, reportIntervalMs: 600_000, creativeAdvisoryStatus: 'approved' },
      env: { ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: '200', ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: '300' },
    });
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId, {}, ['sandbox_awaiting_creatives']);
    const sent = await orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, {
      creatives: [displayCreative('cr_hopeful', 'Banner on hold', seller.url)],
      assignments: [{ creative_id: 'cr_hopeful', package_id: buy.packages[0].package_id }],
    });
    expect(sent.body.result.creatives[0]).toMatchObject({ creative_id: 'cr_hopeful', status: 'approved' });
    // Reviews were read from the seller since (list_creatives, creative_approvals): still pending.
    const lists = () => seller.stats().calls.filter((c) => c.tool === 'list_creatives').length;
    await eventually(async () => (lists() >= 2 ? true : undefined));
    const after = await buyWhen(orch, buy.id, (b) => b.creatives[0]?.approvals.length === 1);
    expect(after.creatives[0]).toMatchObject({ status: 'pending_review', sync: { advisory_status: 'approved' }, approvals: [{ status: 'pending_review' }] });
    expect(after.status).toBe('pending_creatives');
    expect(await buyNotifications(orch, buy.id, 'creative.approved')).toHaveLength(0);
    // The seller's own review is what counts.
    seller.creatives.review('cr_hopeful', 'approved', { accountId: 'acc_live' });
    await creativeWhen(orch, buy.id, 'cr_hopeful', (c) => c.status === 'approved');
    await buyWhen(orch, buy.id, (b) => b.status === 'active');
  });

  it('a rejection reaches the buy and the inbox with its reason; a corrected creative goes out as a child operation and is approved', async () => {
    stack = await fastReviews();
    const { seller, orch, agentId } = stack;
    // A subscriber to creative.rejected alone hears of it, signed.
    const rcv = await startWebhookReceiver();
    cleanups.push(() => rcv.close());
    const subscription = await orch.api('POST', '/v1/subscriptions', { url: `${rcv.url}/hooks`, events: ['creative.rejected'] });
    expect(subscription.status).toBe(201);
    const buy = await buyLive(orch, agentId);
    const packageId = buy.packages[0].package_id;
    const sent = await orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, {
      creatives: [displayCreative('cr_bad', 'Banner (reject me)', seller.url), displayCreative('cr_good', 'Banner', seller.url)],
      assignments: [
        { creative_id: 'cr_bad', package_id: packageId },
        { creative_id: 'cr_good', package_id: packageId },
      ],
    });
    expect(sent.status).toBe(202);

    const rejected = await creativeWhen(orch, buy.id, 'cr_bad', (c) => c.status === 'rejected' && c.inbox === 'asked');
    expect(rejected.rejection_reason).toBe(SANDBOX_REJECTION_REASON);
    expect((await creativeWhen(orch, buy.id, 'cr_good', (c) => c.status === 'approved')).rejection_reason).toBeUndefined();
    const told = await buyNotifications(orch, buy.id, 'creative.rejected');
    expect(told).toHaveLength(1);
    expect(told[0].data.event.detail).toMatchObject({ creative_id: 'cr_bad', rejection_reason: SANDBOX_REJECTION_REASON });

    // The inbox item is on the sync_creatives operation that sent it.
    const waiting = await operationWhen(orch, sent.body.id, (op) => op.needs_input === true);
    expect(waiting.status).toBe('completed');
    expect(waiting.input_request).toMatchObject({ kind: 'creative_rejected', creative_id: 'cr_bad', rejection_reason: SANDBOX_REJECTION_REASON, allowed: ['respond', 'reject'], media_buy: { id: buy.id } });
    const inbox = (await orch.api('GET', '/v1/operations?needs_input=true')).body.operations.map((o: any) => o.id);
    expect(inbox).toContain(sent.body.id);

    const calls = syncCalls(stack).length;
    const answer = await orch.api('POST', `/v1/operations/${sent.body.id}/input`, {
      decision: 'respond',
      message: 'landing page fixed',
      question_id: waiting.input_request.id,
      params: { creatives: [displayCreative('cr_bad', 'Banner, landing page fixed', seller.url)] },
    });
    expect(answer.status).toBe(202);
    const child = answer.body;
    expect(child).toMatchObject({ type: 'sync_creatives', parent_id: sent.body.id });
    // Without assignments, the corrected creative goes where the rejected one was meant to run.
    expect(child.request.assignments).toEqual([{ creative_id: 'cr_bad', package_id: packageId }]);
    expect(child.idempotency_key).not.toBe(sent.body.idempotency_key);
    expect(syncCalls(stack).length).toBe(calls + 1);

    const original = (await orch.api('GET', `/v1/operations/${sent.body.id}`)).body;
    expect(original).toMatchObject({ status: 'completed', needs_input: false });
    const answered = original.events.find((e: any) => e.kind === 'answered');
    expect(answered).toMatchObject({ actor: expect.stringMatching(/^key-/), detail: { kind: 'creative_rejected', decision: 'respond', message: 'landing page fixed' } });

    const fixed = await creativeWhen(orch, buy.id, 'cr_bad', (c) => c.status === 'approved');
    expect(fixed).toMatchObject({ name: 'Banner, landing page fixed', sync: { operation_id: child.id }, inbox: null });
    expect(seller.creatives.list('acc_live').find((c) => c.creative_id === 'cr_bad')).toMatchObject({ status: 'approved', reviews: 2 });
    const events = (await orch.api('GET', `/v1/media-buys/${buy.id}`)).body.events;
    expect(events.find((e: any) => e.kind === 'creative_rejection_answered')).toMatchObject({ actor: answered.actor, detail: { decision: 'corrected', child_id: child.id, creative_ids: ['cr_bad'] } });
    expect(await metric(orch, 'creative_reviews_total', { outcome: 'rejected' })).toBe(1);
    const delivered = await rcv.waitFor(() => rcv.requests.find((r) => r.answered === 204));
    const heard = new Webhook(subscription.body.secret).verify(delivered.body, delivered.headers) as any;
    expect(heard).toMatchObject({ type: 'creative.rejected', data: { media_buy: { id: buy.id }, event: { detail: { creative_id: 'cr_bad', rejection_reason: SANDBOX_REJECTION_REASON } } } });
    expect(rcv.requests.map((r) => JSON.parse(r.body).type)).toEqual(['creative.rejected']);
  });

  it("an item the seller refuses in its sync reply is a rejection with the seller's errors, in the inbox at once", async () => {
    stack = await fastReviews();
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    // Valid for the schema, but in a format this seller does not offer: it fails that item and takes the other.
    const otherFormat = { ...displayCreative('cr_broken', 'Billboard', seller.url), format_id: { agent_url: seller.url, id: 'billboard_970x250' } };
    const sent = await orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, { creatives: [displayCreative('cr_fine', 'Banner', seller.url), otherFormat] });
    expect(sent.status).toBe(202);
    // Recorded in the commit that ended the sync: the answer the POST returns already waits for a person.
    expect(sent.body).toMatchObject({ status: 'completed', needs_input: true, input_request: { kind: 'creative_rejected', creative_id: 'cr_broken' } });
    expect(sent.body.input_request.rejection_reason).toContain('billboard_970x250');
    const broken = (await orch.api('GET', `/v1/media-buys/${buy.id}`)).body.creatives.find((c: any) => c.creative_id === 'cr_broken');
    expect(broken).toMatchObject({ status: 'rejected', inbox: 'asked', sync: { state: 'synced', error: { code: 'SYNC_ITEM_FAILED' } } });
    expect(seller.creatives.list('acc_live').map((c) => c.creative_id)).toEqual(['cr_fine']);
    await creativeWhen(orch, buy.id, 'cr_fine', (c) => c.status === 'approved');
  });

  it('a sync the seller queues (submitted) is tracked like any task; its creatives are reviewed once it completes', async () => {
    stack = await startLiveBuyStack({
      seller: { reportClock: true, statusStepMs: 100, reportIntervalMs: 600_000, creativeReviewMs: 300, submittedDelayMs: 2_000 },
      env: { ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: '200', ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: '300' },
    });
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId, {}, ['sandbox_awaiting_creatives']);
    const sent = await orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, {
      creatives: [displayCreative('cr_q', 'Banner (queue)', seller.url)],
      assignments: [{ creative_id: 'cr_q', package_id: buy.packages[0].package_id }],
    });
    expect(sent.body).toMatchObject({ status: 'submitted', task_id: expect.any(String) });
    expect((await orch.api('GET', `/v1/media-buys/${buy.id}`)).body.creatives[0]).toMatchObject({ status: 'processing', sync: { state: 'sending', synced_at: null } });
    // Completed by the seller's signed webhook, its result the sync's reply.
    const done = await operationWhen(orch, sent.body.id, (op) => op.status === 'completed');
    expect(done.events.some((e: any) => e.source === 'webhook' && e.to === 'completed')).toBe(true);
    expect(done.result.creatives[0]).toMatchObject({ creative_id: 'cr_q', action: 'created' });
    const approved = await creativeWhen(orch, buy.id, 'cr_q', (c) => c.status === 'approved');
    expect(approved.sync).toMatchObject({ state: 'synced', advisory_status: 'pending_review' });
    await buyWhen(orch, buy.id, (b) => b.status === 'active');
  });

  it('a rejection dismissed stays rejected, with who dismissed it, and nothing is sent', async () => {
    stack = await fastReviews();
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    const sent = await orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, {
      creatives: [displayCreative('cr_x', 'Rejected teaser', seller.url)],
      assignments: [{ creative_id: 'cr_x', package_id: buy.packages[0].package_id }],
    });
    const waiting = await operationWhen(orch, sent.body.id, (op) => op.needs_input === true);
    const calls = syncCalls(stack).length;
    const dismissed = await orch.api('POST', `/v1/operations/${sent.body.id}/input`, { decision: 'reject', question_id: waiting.input_request.id, message: 'we drop this one' });
    expect(dismissed.status).toBe(202);
    expect(dismissed.body).toMatchObject({ id: sent.body.id, status: 'completed', needs_input: false });
    const creative = await creativeWhen(orch, buy.id, 'cr_x', (c) => c.inbox === 'answered');
    expect(creative).toMatchObject({ status: 'rejected', dismissed: { by: expect.stringMatching(/^key-/) } });
    expect(syncCalls(stack).length).toBe(calls);
    // The same answer again is taken as done; another is 409.
    expect((await orch.api('POST', `/v1/operations/${sent.body.id}/input`, { decision: 'reject', question_id: waiting.input_request.id, message: 'we drop this one' })).status).toBe(202);
    const again = await orch.api('POST', `/v1/operations/${sent.body.id}/input`, { decision: 'respond', params: { creatives: [displayCreative('cr_x', 'x', seller.url)] } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('not_waiting');
  });
});

describe('reminders of an unanswered rejection', () => {
  it('reminds people like any question, on the ended sync operation, until someone answers', async () => {
    stack = await fastReviews({ ADCP_ORCH_INPUT_REMINDER_MS: '400' });
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    const sent = await orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, { creatives: [displayCreative('cr_late', 'Banner to reject', seller.url)] });
    const remindersOf = (op: any) => op.events.filter((e: any) => e.kind === 'reminder');
    const reminded = await operationWhen(orch, sent.body.id, (op) => remindersOf(op).length >= 2);
    expect(reminded).toMatchObject({ status: 'completed', needs_input: true, input_request: { kind: 'creative_rejected', creative_id: 'cr_late' } });
    const [r1, r2] = remindersOf(reminded);
    expect(r1).toMatchObject({ source: 'timer', from: 'completed', to: 'completed', detail: { kind: 'creative_rejected', reminder: 1 } });
    expect(r2.detail.reminder).toBe(2);
    // The second comes twice the first's wait after it.
    expect(Date.parse(r2.at) - Date.parse(r1.at)).toBeGreaterThanOrEqual(800);
    const told = (await orch.app.store.db.kysely.selectFrom('notifications').select('body').where('type', '=', 'operation.input_required').orderBy('seq').execute())
      .map((r) => JSON.parse(r.body))
      .filter((b) => b.data.operation.id === sent.body.id && b.data.reminder === true);
    expect(told.length).toBeGreaterThanOrEqual(2);
    expect(await metric(orch, 'input_reminders_total', { kind: 'creative_rejected' })).toBeGreaterThanOrEqual(2);

    // Answered: the clock stops (its next firing finds nothing to remind of and clears the timer).
    const answer = await orch.api('POST', `/v1/operations/${sent.body.id}/input`, { decision: 'reject', question_id: reminded.input_request.id, message: 'we drop this one' });
    expect(answer.status).toBe(202);
    const count = remindersOf((await orch.api('GET', `/v1/operations/${sent.body.id}`)).body).length;
    await eventually(async () => ((await orch.app.store.operations.get(sent.body.id))!.next_check_at === null ? true : undefined), 20_000);
    expect(remindersOf((await orch.api('GET', `/v1/operations/${sent.body.id}`)).body)).toHaveLength(count);
    expect((await orch.app.store.operations.get(sent.body.id))!.status).toBe('completed');
  });
});

describe('the creative-approval timeout', () => {
  it('stalls a creative whose review never comes and tells people; a later approval ends the stall', async () => {
    stack = await fastReviews({ ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS: '1500' });
    const { seller, orch, agentId } = stack;
    const buy = await buyLive(orch, agentId);
    const sent = await orch.api('POST', `/v1/media-buys/${buy.id}/creatives`, { creatives: [displayCreative('cr_slow', 'Banner on hold', seller.url)] });
    expect(sent.status).toBe(202);
    const first = (await orch.api('GET', `/v1/media-buys/${buy.id}`)).body.creatives[0];
    const deadline = Date.parse(first.review_deadline_at) - Date.parse(first.sync.sent_at);
    expect(deadline).toBe(1500);

    const stalled = await creativeWhen(orch, buy.id, 'cr_slow', (c) => c.stalled === true);
    expect(stalled.status).toBe('pending_review');
    expect(Date.parse(stalled.stalled_at)).toBeGreaterThanOrEqual(Date.parse(first.review_deadline_at));
    const told = await buyNotifications(orch, buy.id, 'creative.stalled');
    expect(told).toHaveLength(1);
    expect(told[0].data.event.detail).toMatchObject({ creative_id: 'cr_slow', status: 'pending_review' });
    // Still followed: the seller's late approval ends the stall, and it is told once only.
    seller.creatives.review('cr_slow', 'approved', { accountId: 'acc_live' });
    const approved = await creativeWhen(orch, buy.id, 'cr_slow', (c) => c.status === 'approved');
    expect(approved.stalled).toBe(false);
    expect(await buyNotifications(orch, buy.id, 'creative.stalled')).toHaveLength(1);
    await eventually(async () => ((await metric(orch, 'creative_reviews_total', { outcome: 'stalled' })) === 1 ? true : undefined));
  });
});
