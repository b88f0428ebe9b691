/**
 * Runs `adcp-orchestrator serve` as a real child process, for tests that stop,
 * kill and restart it. Ready when /readyz answers 200.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));

export interface ServeProcess {
  url: string;
  port: number;
  child: ChildProcess;
  output(): string;
  /** Sends the signal and resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdef';

export async function startServeProcess(opts: {
  databaseUrl: string;
  port?: number;
  env?: Record<string, string>;
  args?: string[];
  /** Flags for node itself, before the script (e.g. --expose-gc). */
  nodeArgs?: string[];
}): Promise<ServeProcess> {
  const port = opts.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), BIN, 'serve', '--port', String(port), '--db', opts.databaseUrl, ...(opts.args ?? [])], {
    env: {
      ...process.env,
      ADCP_ORCH_SECRET_KEY: TEST_SECRET_KEY,
      ADCP_ORCH_PUBLIC_URL: url,
      ADCP_ORCH_ALLOW_PRIVATE_NETWORK: 'true',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
      ADCP_ORCH_POLL_INTERVAL_MS: '200',
      ADCP_ORCH_SCHEDULER_TICK_MS: '100',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited early (${child.exitCode}):\n${out}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`serve not ready within 60 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    child,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
