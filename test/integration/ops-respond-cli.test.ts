/**
 * `adcp-orchestrator ops respond` as a child process against a running
 * orchestrator: a wrong combination of flags or an answer the API refuses exits
 * non-zero with the reason and changes nothing; a good answer prints the operation.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

describe('ops respond', () => {
  let seller: SandboxSeller;
  let orch: TestOrchestrator;
  let agentId: string;

  beforeAll(async () => {
    seller = await startSandboxSeller();
    orch = await startOrchestrator();
    agentId = await orch.registerAgent({ url: seller.url });
  });
  afterAll(async () => {
    await orch?.close();
    await seller?.close();
  });

  it('answers a held buy, refusing bad flags and answers the API refuses', async () => {
    const op = (await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_instant'), approval: 'required', webhook: 'none' })).body;
    const env = { ADCP_ORCH_URL: orch.url, ADCP_ORCH_API_KEY: orch.apiKey };

    const both = await cli(['ops', 'respond', op.id, '--approve', '--reject'], env);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/exactly one of --approve, --reject, --params/);
    const noReason = await cli(['ops', 'respond', op.id, '--reject'], env);
    expect(noReason.code).toBe(1);
    expect(noReason.stderr).toMatch(/400 message_required/);
    expect((await orch.api('GET', `/v1/operations/${op.id}`)).body).toMatchObject({ status: 'requested', needs_input: true });

    const rejected = await cli(['ops', 'respond', op.id, '--reject', '--message', 'not now'], env);
    expect(rejected.code).toBe(0);
    expect(rejected.stdout).toContain(op.id);
    expect(rejected.stdout).toContain('rejected');
    const shown = (await orch.api('GET', `/v1/operations/${op.id}`)).body;
    expect(shown.events.find((e: any) => e.kind === 'answered')).toMatchObject({ detail: { decision: 'reject', message: 'not now' } });
    expect(seller.stats().calls.filter((c) => c.tool === 'create_media_buy')).toEqual([]);
  });
});
