/**
 * Browser tests drive Debian's chromium (headless) through playwright-core against
 * a real `serve --sandbox` process. Without chromium they are skipped, unless
 * REQUIRE_BROWSER=1 (as .ci/run sets): then a missing browser fails the run.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { describe } from 'vitest';
import { tempSqlite, type TestDatabase } from './databases.js';
import { eventually } from './orchestrator.js';
import { startServeProcess, type ServeProcess } from './serve-process.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const browserAvailable = existsSync(CHROMIUM_PATH);

if (process.env.REQUIRE_BROWSER === '1' && !browserAvailable) {
  throw new Error(`REQUIRE_BROWSER=1 but no chromium at ${CHROMIUM_PATH} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
}

/** `describe`, or `describe.skip` when there is no browser to drive. */
export const describeInBrowser = browserAvailable ? describe : describe.skip;

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true });
}

/** Screenshots are test artifacts, kept under test-results/ (not committed). */
export const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = `${RESULTS_DIR}${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));

/** A `serve --sandbox` process on a fresh SQLite file, with a known admin key and the sandbox seller's agent id. */
export interface SandboxServer {
  serve: ServeProcess;
  database: TestDatabase;
  adminKey: string;
  sellerId: string;
  /** `keys create --tenant sandbox --name N --role R` against its database; returns the key. */
  createKey(name: string, role: string): Promise<string>;
  api(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startSandboxServer(env: Record<string, string> = {}): Promise<SandboxServer> {
  const database = tempSqlite();
  const adminKey = `browser-test-admin-${Date.now().toString(36)}-key`;
  const serve = await startServeProcess({ databaseUrl: database.url, args: ['--sandbox'], env: { ADCP_ORCH_API_KEY: adminKey, ...env } });
  const api: SandboxServer['api'] = async (key, method, path, body) => {
    const res = await fetch(`${serve.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  // Ready comes before the sandbox is set up (its key and seller are stored just after listening).
  const seller = await eventually(async () => {
    const agents = await api(adminKey, 'GET', '/v1/agents');
    return agents.status === 200 ? (agents.body.agents as Array<{ id: string; name: string }>).find((a) => a.name === 'sandbox-seller') : undefined;
  }, 30_000);
  return {
    serve,
    database,
    adminKey,
    sellerId: seller.id,
    api,
    createKey: (name, role) =>
      new Promise((resolve, reject) => {
        execFile(process.execPath, [BIN, 'keys', 'create', '--tenant', 'sandbox', '--name', name, '--role', role, '--db', database.url], (err, stdout, stderr) => {
          if (err) return reject(new Error(`keys create failed: ${stderr}`));
          const lines = stdout.trimEnd().split('\n');
          resolve(lines[lines.length - 1]!);
        });
      }),
    async close() {
      await serve.stop();
      await database.drop();
    },
  };
}

/** Signs a fresh page in with a key; resolves on the operations page. */
export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${baseUrl}/operations`);
}
