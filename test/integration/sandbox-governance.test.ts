/**
 * The sandbox governance agent over real HTTP on loopback, through the
 * project's AdCP client: plans and their versions, approvals whose
 * governance_context verifies against the JWKS the agent serves, each denial
 * rule, conditions and their lineage, and the audience a token is for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactVerify, createRemoteJWKSet, decodeProtectedHeader } from 'jose';
import { startSandboxGovernance, type SandboxGovernance } from '../../src/sandbox/governance/agent.js';
import { governedPayloadHash, planHash } from '../../src/sandbox/governance/hashes.js';
import { CALLER, caller, governedBuy, intent, newKey, plan, type Caller } from '../helpers/governance.js';

const SELLER = 'http://127.0.0.1:4100/mcp';
let gov: SandboxGovernance;
let agent: Caller;

beforeAll(async () => {
  gov = await startSandboxGovernance({ approvalTtlSeconds: 600 });
  agent = caller({ url: gov.url, protocol: 'mcp' });
});
afterAll(async () => {
  await agent?.client.close();
  await gov?.close();
});

const sync = (...plans: Record<string, unknown>[]) => agent.call('sync_plans', { idempotency_key: newKey(), plans });
const check = (planId: string, payload: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  agent.call('check_governance', intent(planId, payload, SELLER, extra));

describe('sync_plans', () => {
  it('stores a plan at version 1, bumps the version on each re-sync, and replays a repeated key without bumping', async () => {
    const first = await sync(plan('plan_versions'));
    expect(first.data).toMatchObject({ plans: [{ plan_id: 'plan_versions', status: 'active', version: 1 }] });
    expect(first.data.errors).toBeUndefined();

    const body = { idempotency_key: newKey(), plans: [plan('plan_versions', { objectives: 'Amended' })] };
    expect((await agent.call('sync_plans', body)).data).toMatchObject({ plans: [{ status: 'active', version: 2 }] });
    const replay = await agent.call('sync_plans', body);
    expect(replay.data).toMatchObject({ plans: [{ version: 2 }], replayed: true });
    expect(gov.stats().planVersions.plan_versions).toBe(2);
  });

  it('answers an invalid plan with status error and an INVALID_PLAN naming it, and still syncs the valid ones', async () => {
    const bad = plan('plan_bad', { budget: { total: 5, currency: 'USD' } }); // neither reallocation field
    const r = await sync(plan('plan_good'), bad, plan('plan_flight', { flight: { start: '2027-01-01T00:00:00Z', end: '2026-01-01T00:00:00Z' } }));
    expect(r.data.plans).toEqual([
      { plan_id: 'plan_good', status: 'active', version: 1 },
      { plan_id: 'plan_bad', status: 'error', version: 0 },
      { plan_id: 'plan_flight', status: 'error', version: 0 },
    ]);
    expect(r.data.errors).toEqual([
      {
        code: 'INVALID_PLAN',
        field: 'plans[1].budget',
        message: 'plans[1].budget must have exactly one of: reallocation_threshold, reallocation_unlimited',
        recovery: 'correctable',
        details: { plan_id: 'plan_bad' },
      },
      expect.objectContaining({ code: 'INVALID_PLAN', field: 'plans[2].flight.end', details: { plan_id: 'plan_flight' } }),
    ]);
    expect(gov.stats().planVersions).not.toHaveProperty('plan_bad');
  });

  it('refuses a request off the 3.0 schema outside any plan (VALIDATION_ERROR, nothing stored)', async () => {
    const r = await agent.call('sync_plans', { idempotency_key: newKey(), plans: [plan('plan_never')], account: { account_id: 'x' } });
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ code: 'VALIDATION_ERROR', recovery: 'correctable' });
    expect(gov.stats().planVersions).not.toHaveProperty('plan_never');
  });
});

describe('check_governance: approved', () => {
  it('approves with expires_at and a compact JWS that verifies against the served JWKS, with the claims the profile asks for', async () => {
    const supplied = plan('plan_ok');
    await sync(supplied);
    const payload = governedBuy('plan_ok');
    const r = await check('plan_ok', payload, { context: { op: 'op_1' } });
    expect(r.status).toBe('completed');
    expect(r.data).toMatchObject({ status: 'approved', verdict: 'approved', plan_id: 'plan_ok', context: { op: 'op_1' } });
    const token = r.data.governance_context as string;

    const header = decodeProtectedHeader(token);
    expect(header).toMatchObject({ alg: 'EdDSA', typ: 'adcp-gov+jws', kid: gov.jwks.keys[0]!.kid });
    const served = (await (await fetch(gov.jwksUrl)).json()) as { keys: Array<Record<string, unknown>> };
    expect(served.keys).toEqual([
      expect.objectContaining({ kid: header.kid, alg: 'EdDSA', use: 'sig', key_ops: ['verify'], adcp_use: 'governance-signing', kty: 'OKP', crv: 'Ed25519' }),
    ]);
    expect(served.keys[0]).not.toHaveProperty('d');
    const { payload: bytes } = await compactVerify(token, createRemoteJWKSet(new URL(gov.jwksUrl)), {
      algorithms: ['EdDSA'],
      crit: { authorized_commitment: true, authorized_task: true, authorized_payload_hash: true },
    });
    const claims = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
    expect(claims).toMatchObject({
      iss: gov.url,
      sub: 'plan_ok',
      aud: SELLER,
      phase: 'intent',
      caller: CALLER,
      check_id: r.data.check_id,
      plan_hash: planHash(supplied),
      authorized_task: 'create_media_buy',
      authorized_payload_hash: governedPayloadHash(payload),
      authorized_commitment: { amount: 4_000, currency: 'USD' },
    });
    expect(claims.jti).toEqual(expect.any(String));
    expect((claims.exp as number) - (claims.iat as number)).toBe(600);
    expect(Date.parse(r.data.expires_at as string)).toBe((claims.exp as number) * 1000);
    expect(gov.stats().checks.at(-1)).toMatchObject({ check_id: r.data.check_id, status: 'approved', audience: SELLER, caller: CALLER });
  });

  it('uses the only approved seller as the audience when no seller is named; asks for one otherwise', async () => {
    await sync(plan('plan_one_seller', { approved_sellers: [SELLER] }), plan('plan_any_seller'));
    const { ext: _t, ...noTarget } = intent('plan_one_seller', governedBuy('plan_one_seller'), SELLER);
    const r = await agent.call('check_governance', noTarget);
    expect(r.data.status).toBe('approved');
    expect(JSON.parse(Buffer.from((r.data.governance_context as string).split('.')[1]!, 'base64url').toString()).aud).toBe(SELLER);

    const unknown = await agent.call('check_governance', { ...noTarget, plan_id: 'plan_any_seller' });
    expect(unknown.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'ext.adcp_orchestrator.target_agent' });
  });

  it("refuses 3.2's target_agent at the root of a 3.0 request, as an SDK-built agent does", async () => {
    await sync(plan('plan_root_target'));
    const { ext: _e, ...bare } = intent('plan_root_target', governedBuy('plan_root_target'), SELLER);
    const r = await agent.call('check_governance', { ...bare, target_agent: SELLER });
    expect(r.error).toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('answers PLAN_NOT_FOUND for a plan never synced, and VALIDATION_ERROR for a field 3.0 does not have', async () => {
    expect((await check('plan_nowhere', governedBuy('plan_nowhere'))).error).toMatchObject({ code: 'PLAN_NOT_FOUND', recovery: 'correctable' });
    await sync(plan('plan_strict'));
    const r = await check('plan_strict', governedBuy('plan_strict'), { idempotency_key: newKey() });
    expect(r.error).toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});

describe('check_governance: denied', () => {
  it('denies spend above what the plan has left after committed outcomes', async () => {
    await sync(plan('plan_budget'));
    const first = await check('plan_budget', governedBuy('plan_budget', { packages: [{ product_id: 'sandbox_instant', budget: 8_000 }] }));
    expect(first.data.status).toBe('approved');
    const outcome = await agent.call('report_plan_outcome', {
      idempotency_key: newKey(),
      plan_id: 'plan_budget',
      check_id: first.data.check_id,
      governance_context: first.data.governance_context,
      outcome: 'completed',
      seller_response: { seller_reference: 'mb_1', committed_budget: 8_000 },
    });
    expect(outcome.data).toMatchObject({ status: 'accepted', plan_summary: { total_committed: 8_000, budget_remaining: 2_000 } });

    const r = await check('plan_budget', governedBuy('plan_budget', { packages: [{ product_id: 'sandbox_instant', budget: 2_500 }] }));
    expect(r.data).toMatchObject({ status: 'denied', verdict: 'denied' });
    expect(r.data.findings).toEqual([expect.objectContaining({ category_id: 'budget_authority', severity: 'critical' })]);
    expect(r.data.governance_context).toBeUndefined();
    expect(r.data.expires_at).toBeUndefined();
    // Exactly what is left is still fine.
    const exact = await check('plan_budget', governedBuy('plan_budget', { packages: [{ product_id: 'sandbox_instant', budget: 2_000 }] }));
    expect(exact.data.status).toBe('approved');
  });

  it("denies a country outside the plan's countries", async () => {
    await sync(plan('plan_geo', { countries: ['US', 'CA'] }));
    const pkg = { product_id: 'sandbox_instant', budget: 100, targeting_overlay: { geo_countries: ['US', 'GB'] } };
    const r = await check('plan_geo', governedBuy('plan_geo', { packages: [pkg] }));
    expect(r.data.status).toBe('denied');
    expect(r.data.findings).toEqual([expect.objectContaining({ category_id: 'geo_compliance', details: { countries: ['GB'] } })]);
  });

  it('denies a seller that is not in approved_sellers', async () => {
    await sync(plan('plan_sellers', { approved_sellers: ['http://127.0.0.1:4999/mcp', 'http://127.0.0.1:4998/mcp'] }));
    const r = await check('plan_sellers', governedBuy('plan_sellers'));
    expect(r.data.status).toBe('denied');
    expect(r.data.findings).toEqual([expect.objectContaining({ category_id: 'seller_compliance', details: { seller: SELLER } })]);
  });
});

describe('check_governance: conditions', () => {
  it('asks for end_time at the flight end; applied (new key, governance_context passed back) it approves', async () => {
    await sync(plan('plan_cond', { flight: { start: '2026-01-01T00:00:00Z', end: '2030-12-31T23:59:59Z' } }));
    const r = await check('plan_cond', governedBuy('plan_cond', { end_time: '2031-06-30T00:00:00Z' }));
    expect(r.data).toMatchObject({
      status: 'conditions',
      conditions: [{ field: 'end_time', required_value: '2030-12-31T23:59:59Z', reason: expect.any(String) }],
    });
    expect(r.data.expires_at).toEqual(expect.any(String));
    // The conditions token carries the lineage; it is for this agent, never for a seller.
    const continuity = JSON.parse(Buffer.from((r.data.governance_context as string).split('.')[1]!, 'base64url').toString());
    expect(continuity.aud).toBe(gov.url);
    expect(continuity.authorized_task).toBeUndefined();

    const applied = governedBuy('plan_cond', { end_time: '2030-12-31T23:59:59Z' });
    const again = await check('plan_cond', applied, { governance_context: r.data.governance_context });
    expect(again.data.status).toBe('approved');
    const checks = gov.stats().checks.filter((c) => c.plan_id === 'plan_cond');
    expect(checks.map((c) => [c.status, c.recheck])).toEqual([['conditions', false], ['approved', true]]);
    expect(checks[0]!.lineage_id).toBe(checks[1]!.lineage_id);
  });

  it('denies the third failed re-check of a lineage, and every re-check after it', async () => {
    await sync(plan('plan_stubborn', { flight: { start: '2026-01-01T00:00:00Z', end: '2030-12-31T23:59:59Z' } }));
    const late = governedBuy('plan_stubborn', { end_time: '2031-06-30T00:00:00Z' });
    let r = await check('plan_stubborn', late);
    const tokens = [r.data.governance_context as string];
    const statuses = [r.data.status];
    for (let i = 0; i < 3; i++) {
      r = await check('plan_stubborn', { ...late, idempotency_key: newKey() }, { governance_context: tokens.at(-1) });
      statuses.push(r.data.status);
      if (typeof r.data.governance_context === 'string') tokens.push(r.data.governance_context);
    }
    expect(statuses).toEqual(['conditions', 'conditions', 'conditions', 'denied']);
    expect(r.data.findings).toEqual(expect.arrayContaining([expect.objectContaining({ category_id: 'negotiation_limit', severity: 'critical' })]));
    expect(r.data.governance_context).toBeUndefined();

    // The lineage is closed: even a compliant re-check in it is denied; a fresh request is judged anew.
    const compliant = governedBuy('plan_stubborn', { end_time: '2030-12-31T23:59:59Z' });
    expect((await check('plan_stubborn', compliant, { governance_context: tokens[0] })).data.status).toBe('denied');
    expect((await check('plan_stubborn', { ...compliant, idempotency_key: newKey() })).data.status).toBe('approved');
    expect(new Set(gov.stats().checks.filter((c) => c.plan_id === 'plan_stubborn').map((c) => c.lineage_id)).size).toBe(2);
  });

  it('refuses a governance_context it did not issue', async () => {
    await sync(plan('plan_forged'));
    const r = await check('plan_forged', governedBuy('plan_forged'), { governance_context: 'eyJhbGciOiJFZERTQSJ9.e30.AAAA' });
    expect(r.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'governance_context' });
  });
});
