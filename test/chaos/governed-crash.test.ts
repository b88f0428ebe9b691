/**
 * Crashes in a governed buy, with a real `serve` process killed by SIGKILL:
 * - between the approval and the seller call (the approval stored, the seller
 *   not reached: it is down), restarted at once and after the approval expired;
 * - between the seller's result and the outcome report (the report held at the
 *   governance agent's door, never delivered).
 * After the restart the buy is made once, with a token the seller accepts
 * (re-checked when the first one expired), and the outcome is reported once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { startSandboxGovernance, type SandboxGovernance } from '../../src/sandbox/governance/agent.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { plan } from '../helpers/governance.js';
import { governedRequest, sellerReceived } from '../helpers/governed.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { freePort } from '../helpers/ports.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';
import { startToolFaultProxy, type ToolFaultProxy } from '../helpers/tool-fault-proxy.js';

const ENV = { ADCP_ORCH_RETRY_ATTEMPTS: '20', ADCP_ORCH_CALL_TIMEOUT_MS: '3000', ADCP_ORCH_WARMUP_MS: '0', ADCP_ORCH_RECONCILE_INTERVAL_MS: '0' };

let governance: SandboxGovernance | undefined;
let seller: SandboxSeller | undefined;
let proxy: ToolFaultProxy | undefined;
let serve: ServeProcess | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await serve?.stop('SIGKILL');
  await seller?.close();
  await proxy?.close();
  await governance?.close();
  await database?.drop();
  serve = seller = proxy = governance = database = undefined;
});

interface Harness {
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs?: number): Promise<T>;
  port: number;
}

async function harness(): Promise<Harness> {
  database = tempSqlite();
  const port = await freePort();
  const store = await openStore(database.url);
  const apiKey = await store.tenants.createApiKey((await store.tenants.ensureTenant('chaos')).id);
  await store.close();
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const until = async <T,>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await check().catch(() => undefined);
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return { call, until, port };
}

/** Registers the agents, syncs a plan, and starts one governed buy; its id. */
async function governedBuy(h: Harness, sellerUrl: string, sellerJwks: string, governanceUrl: string): Promise<string> {
  const s = await h.call('POST', '/v1/agents', { name: 'seller', role: 'seller', protocol: 'mcp', url: sellerUrl, webhook_signing: { jwks_uri: sellerJwks } });
  const gv = await h.call('POST', '/v1/agents', { name: 'governance', role: 'governance', protocol: 'mcp', url: governanceUrl });
  expect([s.status, gv.status]).toEqual([201, 201]);
  const sync = await h.call('POST', '/v1/plans', { agent_id: gv.body.id, plans: [plan('plan_crash', { approved_sellers: [sellerUrl] })] });
  await h.until('the plan sync', async () => ((await h.call('GET', `/v1/operations/${sync.body.id}`)).body.status === 'completed' ? true : undefined));
  const buy = await h.call('POST', '/v1/media-buys', { agent_id: s.body.id, request: governedRequest(), governance: { agent_id: gv.body.id, plan_id: 'plan_crash' } });
  expect(buy.status).toBe(202);
  return buy.body.id as string;
}

describe('SIGKILL between the approval and the seller call', () => {
  for (const expired of [false, true]) {
    it(expired ? 'approval expired by the restart: re-checked, then sent once with the new token' : 'approval still valid at the restart: sent once with it', async () => {
      const h = await harness();
      governance = await startSandboxGovernance({ approvalTtlSeconds: expired ? 2 : 900, reviewDelayMs: null });
      // The seller is down: the approval is stored, and the call cannot reach it.
      const sellerPort = await freePort();
      const sellerUrl = `http://127.0.0.1:${sellerPort}/mcp`;
      serve = await startServeProcess({ databaseUrl: database!.url, port: h.port, env: ENV });
      const id = await governedBuy(h, sellerUrl, `http://127.0.0.1:${sellerPort}/.well-known/jwks.json`, governance.url);
      const approved = await h.until('the approval and a send that did not reach the seller', async () => {
        const op = (await h.call('GET', `/v1/operations/${id}`)).body;
        return op.governance?.check?.decision === 'approved' && op.events.some((e: any) => e.kind === 'send_failed') ? op : undefined;
      });
      await serve.stop('SIGKILL');
      if (expired) {
        const expiresAt = Date.parse(approved.governance.check.expires_at);
        await h.until('the approval to expire', async () => (Date.now() > expiresAt + 200 ? true : undefined), 10_000);
      }
      seller = await startSandboxSeller({ port: sellerPort, governance: { agentUrl: governance.url, jwksUrl: governance.jwksUrl } });
      serve = await startServeProcess({ databaseUrl: database!.url, port: h.port, env: ENV });

      const op = await h.until('the outcome report', async () => {
        const o = (await h.call('GET', `/v1/operations/${id}`)).body;
        return o.governance?.step === 'reported' ? o : undefined;
      });
      expect(op.status).toBe('completed');
      expect(sellerReceived(seller, op.idempotency_key)).toHaveLength(1);
      expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
      expect(seller.stats().governanceRefusals).toEqual([]);
      const checks = governance.stats().checks.filter((c) => c.payload.idempotency_key === op.idempotency_key);
      expect(checks.map((c) => c.status)).toEqual(expired ? ['approved', 'approved'] : ['approved']);
      expect(op.events.some((e: any) => e.kind === 'approval_expired')).toBe(expired);
      const outcomes = governance.stats().outcomes.filter((o) => o.plan_id === 'plan_crash');
      expect(outcomes).toMatchObject([{ outcome: 'completed', committed: 4_000, check_id: checks[checks.length - 1]!.check_id, replayed: false }]);
      expect(governance.stats().committedByPlan.plan_crash).toBe(4_000);
    }, 120_000);
  }
});

describe('SIGKILL between the seller result and the outcome report', () => {
  it('reports the outcome once after the restart, with the key stored with the result', async () => {
    const h = await harness();
    governance = await startSandboxGovernance({ reviewDelayMs: null });
    proxy = await startToolFaultProxy(governance.origin);
    proxy.set('report_plan_outcome', 'hold');
    seller = await startSandboxSeller({ governance: { agentUrl: governance.url, jwksUrl: governance.jwksUrl } });
    serve = await startServeProcess({ databaseUrl: database!.url, port: h.port, env: ENV });
    const id = await governedBuy(h, seller.url, seller.jwksUrl, `${proxy.origin}/mcp`);
    await proxy.waitFor('report_plan_outcome', 'hold');
    const owed = (await h.call('GET', `/v1/operations/${id}`)).body;
    expect(owed.status).toBe('completed');
    expect(owed.governance).toMatchObject({ step: 'reporting', outcome: { status: 'pending' } });
    const key = owed.governance.outcome.idempotency_key;
    await serve.stop('SIGKILL');

    proxy.set('report_plan_outcome', 'pass');
    serve = await startServeProcess({ databaseUrl: database!.url, port: h.port, env: ENV });
    const op = await h.until('the outcome report', async () => {
      const o = (await h.call('GET', `/v1/operations/${id}`)).body;
      return o.governance?.step === 'reported' ? o : undefined;
    });
    expect(op.governance.outcome).toMatchObject({ idempotency_key: key, status: 'accepted', committed_budget: 4_000 });
    expect(governance.stats().outcomeCallsByKey[key]).toBe(1);
    expect(governance.stats().outcomes.filter((o) => o.plan_id === 'plan_crash')).toHaveLength(1);
    expect(governance.stats().committedByPlan.plan_crash).toBe(4_000);
    expect(seller.stats().mediaBuysCreatedByKey[op.idempotency_key]).toBe(1);
  }, 120_000);
});
