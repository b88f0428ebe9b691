/**
 * A governed setup for integration tests: the sandbox governance agent, one or
 * two sandbox sellers trusting it, and an orchestrator with both kinds of agent
 * registered, plus the API calls the governed tests repeat (sync a plan, start
 * a governed buy, read what the seller and the agent saw).
 */
import { canonicalize } from '@adcp/sdk';
import { startSandboxGovernance, type SandboxGovernance, type SandboxGovernanceOptions } from '../../src/sandbox/governance/agent.js';
import { startSandboxSeller, type SandboxSeller, type SandboxSellerOptions } from '../../src/sandbox/seller.js';
import type { TestDatabase } from './databases.js';
import { plan } from './governance.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from './orchestrator.js';

export interface GovernedSetup {
  orch: TestOrchestrator;
  governance: SandboxGovernance;
  sellers: SandboxSeller[];
  sellerIds: string[];
  governanceId: string;
  close(): Promise<void>;
}

export async function startGoverned(
  opts: {
    governance?: SandboxGovernanceOptions;
    seller?: SandboxSellerOptions;
    sellers?: number;
    env?: Record<string, string>;
    governanceUrl?: (g: SandboxGovernance) => string | Promise<string>;
    database?: TestDatabase;
  } = {},
): Promise<GovernedSetup> {
  const governance = await startSandboxGovernance({ reviewDelayMs: null, ...opts.governance });
  const sellers: SandboxSeller[] = [];
  for (let i = 0; i < (opts.sellers ?? 1); i++) {
    sellers.push(await startSandboxSeller({ submittedDelayMs: 300, ...opts.seller, governance: { agentUrl: governance.url, jwksUrl: governance.jwksUrl } }));
  }
  const orch = await startOrchestrator({ env: { ADCP_ORCH_RETRY_ATTEMPTS: '3', ...opts.env }, ...(opts.database ? { database: opts.database } : {}) });
  const sellerIds: string[] = [];
  for (const [i, s] of sellers.entries()) {
    sellerIds.push(await orch.registerAgent({ name: `seller-${i + 1}`, url: s.url, webhook_signing: { jwks_uri: s.jwksUrl } }));
  }
  const governanceId = await orch.registerAgent({ name: 'governance', role: 'governance', url: opts.governanceUrl ? await opts.governanceUrl(governance) : governance.url });
  return {
    orch,
    governance,
    sellers,
    sellerIds,
    governanceId,
    async close() {
      await orch.close();
      for (const s of sellers) await s.close();
      await governance.close();
    },
  };
}

/** POST /v1/plans and wait for the sync to complete; the operation. */
export async function syncPlan(setup: GovernedSetup, planId: string, extra: Record<string, unknown> = {}, sellers?: string[]): Promise<any> {
  const approved = sellers ?? setup.sellers.map((s) => s.url);
  const res = await setup.orch.api('POST', '/v1/plans', { agent_id: setup.governanceId, plans: [plan(planId, { approved_sellers: approved, ...extra })] });
  if (res.status !== 202) throw new Error(`sync failed: ${res.status} ${JSON.stringify(res.body)}`);
  return waitForStatus(setup.orch, res.body.id, ['completed', 'failed']);
}

/** create_media_buy arguments for a governed (gov_…) account, without the parts the orchestrator adds. */
export function governedRequest(product = 'sandbox_instant', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    account: { account_id: 'gov_acme' },
    brand: { domain: 'example-brand.com' },
    start_time: 'asap',
    end_time: '2031-06-30T00:00:00Z',
    packages: [{ product_id: product, pricing_option_id: 'cpm_usd_fixed', budget: 4_000 }],
    ...extra,
  };
}

export async function governedBuy(setup: GovernedSetup, planId: string, request: Record<string, unknown>, opts: { seller?: number; apply_conditions?: boolean } = {}) {
  return setup.orch.api('POST', '/v1/media-buys', {
    agent_id: setup.sellerIds[opts.seller ?? 0],
    request,
    governance: { agent_id: setup.governanceId, plan_id: planId, ...(opts.apply_conditions ? { apply_conditions: true } : {}) },
  });
}

/** The create_media_buy arguments a seller received under this key, as it logged them. */
export function sellerReceived(seller: SandboxSeller, idempotencyKey: string): Array<Record<string, unknown>> {
  return seller
    .stats()
    .createRequests.filter((r) => r.idempotency_key === idempotencyKey)
    .map((r) => JSON.parse(r.arguments) as Record<string, unknown>);
}

/** The check_governance payloads the agent received whose idempotency_key is this one. */
export function checkedPayloads(governance: SandboxGovernance, idempotencyKey: string) {
  return governance.stats().checks.filter((c) => c.payload.idempotency_key === idempotencyKey);
}

/** The report_plan_outcome calls the agent took for a plan. */
export function outcomesFor(governance: SandboxGovernance, planId: string) {
  return governance.stats().outcomes.filter((o) => o.plan_id === planId);
}

export const jcs = (v: unknown): string => canonicalize(v as never);

/** Waits for the operation's governance step to be `step`; the operation. */
export async function waitForStep(orch: TestOrchestrator, id: string, step: string, timeoutMs = 20_000): Promise<any> {
  return eventually(async () => {
    const res = await orch.api('GET', `/v1/operations/${id}`);
    return res.body?.governance?.step === step ? res.body : undefined;
  }, timeoutMs);
}
