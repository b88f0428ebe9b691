/**
 * `adcp-orchestrator serve` as child processes, started the way an operator starts
 * them (bin/adcp-orchestrator.js), for benches that run several instances on one
 * database. Ready when /readyz answers 200; killed at the bench's exit if still running.
 * Their output is drained (a full pipe would block them) and its tail kept for errors.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../../test/helpers/ports.js';
import { BENCH_SECRET_KEY, onExit, REPO_ROOT, sleep } from './common.js';

export interface ServeInstance {
  url: string;
  pid: number;
  /** When /readyz first answered 200 (epoch ms). */
  readyAt: number;
  /** The last few kilobytes it wrote. */
  output(): string;
  /** SIGTERM (a graceful stop) and wait for the exit. */
  stop(): Promise<void>;
}

const BIN = join(REPO_ROOT, 'bin/adcp-orchestrator.js');
const KEEP_OUTPUT = 8_192;

export async function startServe(databaseUrl: string, env: Record<string, string> = {}): Promise<ServeInstance> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [BIN, 'serve', '--db', databaseUrl, '--port', String(port)], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ADCP_ORCH_SECRET_KEY: BENCH_SECRET_KEY,
      ADCP_ORCH_PUBLIC_URL: url,
      ADCP_ORCH_ALLOW_PRIVATE_NETWORK: 'true',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString('utf8')).slice(-KEEP_OUTPUT);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  onExit(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited early (${child.exitCode}):\n${out}`);
    if (await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`serve not ready within 120 s:\n${out}`);
    }
    await sleep(50);
  }
  return {
    url,
    pid: child.pid!,
    readyAt: Date.now(),
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
