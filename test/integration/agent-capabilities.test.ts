/**
 * Each agent is asked what it supports when it is registered (and on refresh): the
 * answer is kept and shown, the version we speak with it follows from it, and a
 * declaration we cannot trust is refused with its reason, the agent then spoken to
 * as 3.0. A seller without task tools is never asked for them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { startHostileSeller, type HostileSeller } from '../helpers/hostile-seller.js';
import { startOrchestrator, waitForStatus, type TestOrchestrator } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';

let orch: TestOrchestrator | undefined;
let seller: SandboxSeller | undefined;
let hostile: HostileSeller | undefined;
afterEach(async () => {
  await orch?.close();
  await seller?.close();
  await hostile?.close();
  orch = seller = hostile = undefined;
});

const declaring = (adcp: Record<string, unknown>) => ({ body: { adcp, supported_protocols: ['media_buy'] } });

async function register(o: TestOrchestrator, url: string): Promise<any> {
  const res = await o.api('POST', '/v1/agents', { name: `agent-${url.slice(-12)}`, role: 'seller', url, protocol: 'mcp' });
  expect(res.status).toBe(201);
  return res.body;
}

describe('agent capabilities', () => {
  it('are asked at registration, shown, and pin the major version on every request to a seller that declares it', async () => {
    seller = await startSandboxSeller({});
    orch = await startOrchestrator();
    const agent = await register(orch, seller.url);
    expect(agent).toMatchObject({
      adcp_version: '3.0',
      capabilities_error: null,
      capabilities: {
        fetched_at: expect.any(String),
        adcp: { major_versions: [3], supported_versions: null, idempotency: { supported: true, replay_ttl_seconds: 86400 } },
        webhook_signing: { supported: true },
        protocols: expect.arrayContaining(['media_buy']),
      },
    });
    expect((await orch.api('GET', `/v1/agents/${agent.id}`)).body.capabilities).toEqual(agent.capabilities);
    const created = await orch.api('POST', '/v1/media-buys', { agent_id: agent.id, request: mediaBuyRequest('sandbox_instant'), webhook: 'none' });
    expect(created.body.request).toMatchObject({ adcp_major_version: 3 });
    expect(created.body.request.adcp_version).toBeUndefined();
    await waitForStatus(orch, created.body.id, ['completed']);
    const calls = seller.stats().calls.filter((c) => c.tool === 'create_media_buy');
    expect(calls.map((c) => [c.args.adcp_major_version, c.valid])).toEqual([[3, true]]);
  });

  it('refuses a declaration it cannot trust, keeps the reason, and speaks 3.0; a refresh asks again', async () => {
    hostile = await startHostileSeller();
    orch = await startOrchestrator();
    hostile.set('get_adcp_capabilities', declaring({ major_versions: [3], supported_versions: ['3.1'], idempotency: { supported: true, replay_ttl_seconds: -60 } }));
    const agent = await register(orch, hostile.mcpUrl);
    expect(agent).toMatchObject({ adcp_version: '3.0', capabilities: null, capabilities_error: expect.stringMatching(/^capabilities refused: adcp\.idempotency.*spoken to as AdCP 3\.0$/) });

    hostile.set('get_adcp_capabilities', declaring({ major_versions: [3], supported_versions: ['3.0', '3.1'], idempotency: { supported: false } }));
    // Only an admin may ask again.
    const viewerKey = await orch.app.store.tenants.createApiKey(orch.tenantId, { name: 'watcher', role: 'viewer' });
    const refused = await fetch(`${orch.url}/v1/agents/${agent.id}/refresh`, { method: 'POST', headers: { authorization: `Bearer ${viewerKey}` } });
    expect(refused.status).toBe(403);
    const refreshed = await orch.api('POST', `/v1/agents/${agent.id}/refresh`);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ adcp_version: '3.1', capabilities_error: null, capabilities: { adcp: { idempotency: { supported: false } } } });
    expect(Date.parse(refreshed.body.capabilities.fetched_at)).toBeGreaterThanOrEqual(Date.parse(agent.created_at));
    expect((await orch.api('POST', '/v1/agents/no-such-agent/refresh')).status).toBe(404);
  });

  it('never asks a seller for task tools it does not list: reconciliation says it is not supported', async () => {
    hostile = await startHostileSeller({ tools: ['get_adcp_capabilities', 'get_products', 'create_media_buy'] });
    orch = await startOrchestrator();
    hostile.set('get_adcp_capabilities', declaring({ major_versions: [3], supported_versions: ['3.0', '3.1'], idempotency: { supported: true, replay_ttl_seconds: 86400 } }));
    const agent = await register(orch, hostile.mcpUrl);
    expect(agent.adcp_version).toBe('3.1');
    const report = await orch.api('POST', '/v1/reconcile', { agent_id: agent.id });
    expect(report.body.reports[0]).toMatchObject({ agent_id: agent.id, error: { code: 'NOT_SUPPORTED', message: expect.stringMatching(/no tool to list tasks \(neither list_tasks nor tasks\/list\)/) } });
    expect(hostile.calls.map((c) => c.tool)).toEqual(['get_adcp_capabilities']);
  });

  it('keeps what an agent said before when it cannot be reached', async () => {
    hostile = await startHostileSeller();
    orch = await startOrchestrator({ env: { ADCP_ORCH_CALL_TIMEOUT_MS: '1000' } });
    hostile.set('get_adcp_capabilities', declaring({ major_versions: [3], supported_versions: ['3.0', '3.1'], idempotency: { supported: true, replay_ttl_seconds: 7200 } }));
    const agent = await register(orch, hostile.mcpUrl);
    expect(agent.adcp_version).toBe('3.1');
    hostile.set('get_adcp_capabilities', 'drip');
    const refreshed = (await orch.api('POST', `/v1/agents/${agent.id}/refresh`)).body;
    expect(refreshed).toMatchObject({ adcp_version: '3.1', capabilities: { adcp: { idempotency: { replay_ttl_seconds: 7200 } } }, capabilities_error: expect.stringMatching(/^could not ask for capabilities/) });
  });
});
