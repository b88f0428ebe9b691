/**
 * The key `serve --sandbox` prints (what setUpSandbox does at start): an admin key
 * named sandbox-admin, ADCP_ORCH_API_KEY adopted as is and unchanged on every
 * later start, a freshly minted one taking the next free name. And the agents it
 * registers: the seller, and the governance agent the seller trusts.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setUpSandbox, type SandboxSetup } from '../../src/cli/sandbox-setup.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';

describe('the sandbox key', () => {
  let orch: TestOrchestrator;
  const setups: SandboxSetup[] = [];
  const given = 'my-sandbox-key-from-the-environment';

  beforeAll(async () => {
    orch = await startOrchestrator();
  });
  afterAll(async () => {
    for (const s of setups) await s.close();
    await orch?.close();
  });

  const start = async (apiKey?: string) => {
    const setup = await setUpSandbox(orch.app, { ...orch.config, ADCP_ORCH_API_KEY: apiKey }, orch.url);
    setups.push(setup);
    return setup;
  };
  const post = (key: string, path: string, body: unknown) =>
    fetch(`${orch.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('adopts ADCP_ORCH_API_KEY as an admin named sandbox-admin, the same on every start, and it can do what an admin can', async () => {
    const first = await start(given);
    expect(first.apiKey).toBe(given);
    expect(first.banner).toContain(given);
    const stored = (await orch.app.store.tenants.findApiKey(given))!;
    expect(stored.tenant.name).toBe('sandbox');
    expect(stored.key).toMatchObject({ name: 'sandbox-admin', role: 'admin' });

    const again = await start(given);
    expect(again.apiKey).toBe(given);
    expect(await orch.app.store.tenants.listApiKeys(stored.tenant.id)).toEqual([stored.key]);

    const buy = await post(given, '/v1/media-buys', { agent_id: again.agentId, request: mediaBuyRequest('sandbox_instant'), webhook: 'none' });
    expect(buy.status).toBe(202);
    const agent = await post(given, '/v1/agents', { name: 'another-seller', role: 'seller', url: again.seller.url, protocol: 'mcp' });
    expect(agent.status).toBe(201);
  });

  it('starts the governance agent beside the seller, registers it with role governance, and the seller trusts it', async () => {
    const setup = await start(given);
    const stored = (await orch.app.store.tenants.findApiKey(given))!;
    const gov = (await orch.app.store.agents.get(setup.governanceAgentId))!;
    expect(gov).toMatchObject({ tenant_id: stored.tenant.id, name: 'sandbox-governance', role: 'governance', url: setup.governance.url, protocol: 'mcp' });
    expect(setup.banner).toContain(`sandbox governance: ${setup.governance.url} (agent ${setup.governanceAgentId}`);
    // A restart points the same registration at the new address.
    const again = await start(given);
    expect(again.governanceAgentId).toBe(setup.governanceAgentId);
    expect((await orch.app.store.agents.get(again.governanceAgentId))!.url).toBe(again.governance.url);

    // The seller verifies tokens from this governance agent: an unauthorised governed buy is refused.
    const buy = await post(given, '/v1/media-buys', {
      agent_id: again.agentId,
      request: mediaBuyRequest('sandbox_instant', { account: { account_id: 'gov_acme' }, plan_id: 'plan_x' }),
      webhook: 'none',
    });
    expect(buy.status).toBe(202);
    await vi.waitFor(() => expect(again.seller.stats().governanceRefusals.map((r) => r.code)).toEqual(['governance_context_missing']), { timeout: 10_000 });
    expect(again.seller.stats().mediaBuysCreated).toBe(0);
  });

  it('mints an admin key when none is given, named sandbox-admin-<id> once sandbox-admin is taken', async () => {
    const minted = await start();
    expect(minted.apiKey).not.toBe(given);
    const stored = (await orch.app.store.tenants.findApiKey(minted.apiKey))!;
    expect(stored.key.role).toBe('admin');
    expect(stored.key.name).toMatch(/^sandbox-admin-[0-9a-f]{8}$/);
    expect((await orch.app.store.tenants.findApiKey(given))!.key.name).toBe('sandbox-admin');
  });
});
