/**
 * `adcp-orchestrator signing-keys list|rotate` as child processes on the database of a
 * running orchestrator: list shows the key that signs (never key material), rotate
 * publishes a new key that the running instance signs with once it reads the table
 * again; bad input exits 2. And `serve` with a signing key file that is missing or
 * not an Ed25519 private key stops at start with a message naming the variable, exit 2.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startOrchestrator, type TestOrchestrator } from '../helpers/orchestrator.js';

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));
const SECRET = 'test-secret-key-0123456789abcdef';

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ADCP_ORCH_SECRET_KEY: SECRET, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

describe('signing-keys command line', () => {
  let orch: TestOrchestrator;
  beforeAll(async () => {
    orch = await startOrchestrator();
  });
  afterAll(async () => orch?.close());
  const db = () => ['--db', orch.database.url];

  it('lists the key that signs, and rotate publishes a new one the running instance signs with', async () => {
    const kid = (await orch.app.signingKeys.signingKey())!.kid;
    const list = await cli(['signing-keys', 'list', ...db()]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${kid}  signing  generated  from \\S+  published\\n$`));
    const json = JSON.parse((await cli(['signing-keys', 'list', '--json', ...db()])).stdout);
    expect(json.keys).toEqual([expect.objectContaining({ kid, state: 'signing', source: 'generated', published_until: null })]);
    expect(JSON.stringify(json)).not.toMatch(/"d"|private/);

    const rotated = await cli(['signing-keys', 'rotate', '--activate-in', '0', ...db()]);
    expect(rotated.code, rotated.stderr).toBe(0);
    const fresh = /^new key (\S+): published now, signs from /.exec(rotated.stdout)![1]!;
    expect(rotated.stdout).toContain(`replaced ${kid}: published until `);
    // The running instance reads the table again within 10 s: it publishes and signs with the new key.
    await eventually(async () => ((await orch.app.signingKeys.signingKey())!.kid === fresh ? true : undefined), 15_000, 200);
    const published = (await (await fetch(`${orch.url}/.well-known/jwks.json`)).json()).keys.map((k: any) => k.kid);
    expect(published.sort()).toEqual([kid, fresh].sort());
    const after = (await cli(['signing-keys', 'list', ...db()])).stdout.trim().split('\n');
    expect(after[0]).toMatch(new RegExp(`^${fresh}  signing `));
    expect(after[1]).toMatch(new RegExp(`^${kid}  retired .* published until \\S+$`));
  });

  it('refuses a bad --activate-in with exit code 2, touching nothing', async () => {
    const before = await orch.app.signingKeys.list();
    const bad = await cli(['signing-keys', 'rotate', '--activate-in', 'soon', ...db()]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--activate-in must be whole milliseconds/);
    expect(await orch.app.signingKeys.list()).toEqual(before);
  });
});

describe('serve with a bad ADCP_ORCH_SIGNING_KEY_FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-serve-keyfile-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const serve = (keyFile: string) =>
    cli(['serve', '--port', '0', '--db', `sqlite:${join(dir, 'orchestrator.db')}`], { ADCP_ORCH_SIGNING_KEY_FILE: keyFile, LOG_LEVEL: 'silent' });

  it('stops at start when the file is missing', async () => {
    const run = await serve(join(dir, 'missing.pem'));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/ADCP_ORCH_SIGNING_KEY_FILE: cannot read .*missing\.pem: no such file/);
  });

  it('stops at start when the file holds another kind of key', async () => {
    const path = join(dir, 'ec.pem');
    writeFileSync(path, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const run = await serve(path);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/ADCP_ORCH_SIGNING_KEY_FILE: .*ec\.pem holds an ec key, not an Ed25519 key/);
    expect(run.stderr).not.toMatch(/BEGIN|PRIVATE/);
  });
});
