/**
 * Browser tests drive Debian's chromium (headless) through playwright-core against
 * a real `serve --sandbox` process. Without chromium they are skipped, unless
 * REQUIRE_BROWSER=1 (as .ci/run sets): then a missing browser fails the run.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { describe } from 'vitest';

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

// The `serve --sandbox` process the browser tests drive lives in its own helper (the CLI tests use it too).
export { startSandboxServer, type SandboxServer } from './sandbox-server.js';

/** Signs a fresh page in with a key; resolves on the operations page. */
export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${baseUrl}/operations`);
}
