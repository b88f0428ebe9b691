/**
 * Nothing leaves us that the seller's schema refuses. A caller's request off the
 * schema is answered 400 naming the pointer, with nothing stored and nothing sent;
 * a stored request that fails (one made before an upgrade, or a bug of ours) ends
 * `failed` with REQUEST_INVALID, unsent and never retried; a governed one is not
 * shown to its governance agent either.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { CHECK_STEP } from '../../src/domain/governed-flow.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { governedRequest, startGoverned, syncPlan, type GovernedSetup } from '../helpers/governed.js';
import { liveBuyRequest, startLiveBuyStack, type LiveBuyStack } from '../helpers/live-buys.js';
import { waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';

let stack: LiveBuyStack | undefined;
let governed: GovernedSetup | undefined;
afterEach(async () => {
  await stack?.close();
  await governed?.close();
  stack = undefined;
  governed = undefined;
});

async function operationCount(orch: TestOrchestrator): Promise<number> {
  return (await orch.api('GET', '/v1/operations?limit=500')).body.operations.length;
}

/** Stores an operation as an earlier version might have left it: its request as given, due to be sent now. */
async function storeUnsent(orch: TestOrchestrator, agentId: string, request: Record<string, unknown>, overrides: Record<string, unknown> = {}): Promise<string> {
  const id = randomUUID();
  const now = Date.now();
  const row = newOperationRow(
    { id, tenant_id: orch.tenantId, agent_id: agentId, type: 'create_media_buy', idempotency_key: randomUUID(), request_body: JSON.stringify({ ...request, idempotency_key: randomUUID() }), created_at: now },
    { next_check_at: now, check_kind: 'send', ...overrides },
  );
  await orch.app.store.operations.insert(row, [{ source: 'user', kind: 'created', to: 'requested', at: now }]);
  return id;
}

describe('requests checked against the seller’s schema', () => {
  it("answers a caller's request off the schema 400, naming the pointer, and stores and sends nothing", async () => {
    stack = await startLiveBuyStack();
    const { orch, seller, agentId } = stack;
    const before = await operationCount(orch);
    const { packages: _p, ...noPackages } = liveBuyRequest(['sandbox_instant']);
    const badBudget = liveBuyRequest(['sandbox_instant'], { packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_usd_fixed', budget: -5 }] });
    for (const request of [badBudget, { ...noPackages, brand: { domain: 7 } }]) {
      const res = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'request_invalid', details: { side: 'caller', adcp_version: '3.0', issues: expect.any(Array) } });
      expect(res.body.error.message).toMatch(/^the create_media_buy request is not valid for AdCP 3\.0: \//);
    }
    const refused = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: badBudget });
    expect(refused.body.error.details.issues).toContainEqual({ pointer: '/packages/0/budget', message: expect.stringMatching(/>= 0/) });
    // Any task with a schema, through the generic route too.
    const products = await orch.api('POST', '/v1/operations', { agent_id: agentId, task: 'get_products', params: { brief: 'no buying mode' } });
    expect([products.status, products.body.error.details.issues]).toEqual([400, [{ pointer: '/buying_mode', message: 'is required' }]]);
    expect(await operationCount(orch)).toBe(before);
    expect(seller.stats().calls).toEqual([]);
  });

  it('ends a stored request that fails its schema failed REQUEST_INVALID, unsent and never retried', async () => {
    stack = await startLiveBuyStack();
    const { orch, seller, agentId } = stack;
    // The request governed buys carried before this check existed: a reporting webhook without authentication.
    const id = await storeUnsent(orch, agentId, liveBuyRequest(['sandbox_instant'], { reporting_webhook: { url: `${orch.url}/webhooks/adcp/reporting/x`, reporting_frequency: 'daily' } }));
    const op = await waitForStatus(orch, id, ['failed']);
    expect(op.error).toMatchObject({
      code: 'REQUEST_INVALID',
      recovery: 'correctable',
      details: { side: 'ours', adcp_version: '3.0', issues: [{ pointer: '/reporting_webhook/authentication', message: 'is required' }] },
    });
    expect(op.error.message).toMatch(/nothing was sent/);
    // Straight from requested to failed: never marked as sent, nothing at the seller, no timer left to retry it.
    expect(op.events.filter((e: any) => e.kind === 'transition').map((e: any) => [e.from, e.to])).toEqual([['requested', 'failed']]);
    expect(op.next_check_at).toBeNull();
    expect(seller.stats().calls).toEqual([]);
  });

  it('shows no governance agent a request the seller would refuse', async () => {
    governed = await startGoverned({});
    const { orch, governance, sellers } = governed;
    await syncPlan(governed, 'plan-checked');
    const gov = JSON.stringify({ agent_id: governed.governanceId, plan_id: 'plan-checked', target_agent: sellers[0]!.url, caller: orch.url, tool: 'create_media_buy', apply_conditions: false, step: 'checking', rounds: 0, checks: 0 });
    const request = governedRequest('sandbox_instant', { plan_id: 'plan-checked', reporting_webhook: { url: `${orch.url}/webhooks/adcp/reporting/y`, reporting_frequency: 'daily' } });
    const id = await storeUnsent(orch, governed.sellerIds[0]!, request, { check_kind: CHECK_STEP, governance: gov });
    const op = await waitForStatus(orch, id, ['failed']);
    expect(op.error).toMatchObject({ code: 'REQUEST_INVALID', details: { side: 'ours', step: 'check_governance', issues: [{ pointer: '/reporting_webhook/authentication', message: 'is required' }] } });
    expect(governance.stats().checks).toEqual([]);
    expect(sellers[0]!.stats().calls).toEqual([]);
  });
});
