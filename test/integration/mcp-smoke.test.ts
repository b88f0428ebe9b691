import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { connectMcp, textOf } from '../helpers/mcp-client.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';

describe('smoke', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;
  beforeAll(async () => {
    seller = await startSandboxSeller({ port: 0 });
    orch = await startOrchestrator();
    agentId = await orch.registerAgent({ url: seller.url });
  });
  afterAll(async () => {
    await orch?.close();
    await seller?.close();
  });
  it('works', async () => {
    const c = await connectMcp(orch.url, orch.apiKey);
    const tools = await c.client.listTools();
    console.log(tools.tools.map((t) => t.name));
    const r = await c.call('create_media_buy', { agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), idempotency_key: 'k1' });
    console.log(JSON.stringify(r).slice(0, 500), textOf(r));
    const r2 = await c.call('create_media_buy', { agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), idempotency_key: 'k1' });
    console.log(textOf(r2));
    await c.close();
  });
});
