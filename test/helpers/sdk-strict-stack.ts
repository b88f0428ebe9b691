/**
 * The orchestrator against the strict SDK seller (test/helpers/sdk-seller), and
 * for governed flows the project's sandbox governance agent behind a validating
 * relay: the pieces the sdk-strict-seller tests share, and the assertion each of
 * them ends with, that everything the seller (and the governance agent) received
 * was on the AdCP schema.
 */
import { expect } from 'vitest';
import { startSandboxGovernance, type SandboxGovernance } from '../../src/sandbox/governance/agent.js';
import { plan } from './governance.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from './orchestrator.js';
import { startSdkSeller, type SdkSeller, type SdkSellerOptions } from './sdk-seller/index.js';
import { startValidatingRelay, type ValidatingRelay } from './sdk-seller/validating-relay.js';

const HOUR = 3_600_000;

/** Nothing of a live buy moves by a timer during a test unless the test asks (LIVE_BUY_ENV's reasoning). */
export const STRICT_ENV: Record<string, string> = {
  ADCP_ORCH_REPORT_GRACE_MS: String(HOUR),
  ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: String(HOUR),
};

export async function startStrictOrchestrator(env: Record<string, string> = {}): Promise<TestOrchestrator> {
  return startOrchestrator({ env: { ...STRICT_ENV, ...env } });
}

export async function startStrictSeller(orch: TestOrchestrator, opts: SdkSellerOptions = {}): Promise<{ seller: SdkSeller; agentId: string }> {
  const seller = await startSdkSeller(opts);
  const agentId = await orch.registerAgent({ name: `sdk-seller-${Date.now()}`, url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
  return { seller, agentId };
}

/** A create_media_buy for the SDK seller's product, over a flight of a day from now. */
export function strictBuyRequest(product: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    account: { account_id: 'acc_sdk' },
    brand: { domain: 'example-brand.com' },
    start_time: 'asap',
    end_time: new Date(Date.now() + 24 * HOUR).toISOString(),
    packages: [{ product_id: product, pricing_option_id: 'cpm_usd_fixed', budget: 4_000 }],
    ...extra,
  };
}

/** The live buy a create operation made, once recorded (GET /v1/media-buys/:id). */
export async function buyOfOperation(orch: TestOrchestrator, operationId: string): Promise<any> {
  return eventually(async () => {
    const list = await orch.api('GET', '/v1/media-buys?limit=500');
    const found = (list.body.media_buys as any[]).find((b) => b.operation_id === operationId);
    return found ? (await orch.api('GET', `/v1/media-buys/${found.id}`)).body : undefined;
  });
}

/** POST /v1/media-buys, waited to its end; the operation. */
export async function buyThrough(orch: TestOrchestrator, body: Record<string, unknown>, statuses = ['completed', 'failed', 'rejected']): Promise<any> {
  const created = await orch.api('POST', '/v1/media-buys', body);
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return waitForStatus(orch, created.body.id, statuses, 30_000);
}

/**
 * What every test ends with: the seller received calls, each passed the SDK's validation,
 * and none of its own replies failed (that would be this seller's bug, not the buyer's).
 */
export function expectAllRequestsValid(seller: { log: SdkSeller['log'] }, tools: string[] = []): void {
  const calls = seller.log.all();
  expect(calls.length).toBeGreaterThan(0);
  for (const tool of tools) expect(calls.map((c) => c.tool), `the seller was never sent ${tool}`).toContain(tool);
  expect(seller.log.invalid()).toEqual([]);
  expect(seller.log.invalidReplies()).toEqual([]);
}

/** The sandbox governance agent, reached through a relay that validates what it is sent. */
export interface StrictGovernance {
  agent: SandboxGovernance;
  relay: ValidatingRelay;
  agentId: string;
  close(): Promise<void>;
}

export async function startStrictGovernance(orch: TestOrchestrator): Promise<StrictGovernance> {
  const agent = await startSandboxGovernance({ reviewDelayMs: null });
  const relay = await startValidatingRelay(agent.url);
  const agentId = await orch.registerAgent({ name: 'governance', role: 'governance', url: relay.url });
  return {
    agent,
    relay,
    agentId,
    async close() {
      await relay.close();
      await agent.close();
    },
  };
}

/** POST /v1/plans for a plan approving these sellers, waited until the agent accepted it. */
export async function syncStrictPlan(orch: TestOrchestrator, governanceId: string, planId: string, sellerUrls: string[], extra: Record<string, unknown> = {}): Promise<void> {
  const res = await orch.api('POST', '/v1/plans', { agent_id: governanceId, plans: [plan(planId, { approved_sellers: sellerUrls, ...extra })] });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const op = await waitForStatus(orch, res.body.id, ['completed', 'failed']);
  expect(op.status, JSON.stringify(op.error ?? op.result)).toBe('completed');
}
