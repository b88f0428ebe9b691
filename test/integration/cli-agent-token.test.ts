/** `agents add --token -` takes the token from standard input, never from the command line (visible in ps). */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));

function run(args: string[], env: Record<string, string>, stdin: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('exit', (code) => resolve({ code, out }));
    child.stdin.end(stdin);
  });
}

describe('agents add --token -', () => {
  let orch: TestOrchestrator;
  beforeAll(async () => (orch = await startOrchestrator()));
  afterAll(async () => orch?.close());

  it('reads the token from standard input and stores it sealed', async () => {
    const token = `cli-token-${Math.random().toString(36).slice(2)}-0123456789`;
    const { code, out } = await run(
      ['agents', 'add', '--name', 'cli-seller', '--agent-url', 'http://127.0.0.1:9/mcp', '--token', '-', '--url', orch.url, '--json'],
      { ADCP_ORCH_API_KEY: orch.apiKey },
      `${token}\n`,
    );
    expect(code).toBe(0);
    expect(out).not.toContain(token);
    const shown = JSON.parse(out);
    expect(shown.auth).toEqual({ scheme: 'bearer', token_set: true });
    const row = (await orch.app.store.agents.getForTenant(orch.tenantId, shown.id))!;
    expect(row.auth_token_enc).not.toContain(token);
    expect(orch.app.secrets.open(row.auth_token_enc!)).toBe(token);
  });

  it('refuses an empty standard input', async () => {
    const { code, out } = await run(['agents', 'add', '--name', 'empty', '--agent-url', 'http://127.0.0.1:9/mcp', '--token', '-', '--url', orch.url, '--json'], { ADCP_ORCH_API_KEY: orch.apiKey }, '');
    expect(code).not.toBe(0);
    expect(out).toContain('nothing on standard input');
    expect((await orch.api('GET', '/v1/agents')).body.agents.map((a: any) => a.name)).not.toContain('empty');
  });
});
