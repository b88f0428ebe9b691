/**
 * Planning and bad input: POST /v1/plans and what GET /v1/plans/:plan_id shows
 * the agent accepted; governed requests that cannot be checked (a seller named
 * as the governance agent, an unknown plan, a plan the agent rejected, …) get a
 * clear 4xx and nothing is stored or sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plan } from '../helpers/governance.js';
import { governedBuy, governedRequest, startGoverned, syncPlan, type GovernedSetup } from '../helpers/governed.js';
import { waitForStatus } from '../helpers/orchestrator.js';

let g: GovernedSetup;
beforeAll(async () => {
  g = await startGoverned();
  await syncPlan(g, 'plan_good');
});
afterAll(async () => {
  await g?.close();
});

/** Nothing stored or sent: no new operation, no check, no seller call. */
async function nothingHappens(attempt: () => Promise<{ status: number; body: any }>, status: number, code: string) {
  const before = (await g.orch.api('GET', '/v1/operations?limit=500')).body.operations.length;
  const checks = g.governance.stats().checks.length;
  const syncs = g.governance.stats().syncCalls;
  const res = await attempt();
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect((await g.orch.api('GET', '/v1/operations?limit=500')).body.operations.length).toBe(before);
  expect(g.governance.stats().checks.length).toBe(checks);
  expect(g.governance.stats().syncCalls).toBe(syncs);
  expect(g.sellers[0]!.stats().calls).toEqual([]);
  return res.body.error;
}

describe('plans', () => {
  it('syncs durably and shows the version the agent accepted; a re-sync the agent refuses keeps the last accepted revision', async () => {
    const first = await syncPlan(g, 'plan_versions');
    expect(first).toMatchObject({ type: 'sync_plans', status: 'completed', agent_id: g.governanceId });
    let view = (await g.orch.api('GET', '/v1/plans/plan_versions')).body;
    expect(view).toMatchObject({ plan_id: 'plan_versions', agent_id: g.governanceId, status: 'active', version: 1, accepted_by_operation: first.id });
    expect(view.plan.objectives).toBe('Sandbox governance test plan');

    await syncPlan(g, 'plan_versions', { objectives: 'Amended' });
    view = (await g.orch.api('GET', `/v1/plans/plan_versions?agent_id=${g.governanceId}`)).body;
    expect(view).toMatchObject({ status: 'active', version: 2, plan: { objectives: 'Amended' } });

    // Off the schema (neither reallocation field): refused here, naming it, and nothing is sent.
    const offSchema = await g.orch.api('POST', '/v1/plans', { agent_id: g.governanceId, plans: [plan('plan_versions', { budget: { total: 5, currency: 'USD' } })] });
    expect([offSchema.status, offSchema.body.error.code, offSchema.body.error.details.issues[0].pointer]).toEqual([400, 'request_invalid', '/plans/0/budget/reallocation_threshold']);
    // Valid for the schema but not for the agent (a flight that ends before it starts): it answers this plan `error` and keeps version 2.
    const backwards = { start: '2030-02-01T00:00:00Z', end: '2030-01-01T00:00:00Z' };
    const bad = await g.orch.api('POST', '/v1/plans', { agent_id: g.governanceId, plans: [plan('plan_versions', { flight: backwards })] });
    await waitForStatus(g.orch, bad.body.id, ['completed']);
    view = (await g.orch.api('GET', '/v1/plans/plan_versions')).body;
    expect(view).toMatchObject({ status: 'error', version: 2, plan: { objectives: 'Amended' }, last_sync: { status: 'error', operation_id: bad.body.id } });
    expect(view.last_sync.errors[0]).toMatchObject({ code: 'INVALID_PLAN' });
  });

  it('refuses a sync to a seller, and a plan never synced is 404', async () => {
    await nothingHappens(() => g.orch.api('POST', '/v1/plans', { agent_id: g.sellerIds[0], plans: [plan('plan_x')] }), 422, 'not_a_governance_agent');
    const res = await g.orch.api('POST', '/v1/plans', { agent_id: g.governanceId, plans: [{ objectives: 'no id' }] });
    expect(res.status).toBe(400);
    expect((await g.orch.api('GET', '/v1/plans/plan_never')).status).toBe(404);
  });
});

describe('governed requests that cannot be checked', () => {
  it('governance naming a seller agent', async () => {
    await nothingHappens(
      () => g.orch.api('POST', '/v1/media-buys', { agent_id: g.sellerIds[0], request: governedRequest(), governance: { agent_id: g.sellerIds[0], plan_id: 'plan_good' } }),
      422,
      'not_a_governance_agent',
    );
  });

  it('an unknown plan', async () => {
    const error = await nothingHappens(() => governedBuy(g, 'plan_unknown', governedRequest()), 422, 'plan_not_found');
    expect(error.message).toMatch(/POST \/v1\/plans/);
  });

  it('a plan the agent rejected', async () => {
    const sync = await g.orch.api('POST', '/v1/plans', { agent_id: g.governanceId, plans: [plan('plan_rejected', { flight: { start: '2027-01-01T00:00:00Z', end: '2026-01-01T00:00:00Z' } })] });
    await waitForStatus(g.orch, sync.body.id, ['completed']);
    const error = await nothingHappens(() => governedBuy(g, 'plan_rejected', governedRequest()), 422, 'plan_rejected');
    expect(error.details.last_sync.status).toBe('error');
  });

  it('a task that commits no spend, a webhook secret the agent would see, a different plan_id, our governance_context, a governance agent as the seller', async () => {
    const gov = { agent_id: g.governanceId, plan_id: 'plan_good' };
    await nothingHappens(() => g.orch.api('POST', '/v1/operations', { agent_id: g.sellerIds[0], task: 'sync_creatives', params: {}, governance: gov }), 400, 'governance_not_applicable');
    await nothingHappens(() => g.orch.api('POST', '/v1/media-buys', { agent_id: g.sellerIds[0], request: governedRequest(), webhook: 'hmac', governance: gov }), 400, 'webhook_mode_not_allowed');
    await nothingHappens(() => g.orch.api('POST', '/v1/media-buys', { agent_id: g.sellerIds[0], request: governedRequest('sandbox_instant', { plan_id: 'other' }), governance: gov }), 400, 'plan_id_mismatch');
    await nothingHappens(() => g.orch.api('POST', '/v1/media-buys', { agent_id: g.sellerIds[0], request: governedRequest('sandbox_instant', { governance_context: 'x' }), governance: gov }), 400, 'reserved_params');
    await nothingHappens(() => g.orch.api('POST', '/v1/media-buys', { agent_id: g.governanceId, request: governedRequest(), governance: gov }), 422, 'not_a_seller_agent');
    await nothingHappens(() => g.orch.api('POST', '/v1/media-buys', { agent_id: g.sellerIds[0], request: governedRequest(), governance: { ...gov, extra: 1 } }), 400, 'invalid_request');
  });

  it('a campaign with one bad buy stores nothing', async () => {
    const error = await nothingHappens(
      () =>
        g.orch.api('POST', '/v1/campaigns', {
          governance: { agent_id: g.governanceId, plan_id: 'plan_good' },
          buys: [
            { agent_id: g.sellerIds[0], request: governedRequest() },
            { agent_id: g.governanceId, request: governedRequest() },
          ],
        }),
      422,
      'not_a_seller_agent',
    );
    expect(error.details.buy).toBe(1);
    expect((await g.orch.api('GET', '/v1/campaigns')).body.campaigns).toEqual([]);
  });
});
