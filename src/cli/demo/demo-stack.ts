/**
 * What `adcp-orchestrator demo` runs, all in this process on loopback: the
 * orchestrator on a throw-away SQLite file, the sandbox governance agent, and
 * two sandbox sellers that trust it (accounts `gov_…` are governed), the first
 * speaking AdCP 3.0, the second 3.1 (so the campaign crosses both dialects), with
 * timings fast enough for the whole campaign to finish in seconds. The agents
 * are registered through the orchestrator's own API, as a user would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { App } from '../../app.js';
import { loadConfig } from '../../config.js';
import type { SandboxGovernance } from '../../sandbox/governance/agent.js';
import type { SandboxSeller } from '../../sandbox/seller.js';
import { callApi, type ApiTarget } from '../api-client.js';

export interface DemoStack {
  app: App;
  /** The operator's key: creates, reads. */
  operator: ApiTarget;
  /** The person's key (role approver), used when the demo answers as that person. */
  person: ApiTarget;
  personName: string;
  governance: SandboxGovernance;
  /** `adcpVersion`: the version the orchestrator speaks with the seller, as its registration answered. */
  sellers: Array<{ name: string; id: string; agent: SandboxSeller; adcpVersion: string }>;
  governanceId: string;
  close(): Promise<void>;
}

export const PERSON_KEY_NAME = 'demo-person';
/** Wall-clock time of one reporting period at the demo's sandbox sellers. */
export const DEMO_REPORT_INTERVAL_MS = 1200;

export async function startDemoStack(env: NodeJS.ProcessEnv = process.env): Promise<DemoStack> {
  const { createApp } = await import('../../app.js');
  const { createLogger } = await import('../../logger.js');
  const { startSandboxGovernance } = await import('../../sandbox/governance/agent.js');
  const { startSandboxSeller } = await import('../../sandbox/seller.js');
  const dir = mkdtempSync(join(tmpdir(), 'adcp-orch-demo-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    ADCP_ORCH_DATABASE_URL: `sqlite:${join(dir, 'demo.db')}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    ADCP_ORCH_PUBLIC_URL: base,
    ADCP_ORCH_SECRET_KEY: randomBytes(24).toString('hex'),
    ADCP_ORCH_ALLOW_PRIVATE_NETWORK: 'true',
    LOG_LEVEL: env.LOG_LEVEL ?? 'error',
    LOG_FORMAT: env.LOG_FORMAT ?? 'auto',
    ADCP_ORCH_POLL_INTERVAL_MS: '500',
    ADCP_ORCH_BACKUP_POLL_AFTER_MS: '5000',
    ADCP_ORCH_SCHEDULER_TICK_MS: '100',
    ADCP_ORCH_WARMUP_MS: '0',
    ADCP_ORCH_RECONCILE_INTERVAL_MS: '0',
    ADCP_ORCH_SSE_FALLBACK_POLL_MS: '250',
    ADCP_ORCH_SYNC_WAIT_MS: '3000',
    // The sandbox sellers review creatives within half a second: look every 200 ms.
    ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: '200',
    // The sandbox sellers fly compressed flights: their reports' periods run ahead of the wall clock.
    ADCP_ORCH_REPORT_CLOCK_SKEW_MS: String(10 * 366 * 86_400_000),
  });
  const closers: Array<() => Promise<unknown>> = [async () => rmSync(dir, { recursive: true, force: true })];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    const governance = await startSandboxGovernance({ reviewDelayMs: null });
    closers.push(() => governance.close());
    const sellerAgents: SandboxSeller[] = [];
    for (const adcpVersion of ['3.0', '3.1'] as const) {
      // A flight of six reporting periods flown in about ten seconds: the demo watches its buys deliver to the end.
      const s = await startSandboxSeller({
        submittedDelayMs: 1500,
        reportIntervalMs: DEMO_REPORT_INTERVAL_MS,
        statusStepMs: 500,
        creativeReviewMs: 400,
        governance: { agentUrl: governance.url, jwksUrl: governance.jwksUrl },
        adcpVersion,
        // The 3.1 seller requires signed creates and updates: the demo's buys there go signed with our key.
        ...(adcpVersion === '3.1' && { requireSignedRequests: { jwksUrl: `${base}/.well-known/jwks.json` } }),
      });
      closers.push(() => s.close());
      sellerAgents.push(s);
    }
    const app = await createApp({ config, logger: createLogger(config.LOG_LEVEL, { format: config.LOG_FORMAT }) });
    closers.push(() => app.close());
    await app.listen();
    const tenant = await app.store.tenants.ensureTenant('demo');
    const operator: ApiTarget = { url: base, apiKey: await app.store.tenants.createApiKey(tenant.id, { name: 'demo-operator', role: 'admin' }) };
    const person: ApiTarget = { url: base, apiKey: await app.store.tenants.createApiKey(tenant.id, { name: PERSON_KEY_NAME, role: 'approver' }) };
    const sellers: DemoStack['sellers'] = [];
    for (const [i, s] of sellerAgents.entries()) {
      const name = `sandbox-seller-${String.fromCharCode(97 + i)}`;
      const agent = await callApi<{ id: string; adcp_version: string }>(operator, 'POST', '/v1/agents', { name, role: 'seller', protocol: 'mcp', url: s.url, webhook_signing: { jwks_uri: s.jwksUrl } });
      sellers.push({ name, id: agent.id, agent: s, adcpVersion: agent.adcp_version });
    }
    const gov = await callApi<{ id: string }>(operator, 'POST', '/v1/agents', { name: 'sandbox-governance', role: 'governance', protocol: 'mcp', url: governance.url });
    return { app, operator, person, personName: PERSON_KEY_NAME, governance, sellers, governanceId: gov.id, close };
  } catch (err) {
    await close();
    throw err;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
