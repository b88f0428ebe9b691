/**
 * `npm start`'s sandbox (serve --sandbox) exercises signed requests: its 3.1 seller
 * requires our creates signed, declares so in its capabilities, and verifies them
 * against the JWKS we publish; the banner says where our keys are.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { setUpSandbox, type SandboxSetup } from '../../src/cli/sandbox-setup.js';
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

it("the 3.1 seller requires signed creates and takes ours, verified with the key we publish", async () => {
  const agent = await (await fetch(`${orch.url}/v1/agents/${setup.agent31Id}`, { headers: { authorization: `Bearer ${setup.apiKey}` } })).json();
  expect(agent.capabilities.request_signing).toMatchObject({ supported: true, required_for: ['create_media_buy', 'update_media_buy'] });
  expect(setup.banner).toContain(`our signing keys:   ${orch.url}/.well-known/jwks.json`);
  const res = await fetch(`${orch.url}/v1/media-buys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${setup.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: setup.agent31Id, request: liveBuyRequest(['sandbox_instant']), webhook: 'none' }),
  });
  expect(res.status).toBe(202);
  expect(((await res.json()) as { status: string }).status).toBe('completed'); // within the API's wait
  const kid = (await orch.app.signingKeys.signingKey())!.kid;
  expect(setup.seller31.requestSignatures!.records().filter((r) => r.operation === 'create_media_buy')).toEqual([expect.objectContaining({ outcome: 'verified', keyid: kid })]);
  // The 3.0 seller declares no request signing: nothing to it is signed.
  expect(setup.seller.requestSignatures).toBeUndefined();
});
