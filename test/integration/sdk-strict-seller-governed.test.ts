/**
 * Governed buys against the strict SDK seller (test/helpers/sdk-seller), with
 * the project's sandbox governance agent behind a relay that checks each of its
 * calls against the AdCP schema. A governed create must reach the seller as a
 * valid 3.0 request: the approval's governance_context attached, and our
 * reporting webhook WITH the `authentication` the 3.0 schema requires; its
 * delivery reports must then arrive and count. Each test ends by checking that
 * every call the seller, and the governance agent, received passed validation.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SUBMITTED_PRODUCT, SYNC_PRODUCT } from '../helpers/sdk-seller/catalog.js';
import type { SdkSeller } from '../helpers/sdk-seller/index.js';
import { eventually, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import {
  buyOfOperation,
  buyThrough,
  expectAllRequestsValid,
  startStrictGovernance,
  startStrictOrchestrator,
  startStrictSeller,
  strictBuyRequest,
  syncStrictPlan,
  type StrictGovernance,
} from '../helpers/sdk-strict-stack.js';

let orch: TestOrchestrator;
let governance: StrictGovernance;
let seller: SdkSeller | undefined;
beforeAll(async () => {
  orch = await startStrictOrchestrator();
  governance = await startStrictGovernance(orch);
});
afterEach(async () => {
  await seller?.close();
  seller = undefined;
});
afterAll(async () => {
  await orch?.close();
  await governance?.close();
});

/** A governed account (gov_…) buying within the sandbox plan's flight and budget. */
const governedRequest = (product: string, budget: number) =>
  strictBuyRequest(product, { account: { account_id: 'gov_sdk' }, packages: [{ product_id: product, pricing_option_id: 'cpm_usd_fixed', budget }] });

describe('governed buys at a strict SDK seller', () => {
  it('sends a governed create with its governance_context and an authenticated reporting webhook; the buy completes and its report counts', async () => {
    const started = Date.now();
    const { seller: s, agentId } = await startStrictSeller(orch);
    seller = s;
    await syncStrictPlan(orch, governance.agentId, 'plan_sdk_one', [s.url]);

    const op = await buyThrough(orch, {
      agent_id: agentId,
      request: governedRequest(SYNC_PRODUCT, 4_000),
      governance: { agent_id: governance.agentId, plan_id: 'plan_sdk_one' },
      reporting: { frequency: 'hourly' },
    });
    // The check (and, for a seller's refusal, the outcome) went to the governance agent whatever the seller said:
    // judged first, softly, so a failing create still shows what the agent was sent.
    expect.soft(governance.relay.log.invalid(started)).toEqual([]);
    expect(op.status, `${JSON.stringify(op.error)} — the seller refused: ${s.log.invalid().join(' | ') || 'nothing'}`).toBe('completed');
    // The request the seller received: a valid 3.0 create_media_buy.
    const [create] = s.log.of('create_media_buy');
    expect(create!.args).toMatchObject({ plan_id: 'plan_sdk_one', governance_context: expect.any(String) });
    expect(create!.args.reporting_webhook).toMatchObject({
      url: expect.stringContaining('/webhooks/adcp/reporting/'),
      reporting_frequency: 'hourly',
      authentication: { schemes: [expect.stringMatching(/^(HMAC-SHA256|Bearer)$/)], credentials: expect.any(String) },
    });

    const buy = await buyOfOperation(orch, op.id);
    expect(buy).toMatchObject({ status: 'active', governance: { agent_id: governance.agentId, plan_id: 'plan_sdk_one' } });
    const fire = await s.reporting.fire(buy.media_buy_id);
    expect([fire.status, fire.response]).toEqual([200, expect.stringContaining('accepted')]);
    const reported = await eventually(async () => {
      const b = (await orch.api('GET', `/v1/media-buys/${buy.id}`)).body;
      return b.reports.received === 1 ? b : undefined;
    });
    expect(reported.delivery).toMatchObject({ spend: 400, source: 'webhook' });
    // The commitment and the delivery reached the plan.
    await eventually(async () => (governance.agent.deliveries('plan_sdk_one').length === 1 ? true : undefined));
    expect(governance.agent.stats().committedByPlan.plan_sdk_one).toBe(4_000);

    expectAllRequestsValid(s, ['create_media_buy']);
    // What the governance agent was sent in this test (the relay's log is the file's).
    expect(governance.relay.log.all(started).map((c) => c.tool)).toEqual(expect.arrayContaining(['sync_plans', 'check_governance', 'report_plan_outcome']));
    expect(governance.relay.log.invalid(started)).toEqual([]);
  });

  it('resends a governed create whose reply was lost as the same request: replayed by the seller, committed once', async () => {
    const started = Date.now();
    const { seller: s, agentId } = await startStrictSeller(orch);
    seller = s;
    await syncStrictPlan(orch, governance.agentId, 'plan_sdk_resend', [s.url]);
    s.faults.dropReplies('create_media_buy');

    const op = await buyThrough(orch, { agent_id: agentId, request: governedRequest(SYNC_PRODUCT, 3_000), governance: { agent_id: governance.agentId, plan_id: 'plan_sdk_resend' } });
    expect.soft(governance.relay.log.invalid(started)).toEqual([]);
    expect(op.status, `${JSON.stringify(op.error)} — the seller refused: ${s.log.invalid().join(' | ') || 'nothing'}`).toBe('completed');
    const creates = s.log.of('create_media_buy');
    expect(creates.length).toBeGreaterThanOrEqual(2);
    // The approval was still good: the same bytes, token included, so the seller's store replays them.
    expect(new Set(creates.map((c) => JSON.stringify(c.args))).size).toBe(1);
    expect(creates.slice(1).map((c) => [c.errorCode ?? null, c.replayed ?? false])).toEqual(creates.slice(1).map(() => [null, true]));
    expect(s.book.all()).toHaveLength(1);
    await eventually(async () => (governance.agent.stats().committedByPlan.plan_sdk_resend === 3_000 ? true : undefined));

    expectAllRequestsValid(s, ['create_media_buy']);
    expect(governance.relay.log.invalid(started)).toEqual([]);
  });

  it('runs a governed campaign of several buys, one submitted, and commits every one', async () => {
    const started = Date.now();
    const { seller: s, agentId } = await startStrictSeller(orch, { submittedDelayMs: 300 });
    seller = s;
    await syncStrictPlan(orch, governance.agentId, 'plan_sdk_campaign', [s.url]);

    const res = await orch.api('POST', '/v1/campaigns', {
      name: 'Strict seller launch',
      governance: { agent_id: governance.agentId, plan_id: 'plan_sdk_campaign' },
      buys: [
        { agent_id: agentId, request: governedRequest(SYNC_PRODUCT, 2_000) },
        { agent_id: agentId, request: governedRequest(SYNC_PRODUCT, 1_500) },
        { agent_id: agentId, request: governedRequest(SUBMITTED_PRODUCT, 1_000) },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const campaign = await eventually(async () => {
      const c = (await orch.api('GET', `/v1/campaigns/${res.body.id}`)).body;
      return c.status === 'done' ? c : undefined;
    }, 40_000);
    const creates = s.log.of('create_media_buy');
    expect.soft(governance.relay.log.invalid(started)).toEqual([]);
    expect(
      campaign.summary,
      `buys: ${JSON.stringify(campaign.buys.map((b: any) => [b.status, b.error?.code, b.error?.message]))} — the seller refused: ${s.log.invalid().join(' | ') || 'nothing'}`,
    ).toMatchObject({ total: 3, done: 3, failed: 0, denied: 0 });
    expect(campaign.budget).toMatchObject({ planned: 4_500, committed: 4_500 });
    expect(creates).toHaveLength(3);
    for (const c of creates) {
      expect(c.args.governance_context).toEqual(expect.any(String));
      expect(c.args.reporting_webhook).toMatchObject({ authentication: { credentials: expect.any(String) } });
    }
    // The submitted one was followed to its end.
    const submitted = campaign.buys.find((b: any) => b.request.packages[0].product_id === SUBMITTED_PRODUCT);
    expect((await waitForStatus(orch, submitted.id, ['completed'])).result.media_buy_id).toMatch(/^mb_/);

    expectAllRequestsValid(s, ['create_media_buy']);
    expect(governance.relay.log.all(started).map((c) => c.tool)).toEqual(expect.arrayContaining(['check_governance', 'report_plan_outcome']));
    expect(governance.relay.log.invalid(started)).toEqual([]);
  }, 60_000);
});
