/**
 * The requests we send governance agents, as our builders make them, are valid AdCP 3.0.6
 * requests: `sync_plans` (the caller's plans with what we add), `check_governance` (closed
 * to unknown fields in 3.0: the seller we name travels in `ext`), and `report_plan_outcome`
 * for a completed, a failed and a delivery outcome; and a governed buy's seller request
 * with its `governance_context`. Tokens are sealed at rest and opened to be sent, as the
 * engine does. Each family also has a broken input the check refuses, so these tests can fail.
 */
import { describe, expect, it } from 'vitest';
import { afterDecision, checkArguments, outcomeRequest, sellerArguments, type GovernedState } from '../../../src/domain/governed-flow.js';
import { GovernanceGuard } from '../../../src/engine/governance/governed-ops.js';
import type { PlanBook } from '../../../src/engine/governance/plan-book.js';
import { syncPlans } from '../../../src/engine/governance/plan-sync.js';
import { GovernanceTokens } from '../../../src/engine/governance/sealed-tokens.js';
import { deliveryOutcomeRequest } from '../../../src/engine/media-buys/report-apply.js';
import type { Store } from '../../../src/store/index.js';
import { ACCOUNT, NOW, PUBLIC_URL, capturingOperations, governanceAgent, issuesOf, pointersOf, secrets, seller, wireRequest } from './request-builders-schema.helpers.js';

const tokens = new GovernanceTokens(secrets);
/** A compact JWS as a governance agent's `governance_context` is (3.0 profile). */
const TOKEN = 'eyJhbGciOiJFUzI1NiIsImtpZCI6ImdvdiJ9.eyJwbGFuX2lkIjoicGxhbl8xIn0.c2lnbmF0dXJl';
const KEY = '3f1d2c4b-5a6e-4f70-8a91-b2c3d4e5f607';

const PLAN = {
  plan_id: 'plan_1',
  brand: { domain: 'example-brand.com' },
  objectives: 'Spring launch: awareness in the US',
  budget: { total: 50_000, currency: 'USD', reallocation_threshold: 5_000 },
  flight: { start: '2026-05-01T00:00:00Z', end: '2026-12-31T23:59:59Z' },
  countries: ['US'],
  approved_sellers: [seller.url],
};

const store = { agents: { getForTenant: async (_t: string, id: string) => [seller, governanceAgent].find((a) => a.id === id) } } as unknown as Store;

describe('sync_plans', () => {
  it('the caller’s plans with what we add (key, context) are valid', async () => {
    const { operations, sent } = capturingOperations(governanceAgent);
    await syncPlans({ store, operations }, { tenantId: 't1', agentId: governanceAgent.id, plans: [PLAN], actor: 'ops', clientKey: 'plans-1' });
    expect(sent.map((s) => s.task)).toEqual(['sync_plans']);
    expect(sent[0]!.request).toMatchObject({ plans: [PLAN], idempotency_key: expect.any(String), context: { orchestrator_operation_id: expect.any(String) } });
    expect(issuesOf('sync_plans', sent[0]!.request)).toEqual([]);
  });

  it('fails the check for a plan missing what 3.0 requires: refused, nothing sent', async () => {
    const { operations, sent } = capturingOperations(governanceAgent);
    const plan = { ...PLAN, budget: { total: 50_000, currency: 'USD' } };
    await expect(syncPlans({ store, operations }, { tenantId: 't1', agentId: governanceAgent.id, plans: [plan], actor: 'ops' })).rejects.toMatchObject({
      code: 'request_invalid',
      details: { issues: [{ pointer: '/plans/0/budget/reallocation_threshold' }] },
    });
    expect(sent).toEqual([]);
  });
});

/** A governed create as it is stored: prepared by the guard (plan_id), built (key, context, webhooks). */
async function governedCreate(): Promise<{ request: Record<string, unknown>; state: GovernedState }> {
  const plans = { readiness: async () => ({ kind: 'accepted' }) } as unknown as PlanBook;
  const guard = new GovernanceGuard(store, plans, { now: () => NOW, random: () => 0.5 }, () => PUBLIC_URL);
  const params = { account: ACCOUNT, brand: { domain: 'example-brand.com' }, start_time: 'asap', end_time: '2026-12-31T23:59:59Z', packages: [{ product_id: 'prod_display', pricing_option_id: 'cpm_usd', budget: 5000 }] };
  const prepared = await guard.prepare('t1', seller.id, 'create_media_buy', params, { agent_id: governanceAgent.id, plan_id: 'plan_1' });
  const request = wireRequest({ tenantId: 't1', agentId: seller.id, task: 'create_media_buy', params: prepared.params, governance: prepared.governance, reporting: { frequency: 'daily', auth: 'hmac' } });
  return { request, state: prepared.governance };
}

/** The state after the governance agent approved, its token sealed as the engine keeps it. */
function approved(state: GovernedState): GovernedState {
  const reading = tokens.sealedReading({ kind: 'approved', checkId: 'chk_1', expiresAt: NOW + 3_600_000, token: TOKEN });
  return afterDecision(state, reading, NOW).state;
}

describe('check_governance', () => {
  it('the first check and a re-check carrying the earlier token are valid', async () => {
    const { request, state } = await governedCreate();
    expect(request.plan_id).toBe('plan_1');
    for (const s of [state, approved(state)]) {
      const body = checkArguments(tokens.forCheck(s), request, 'op_1');
      expect(issuesOf('check_governance', body)).toEqual([]);
    }
  });

  it('the approved seller request, with its governance_context, is valid', async () => {
    const { request } = await governedCreate();
    expect(issuesOf('create_media_buy', sellerArguments(request, TOKEN))).toEqual([]);
  });

  it('fails the check with the seller named at the root (3.2’s target_agent): 3.0’s request is closed', async () => {
    const { request, state } = await governedCreate();
    const body = { ...checkArguments(state, request, 'op_1'), target_agent: seller.url };
    expect(pointersOf('check_governance', body)).toEqual(['/target_agent']);
  });
});

describe('report_plan_outcome', () => {
  it('completed (a create, an update) and failed (an error, a cancel without one) are valid', async () => {
    const { request, state } = await governedCreate();
    const s = approved(state);
    const outcomes = [
      outcomeRequest(s, KEY, { status: 'completed', request, result: { media_buy_id: 'mb_1', status: 'pending_start', packages: [{ package_id: 'pkg_1', budget: 5000 }] } }),
      outcomeRequest(s, KEY, { status: 'completed', request: { account: ACCOUNT, media_buy_id: 'mb_1', packages: [{ package_id: 'pkg_1', budget: 7000 }] } }),
      outcomeRequest(s, KEY, { status: 'failed', request, error: { code: 'PRODUCT_UNAVAILABLE', message: 'sold out' } }),
      outcomeRequest(s, KEY, { status: 'canceled', request }),
    ];
    expect(outcomes.map((o) => o.outcome)).toEqual(['completed', 'completed', 'failed', 'failed']);
    for (const o of outcomes) {
      // Stored with the token sealed; opened only to be sent (outcome-report.ts).
      const sentRequest = tokens.openedRequest(o.request);
      expect(sentRequest.governance_context).toBe(TOKEN);
      expect(issuesOf('report_plan_outcome', sentRequest)).toEqual([]);
    }
  });

  it('delivery is valid, also for a period whose impressions the seller counted fractionally', () => {
    const sealedContext = secrets.seal(TOKEN);
    const period = { period_start: Date.parse('2026-06-01T00:00:00Z'), period_end: Date.parse('2026-06-02T00:00:00Z'), spend: 1234.56 };
    for (const impressions of [411_520, 411_520.4, 0]) {
      const sentRequest = tokens.openedRequest(deliveryOutcomeRequest(KEY, 'plan_1', sealedContext, { ...period, impressions }));
      // Was a bug: delivery.impressions is an integer in 3.0, and a fractional count went as it came.
      expect(issuesOf('report_plan_outcome', sentRequest)).toEqual([]);
    }
  });

  it('fails the check without a governance_context (no approval, no earlier token)', async () => {
    const { request, state } = await governedCreate();
    const { request: body } = outcomeRequest(state, KEY, { status: 'failed', request });
    expect([...new Set(pointersOf('report_plan_outcome', body))]).toEqual(['/governance_context']);
  });
});
