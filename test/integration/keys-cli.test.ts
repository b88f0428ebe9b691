/**
 * `adcp-orchestrator keys create|list` as child processes against the database of
 * a running orchestrator: the new key alone on the last line of standard output,
 * working at once with the role it was given; bad input exits 2 with a clear
 * message and stores nothing; listings never show a key.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('keys command line', () => {
  let orch: TestOrchestrator;
  let agentId: string;
  const tenant = 'test-tenant';

  beforeAll(async () => {
    orch = await startOrchestrator();
    agentId = await orch.registerAgent({ url: 'http://127.0.0.1:9/mcp' });
  });
  afterAll(async () => orch?.close());

  const db = () => ['--db', orch.database.url];
  const as = (key: string, method: string, path: string, body?: unknown) =>
    fetch(`${orch.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const keyCount = async () => (await orch.app.store.tenants.listApiKeys(orch.tenantId)).length;

  it('creates a named key with a role: printed alone on the last line, and it works with that role only', async () => {
    const run = await cli(['keys', 'create', '--tenant', tenant, '--name', 'ci bot', '--role', 'operator', ...db()]);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    const key = lines[lines.length - 1]!;
    expect(key).toMatch(/^aok_[A-Za-z0-9_-]{43}$/);
    expect(run.stderr).toContain("'ci bot' (operator)");

    expect((await as(key, 'GET', '/v1/operations')).status).toBe(200);
    const created = await as(key, 'POST', '/v1/operations', { agent_id: agentId, task: 'get_products', params: { buying_mode: 'brief', brief: 'cli' }, webhook: 'none' });
    expect(created.status).toBe(202);
    const op = (await (await as(key, 'GET', `/v1/operations/${(await created.json()).id}`)).json()) as { events: Array<{ kind: string; actor: string | null }> };
    expect(op.events[0]).toMatchObject({ kind: 'created', actor: 'ci bot' });
    const agent = await as(key, 'POST', '/v1/agents', { name: 'nope', role: 'seller', url: 'http://127.0.0.1:9/mcp', protocol: 'mcp' });
    expect(agent.status).toBe(403);
    expect((await agent.json()).error).toEqual({ code: 'forbidden', message: "this action needs the admin role; key 'ci bot' has operator" });
  });

  it('defaults to an admin key named after its prefix', async () => {
    const run = await cli(['keys', 'create', '--tenant', tenant, ...db()]);
    expect(run.code, run.stderr).toBe(0);
    const key = run.stdout.trimEnd().split('\n').pop()!;
    const holder = await orch.app.store.tenants.findApiKey(key);
    expect(holder?.key).toMatchObject({ role: 'admin', name: `key-${key.slice(0, 8)}` });
    expect((await as(key, 'POST', '/v1/agents', { name: 'by-default-key', role: 'seller', url: 'http://127.0.0.1:9/mcp', protocol: 'mcp' })).status).toBe(201);
  });

  it('refuses a bad role, a bad name and a name already used: exit 2, a clear message, nothing stored', async () => {
    const before = await keyCount();
    const badRole = await cli(['keys', 'create', '--tenant', tenant, '--role', 'superuser', ...db()]);
    expect(badRole.code).toBe(2);
    expect(badRole.stdout).toBe('');
    expect(badRole.stderr).toContain("--role must be one of viewer, operator, approver, admin (got 'superuser')");

    const badName = await cli(['keys', 'create', '--tenant', tenant, '--name', 'two\nlines', ...db()]);
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('--name must not contain control characters');

    const taken = await cli(['keys', 'create', '--tenant', tenant, '--name', 'ci bot', '--role', 'admin', ...db()]);
    expect(taken.code).toBe(2);
    expect(taken.stdout).toBe('');
    expect(taken.stderr).toContain(`tenant "${tenant}" already has a key named 'ci bot'`);
    expect(await keyCount()).toBe(before);
  });

  it('lists names, roles, prefixes and creation times, never a key', async () => {
    const keys = await orch.app.store.tenants.listApiKeys(orch.tenantId);
    const run = await cli(['keys', 'list', '--tenant', tenant, ...db()]);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(keys.length);
    const ciBot = lines.find((l) => l.endsWith('  ci bot'))!;
    expect(ciBot).toMatch(/^aok_\S{4}…\s+operator\s+\d{4}-\d\d-\d\dT[\d:.]+Z  ci bot$/);
    expect(run.stdout).not.toContain(orch.apiKey);

    const json = await cli(['keys', 'list', '--tenant', tenant, '--json', ...db()]);
    const listed = JSON.parse(json.stdout);
    expect(listed.keys.map((k: { name: string }) => k.name).sort()).toEqual(keys.map((k) => k.name).sort());
    expect(Object.keys(listed.keys[0]).sort()).toEqual(['created_at', 'id', 'name', 'prefix', 'role']);

    const unknown = await cli(['keys', 'list', '--tenant', 'no-such-tenant', ...db()]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no tenant named "no-such-tenant"');
  });
});
