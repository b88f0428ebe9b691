/**
 * The console: a person running `serve` in a terminal reads plain log lines, a log
 * collector reading a pipe gets one JSON object per line, and LOG_FORMAT=json forces
 * JSON even on a terminal. The terminal is a real pseudo-terminal (util-linux `script`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/ports.js';
import { TEST_SECRET_KEY } from '../helpers/serve-process.js';

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs `serve` until it logs that it is ready, then stops it; returns everything it printed. */
async function runServe(opts: { tty: boolean; env?: Record<string, string> }): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-console-'));
  dirs.push(dir);
  const port = await freePort();
  const serveArgs = [BIN, 'serve', '--port', String(port), '--db', `sqlite:${join(dir, 'o.db')}`];
  // LOG_FORMAT only as the test says: one set in the developer's shell must not decide the outcome.
  const { LOG_FORMAT: _ignored, ...inherited } = process.env;
  const env: Record<string, string | undefined> = { ...inherited, ADCP_ORCH_SECRET_KEY: TEST_SECRET_KEY, LOG_LEVEL: 'info', ADCP_ORCH_RECONCILE_INTERVAL_MS: '0', ...opts.env };
  const quoted = serveArgs.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = opts.tty
    ? spawn('script', ['-q', '-e', '-c', `${process.execPath} ${quoted}`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(process.execPath, serveArgs, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in 60 s:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('orchestrator ready')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await ready;
  } finally {
    // `script` passes the signal on to the session it runs.
    child.kill('SIGTERM');
    await exited;
  }
  return out;
}

const logLines = (out: string) => out.split(/\r?\n/).filter((l) => l.includes('orchestrator ready'));

describe('console logs', () => {
  it('are readable lines on a terminal, not JSON', async () => {
    const lines = logLines(await runServe({ tty: true }));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line.trim().startsWith('{')).toBe(false);
      expect(line).toMatch(/INFO/);
    }
  });

  it('are one JSON object per line on a pipe', async () => {
    const lines = logLines(await runServe({ tty: false }));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ msg: 'orchestrator ready', level: 30 });
  });

  it('are JSON on a terminal too with LOG_FORMAT=json', async () => {
    const lines = logLines(await runServe({ tty: true, env: { LOG_FORMAT: 'json' } }));
    expect(lines.length).toBeGreaterThan(0);
    // A terminal may add carriage returns; the line itself is JSON.
    for (const line of lines) expect(JSON.parse(line.trim())).toMatchObject({ msg: 'orchestrator ready' });
  });
});
