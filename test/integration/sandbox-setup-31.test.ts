/**
 * What `serve --sandbox` (`npm start`) serves: two sandbox sellers, one speaking
 * AdCP 3.0 (`sandbox-seller`) and one 3.1 (`sandbox-seller-3.1`), both registered
 * and asked for their capabilities at once, so each is spoken to in its own version
 * from the first request; the banner says which is which.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { setUpSandbox, SANDBOX_SELLER_31_NAME, type SandboxSetup } from '../../src/cli/sandbox-setup.js';
import { liveBuyRequest } from '../helpers/live-buys.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';

let orch: TestOrchestrator;
let setup: SandboxSetup;
beforeAll(async () => {
  orch = await startOrchestrator();
  setup = await setUpSandbox(orch.app, orch.config, orch.url, {});
});
afterAll(async () => {
  await setup?.close();
  await orch?.close();
});

const get = async (path: string) => (await fetch(`${orch.url}${path}`, { headers: { authorization: `Bearer ${setup.apiKey}` } })).json() as Promise<any>;

it('registers a 3.0 and a 3.1 seller, each spoken to in its version, and says which is which', async () => {
  const old = await get(`/v1/agents/${setup.agentId}`);
  const v31 = await get(`/v1/agents/${setup.agent31Id}`);
  expect(old).toMatchObject({ name: 'sandbox-seller', url: setup.seller.url, adcp_version: '3.0' });
  expect(v31).toMatchObject({ name: SANDBOX_SELLER_31_NAME, url: setup.seller31.url, adcp_version: '3.1', capabilities: { adcp: { supported_versions: ['3.0', '3.1'] } } });
  expect(setup.banner).toContain(`sandbox seller:     ${setup.seller.url} (agent ${setup.agentId}; AdCP 3.0)`);
  expect(setup.banner).toContain(`sandbox seller 3.1: ${setup.seller31.url} (agent ${setup.agent31Id}`);

  // The first buy at the 3.1 seller already goes in 3.1.
  const res = await fetch(`${orch.url}/v1/media-buys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${setup.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: setup.agent31Id, request: liveBuyRequest(['sandbox_instant']), webhook: 'none' }),
  });
  expect(res.status).toBe(202);
  expect(((await res.json()) as { status: string }).status).toBe('completed');
  const call = setup.seller31.stats().calls.find((c) => c.tool === 'create_media_buy');
  expect(call).toMatchObject({ valid: true, args: { adcp_major_version: 3, adcp_version: '3.1' } });
});
