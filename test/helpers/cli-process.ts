/**
 * Runs `node bin/adcp-orchestrator.js …` as a real child process: to completion
 * (`runCli`), or live (`spawnCli`), where a test waits for the lines it expects
 * while the process is still running and then for its exit code.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface LiveCli {
  child: ChildProcess;
  /** Standard output lines so far, each with when it arrived. */
  lines: Array<{ text: string; at: number }>;
  stderr(): string;
  /** Resolves with the first line matching `pred` (waits for it to arrive). */
  waitForLine(pred: (line: string) => boolean, timeoutMs?: number): Promise<{ text: string; at: number }>;
  /** Resolves with the exit code (and when it exited). */
  exited: Promise<{ code: number | null; at: number }>;
  running(): boolean;
  /** Ends the process (SIGTERM) if it still runs, and waits for it. */
  stop(): Promise<void>;
}

/** Nothing from the environment that would point the CLI elsewhere: each test says --url and --api-key. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.ADCP_ORCH_URL;
  delete env.ADCP_ORCH_API_KEY;
  return env;
}

export function spawnCli(args: string[], env: Record<string, string> = {}): LiveCli {
  const child = spawn(process.execPath, [BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: LiveCli['lines'] = [];
  let err = '';
  let partial = '';
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    partial += chunk;
    let nl: number;
    while ((nl = partial.indexOf('\n')) >= 0) {
      lines.push({ text: partial.slice(0, nl), at: Date.now() });
      partial = partial.slice(nl + 1);
    }
    wake();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  let running = true;
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('close', (code) => {
      if (partial) lines.push({ text: partial, at: Date.now() });
      running = false;
      wake();
      resolve({ code, at: Date.now() });
    }),
  );
  return {
    child,
    lines,
    stderr: () => err,
    exited,
    running: () => running,
    waitForLine(pred, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find((l) => pred(l.text));
          if (found) {
            done();
            resolve(found);
          } else if (!running) {
            done();
            reject(new Error(`the process exited without the line; stdout:\n${lines.map((l) => l.text).join('\n')}\nstderr:\n${err}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no such line within ${timeoutMs} ms; stdout:\n${lines.map((l) => l.text).join('\n')}\nstderr:\n${err}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async stop() {
      if (running) child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const live = spawnCli(args, env);
  const { code } = await live.exited;
  return { code, stdout: live.lines.map((l) => `${l.text}\n`).join(''), stderr: live.stderr() };
}
