/**
 * The sandbox seller with a governance agent behind it, both over real HTTP:
 * a buy for a governed account (gov_…) is booked with a valid
 * governance_context and refused (PERMISSION_DENIED, nothing booked) without
 * one, or with one that is expired, for another seller, for another plan,
 * for other arguments, or not signed by the governance agent's key. Other
 * accounts are untouched by all this.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startSandboxGovernance, type SandboxGovernance } from '../../src/sandbox/governance/agent.js';
import { GovernanceSigner } from '../../src/sandbox/governance/signing.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { caller, governedBuy, intent, newKey, plan, type Caller } from '../helpers/governance.js';

let gov: SandboxGovernance;
let seller: SandboxSeller;
let govAgent: Caller;
let sellerAgent: Caller;
/** How far the seller's clock runs ahead of real time (to see tokens expire without waiting). */
let sellerClockAheadMs = 0;

beforeAll(async () => {
  gov = await startSandboxGovernance({ approvalTtlSeconds: 300 });
  seller = await startSandboxSeller({
    workingDelayMs: 100,
    governance: { agentUrl: gov.url, jwksUrl: gov.jwksUrl, now: () => Date.now() + sellerClockAheadMs },
  });
  govAgent = caller({ url: gov.url, protocol: 'mcp' });
  sellerAgent = caller({ url: seller.url, protocol: 'mcp' });
  await govAgent.call('sync_plans', { idempotency_key: newKey(), plans: [plan('plan_buy'), plan('plan_other')] });
});
afterAll(async () => {
  await govAgent?.client.close();
  await sellerAgent?.client.close();
  await seller?.close();
  await gov?.close();
});
beforeEach(() => {
  sellerClockAheadMs = 0;
});

/** An approved governance_context for exactly `buy`, for the seller at `target` (default: this seller). */
async function approve(buy: Record<string, unknown>, target = seller.url, planId = String(buy.plan_id)): Promise<string> {
  const r = await govAgent.call('check_governance', intent(planId, buy, target));
  expect(r.data.status).toBe('approved');
  return r.data.governance_context as string;
}

/** Sends the buy and expects a refusal that booked nothing; returns the reason the seller recorded. */
async function expectRefused(buy: Record<string, unknown>): Promise<string> {
  const before = seller.stats().mediaBuysCreated;
  const r = await sellerAgent.call('create_media_buy', buy);
  expect(r.status).toBe('failed');
  expect(r.error).toMatchObject({ code: 'PERMISSION_DENIED', recovery: 'correctable', field: 'governance_context' });
  expect(r.data.media_buy_id).toBeUndefined();
  const stats = seller.stats();
  expect(stats.mediaBuysCreated).toBe(before);
  const refusal = stats.governanceRefusals.filter((x) => x.idempotency_key === buy.idempotency_key).at(-1);
  expect(refusal).toBeDefined();
  // The caller learns the profile's stable code, never which claim failed.
  expect(r.error!.details).toEqual({ reason: refusal!.code });
  return refusal!.code;
}

describe('a governed account at the sandbox seller', () => {
  it('books a buy that carries a valid governance_context, and replays its retry', async () => {
    const buy = governedBuy('plan_buy', { context: { op: 'op_ok' } });
    const token = await approve(buy);
    const r = await sellerAgent.call('create_media_buy', { ...buy, governance_context: token });
    expect(r.status).toBe('completed');
    expect(r.data.media_buy_id).toMatch(/^mb_/);
    expect(seller.stats().mediaBuysCreatedByKey[buy.idempotency_key as string]).toBe(1);

    // The same bytes again (an ambiguous send) replay the booking; they are not a token replay.
    const retry = await sellerAgent.call('create_media_buy', { ...buy, governance_context: token });
    expect(retry.data).toMatchObject({ media_buy_id: r.data.media_buy_id, replayed: true });
    expect(seller.stats().mediaBuysCreatedByKey[buy.idempotency_key as string]).toBe(1);
  });

  it('accepts a token for an async buy too: the task is created and completes', async () => {
    const buy = governedBuy('plan_buy', { packages: [{ product_id: 'sandbox_working', pricing_option_id: 'cpm_usd_fixed', budget: 1_000 }] });
    const r = await sellerAgent.call('create_media_buy', { ...buy, governance_context: await approve(buy) });
    expect(r.status).toBe('working');
    await vi.waitFor(async () => expect((await sellerAgent.poll(r.taskId!)).data.media_buy_id).toMatch(/^mb_/), { timeout: 15_000, interval: 100 });
    expect(seller.stats().mediaBuysCreatedByKey[buy.idempotency_key as string]).toBe(1);
  });

  it('refuses a buy without governance_context', async () => {
    expect(await expectRefused(governedBuy('plan_buy'))).toBe('governance_context_missing');
  });

  it('refuses an expired token', async () => {
    const buy = governedBuy('plan_buy');
    const token = await approve(buy);
    sellerClockAheadMs = (300 + 61) * 1000; // past exp plus the 60 s skew allowance
    expect(await expectRefused({ ...buy, governance_context: token })).toBe('governance_token_expired');
  });

  it('refuses a token for another seller', async () => {
    const buy = governedBuy('plan_buy');
    const token = await approve(buy, 'http://127.0.0.1:1/mcp');
    expect(await expectRefused({ ...buy, governance_context: token })).toBe('governance_token_not_applicable');
    expect(seller.stats().governanceRefusals.at(-1)!.detail).toBe('aud http://127.0.0.1:1/mcp');
  });

  it('refuses a token for another plan', async () => {
    // Approved under plan_other for arguments that name plan_buy: only the plan differs.
    const buy = governedBuy('plan_buy');
    const token = await approve(buy, seller.url, 'plan_other');
    expect(await expectRefused({ ...buy, governance_context: token })).toBe('governance_token_not_applicable');
    expect(seller.stats().governanceRefusals.at(-1)!.detail).toBe('sub plan_other');
  });

  it('refuses a token over other arguments (tampered payload)', async () => {
    const buy = governedBuy('plan_buy');
    const token = await approve(buy);
    const tampered = { ...buy, packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_usd_fixed', budget: 3_999 }] };
    expect(await expectRefused({ ...tampered, governance_context: token })).toBe('governance_token_not_applicable');
    expect(seller.stats().governanceRefusals.at(-1)!.detail).toBe('authorized_payload_hash does not match the request');
    // `context` is outside the hash: changing it is not tampering.
    const r = await sellerAgent.call('create_media_buy', { ...buy, context: { op: 'another' }, governance_context: token });
    expect(r.data.media_buy_id).toMatch(/^mb_/);
  });

  it('refuses a badly signed token: a broken signature, or a key the governance agent does not publish', async () => {
    const buy = governedBuy('plan_buy');
    const token = await approve(buy);
    const [h, p, sig] = token.split('.');
    const flipped = `${h}.${p}.${sig!.startsWith('A') ? 'B' : 'A'}${sig!.slice(1)}`;
    expect(await expectRefused({ ...buy, governance_context: flipped })).toBe('governance_token_invalid');

    // The same claims signed by another key: under a kid the agent does not publish, then under its kid.
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>;
    expect(await expectRefused({ ...buy, governance_context: await GovernanceSigner.mint().sign(claims) })).toBe('governance_key_unknown');
    const stranger = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string; d: string };
    const sameKid = GovernanceSigner.fromPrivateJwk({ ...stranger, kid: gov.jwks.keys[0]!.kid });
    expect(await expectRefused({ ...buy, governance_context: await sameKid.sign(claims) })).toBe('governance_token_invalid');
    expect(await expectRefused({ ...buy, governance_context: 'not-a-jws' })).toBe('governance_token_invalid');
  });

  it('asks for plan_id (INVALID_REQUEST), and leaves other accounts alone', async () => {
    const { plan_id: _p, ...noPlan } = governedBuy('plan_buy');
    const r = await sellerAgent.call('create_media_buy', noPlan);
    expect(r.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'plan_id' });

    const before = seller.stats().mediaBuysCreated;
    const plain = await sellerAgent.call('create_media_buy', { ...governedBuy('plan_buy'), account: { account_id: 'acc_plain' } });
    expect(plain.data.media_buy_id).toMatch(/^mb_/);
    expect(seller.stats().mediaBuysCreated).toBe(before + 1);
  });
});

describe('a seller started without a governance agent', () => {
  it('refuses every governed buy (it has nothing to verify with) and books ungoverned ones', async () => {
    const lone = await startSandboxSeller();
    const agent = caller({ url: lone.url, protocol: 'mcp' });
    try {
      const buy = governedBuy('plan_buy');
      const r = await agent.call('create_media_buy', { ...buy, governance_context: await approve(buy) });
      expect(r.error).toMatchObject({ code: 'PERMISSION_DENIED' });
      expect(lone.stats().governanceRefusals.map((x) => x.code)).toEqual(['governance_not_configured']);
      const plain = await agent.call('create_media_buy', { ...governedBuy('plan_buy'), account: { account_id: 'acc_plain' } });
      expect(plain.data.media_buy_id).toMatch(/^mb_/);
    } finally {
      await agent.client.close();
      await lone.close();
    }
  });
});
