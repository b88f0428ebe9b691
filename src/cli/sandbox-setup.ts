/**
 * What `serve --sandbox` adds: a sandbox governance agent and two sandbox sellers
 * that trust it, one speaking AdCP 3.0 and one 3.1 (src/sandbox/versions.ts), all
 * on loopback, a `sandbox` tenant with an API key, the agents registered for it
 * (roles `governance` and `seller`) and asked for their capabilities, so each
 * seller is spoken to in its own version from the first request, and a banner
 * telling the user how to try it.
 *
 * The governance agent reads SANDBOX_GOVERNANCE_APPROVAL_TTL_SECONDS and
 * SANDBOX_GOVERNANCE_REVIEW_DELAY_MS from the environment (agent.ts), the seller
 * SANDBOX_SUBMITTED_DELAY_MS and SANDBOX_WORKING_DELAY_MS (seller.ts); its flight
 * clock's period is ADCP_ORCH_SANDBOX_REPORT_INTERVAL_MS (configuration).
 */
import type { App } from '../app.js';
import type { Config } from '../config.js';
import { governanceOptionsFromEnv, startSandboxGovernance, type SandboxGovernance } from '../sandbox/governance/agent.js';
import { sellerOptionsFromEnv, startSandboxSeller, type SandboxSeller } from '../sandbox/seller.js';

export interface SandboxSetup {
  /** The seller speaking AdCP 3.0 (agent `sandbox-seller`). */
  seller: SandboxSeller;
  /** The seller speaking AdCP 3.1 (agent `sandbox-seller-3.1`). */
  seller31: SandboxSeller;
  agent31Id: string;
  governance: SandboxGovernance;
  apiKey: string;
  agentId: string;
  governanceAgentId: string;
  banner: string;
  close(): Promise<void>;
}

export const SANDBOX_TENANT = 'sandbox';
export const SANDBOX_SELLER_NAME = 'sandbox-seller';
export const SANDBOX_SELLER_31_NAME = 'sandbox-seller-3.1';
export const SANDBOX_GOVERNANCE_NAME = 'sandbox-governance';
export const SANDBOX_KEY_NAME = 'sandbox-admin';

export async function setUpSandbox(app: App, config: Config, baseUrl: string, env: NodeJS.ProcessEnv = process.env): Promise<SandboxSetup> {
  const sellerTimings = sellerOptionsFromEnv(env);
  const governance = await startSandboxGovernance({ port: 0, ...governanceOptionsFromEnv(env) });
  // Live buys deliver on an accelerated clock: one reporting period every ADCP_ORCH_SANDBOX_REPORT_INTERVAL_MS.
  const sellerOptions = {
    port: 0,
    ...sellerTimings,
    reportIntervalMs: config.ADCP_ORCH_SANDBOX_REPORT_INTERVAL_MS,
    governance: { agentUrl: governance.url, jwksUrl: governance.jwksUrl },
  };
  let seller: SandboxSeller;
  let seller31: SandboxSeller;
  try {
    seller = await startSandboxSeller(sellerOptions);
  } catch (err) {
    await governance.close();
    throw err;
  }
  try {
    // The 3.1 seller requires our creates and updates signed (RFC 9421), verified against the JWKS we publish.
    seller31 = await startSandboxSeller({ ...sellerOptions, adcpVersion: '3.1', requireSignedRequests: { jwksUrl: `${baseUrl}/.well-known/jwks.json` } });
  } catch (err) {
    await seller.close();
    await governance.close();
    throw err;
  }
  const tenant = await app.store.tenants.ensureTenant(SANDBOX_TENANT);
  // An admin, so the banner's key can do everything the quick start shows; a minted key
  // each start takes the next free name (sandbox-admin-<id>) once sandbox-admin is used.
  const apiKey = await app.store.tenants.createApiKey(tenant.id, { key: config.ADCP_ORCH_API_KEY, name: SANDBOX_KEY_NAME, role: 'admin', ifNameTaken: 'suffix' });
  const registerSeller = async (name: string, s: SandboxSeller) => {
    const signing = { jwks_uri: s.jwksUrl };
    const found = await app.store.agents.findByName(tenant.id, name);
    if (found) await app.store.agents.updateEndpoint(found.id, s.url, signing);
    return found ?? app.store.agents.insert({ tenantId: tenant.id, name, role: 'seller', url: s.url, protocol: 'mcp', webhookSigning: signing });
  };
  const agent = await registerSeller(SANDBOX_SELLER_NAME, seller);
  const agent31 = await registerSeller(SANDBOX_SELLER_31_NAME, seller31);
  let govAgent = await app.store.agents.findByName(tenant.id, SANDBOX_GOVERNANCE_NAME);
  if (govAgent) await app.store.agents.updateEndpoint(govAgent.id, governance.url);
  else govAgent = await app.store.agents.insert({ tenantId: tenant.id, name: SANDBOX_GOVERNANCE_NAME, role: 'governance', url: governance.url, protocol: 'mcp' });
  // Asked now, as a registration through the API asks (the maintenance round would ask only later):
  // what each agent declares picks the version it is spoken to in.
  for (const id of [agent.id, agent31.id, govAgent.id]) await askCapabilities(baseUrl, apiKey, id);

  const body = {
    agent_id: agent.id,
    request: {
      account: { account_id: 'sandbox_account' },
      brand: { domain: 'example-brand.com' },
      start_time: 'asap',
      end_time: '2027-12-31T23:59:59Z',
      packages: [{ product_id: 'sandbox_submitted', pricing_option_id: 'cpm_std', budget: 40000 }],
    },
  };
  const banner = [
    '',
    `Dashboard:        ${baseUrl}/  (sign in with the API key below)`,
    '',
    `adcp-orchestrator (sandbox) on ${baseUrl}`,
    `  database:           ${app.store.db.describe}`,
    `  sandbox seller:     ${seller.url} (agent ${agent.id}; AdCP 3.0)`,
    `  sandbox seller 3.1: ${seller31.url} (agent ${agent31.id}, ${SANDBOX_SELLER_31_NAME}; AdCP 3.1: get_task_status, list_tasks, media_buy_status; creates and updates signed)`,
    `  our signing keys:   ${baseUrl}/.well-known/jwks.json (brand.json beside it)`,
    `  sandbox governance: ${governance.url} (agent ${govAgent.id}; accounts gov_… at the seller are governed by it)`,
    `  API key:            ${apiKey}`,
    '',
    'Create a media buy (goes submitted, then completed a few seconds later; agent_id of the 3.1 seller for the same in 3.1):',
    '',
    `curl -s -X POST ${baseUrl}/v1/media-buys -H 'Authorization: Bearer ${apiKey}' -H 'Content-Type: application/json' -d '${JSON.stringify(body)}'`,
    '',
    `Then: curl -s ${baseUrl}/v1/operations/<id> -H 'Authorization: Bearer ${apiKey}'`,
    `and watch it deliver (a reporting period every ${config.ADCP_ORCH_SANDBOX_REPORT_INTERVAL_MS / 1000} s): curl -s ${baseUrl}/v1/media-buys -H 'Authorization: Bearer ${apiKey}'`,
    '',
  ].join('\n');
  return {
    seller,
    seller31,
    agent31Id: agent31.id,
    governance,
    apiKey,
    agentId: agent.id,
    governanceAgentId: govAgent.id,
    banner,
    close: async () => {
      await seller.close();
      await seller31.close();
      await governance.close();
    },
  };
}

/** POST /v1/agents/:id/refresh with the sandbox key; a failure is left to the maintenance round, which asks agents never asked. */
async function askCapabilities(baseUrl: string, apiKey: string, agentId: string): Promise<void> {
  try {
    await fetch(`${baseUrl}/v1/agents/${agentId}/refresh`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(15_000) });
  } catch {
    // Not answered: asked again on the next maintenance round.
  }
}
