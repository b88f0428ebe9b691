/**
 * Shared bench helpers: temp directories that are removed on exit, percentiles,
 * a results table with target and pass/miss, and running a TypeScript child
 * process through tsx.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_SECRET_KEY = 'bench-secret-key-0123456789abcdef';
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

const cleanups: Array<() => void> = [];
let exitHooked = false;

/** Runs at process exit (also on SIGINT/SIGTERM), last registered first. */
export function onExit(fn: () => void): void {
  cleanups.push(fn);
  if (exitHooked) return;
  exitHooked = true;
  const runAll = () => {
    while (cleanups.length) {
      try {
        cleanups.pop()!();
      } catch {
        /* best effort */
      }
    }
  };
  process.on('exit', runAll);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      runAll();
      process.exit(130);
    });
  }
}

/** A fresh directory under the OS temp dir, removed when the process exits. */
export function tempDir(prefix = 'adcp-bench-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onExit(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

export function fmt(n: number, digits = 0): string {
  if (!Number.isFinite(n)) return String(n);
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export interface ResultRow {
  figure: string;
  value: string;
  target?: string;
  /** undefined: informational (no target). */
  pass?: boolean;
}

export function printResults(title: string, rows: ResultRow[]): void {
  const w = [
    Math.max(6, ...rows.map((r) => r.figure.length)),
    Math.max(5, ...rows.map((r) => r.value.length)),
    Math.max(6, ...rows.map((r) => (r.target ?? '').length)),
  ];
  const line = (a: string, b: string, c: string, d: string) => `| ${a.padEnd(w[0])} | ${b.padStart(w[1])} | ${c.padEnd(w[2])} | ${d.padEnd(4)} |`;
  process.stdout.write(`\n## ${title}\n\n`);
  process.stdout.write(`${line('figure', 'value', 'target', 'ok')}\n`);
  process.stdout.write(`|${'-'.repeat(w[0] + 2)}|${'-'.repeat(w[1] + 2)}|${'-'.repeat(w[2] + 2)}|------|\n`);
  for (const r of rows) process.stdout.write(`${line(r.figure, r.value, r.target ?? '', r.pass === undefined ? '' : r.pass ? 'PASS' : 'MISS')}\n`);
  process.stdout.write('\n');
}

export function machineLine(): string {
  return `${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}, ${new Date().toISOString()}, load avg ${loadavg().map((l) => l.toFixed(1)).join('/')}`;
}

export function log(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Spawns `node --import tsx <file> ...args` (TypeScript child), killed at exit if still running.
 * `stderr: 'pipe'` leaves its standard error to the caller (to count warnings in it).
 */
export function spawnTs(
  file: string,
  args: string[] = [],
  opts: { env?: Record<string, string>; nodeArgs?: string[]; stderr?: 'inherit' | 'pipe' } = {},
): ChildProcess {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', file, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['pipe', 'pipe', opts.stderr ?? 'inherit'],
  });
  onExit(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

/** Reads newline-delimited JSON messages from a child's stdout. */
export function jsonLines(child: ChildProcess, onMessage: (msg: any) => void): void {
  let buf = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (!line) continue;
      try {
        onMessage(JSON.parse(line));
      } catch {
        process.stderr.write(`[child] ${line}\n`);
      }
    }
  });
}

/** Waits for the first message from a child matching `pred`. */
export function nextMessage<T = any>(child: ChildProcess, pred: (m: any) => boolean, timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('child did not answer in time')), timeoutMs);
    const onExitEarly = (code: number | null) => reject(new Error(`child exited (${code}) before answering`));
    child.once('exit', onExitEarly);
    const listeners = (child as any).__benchListeners ?? ((child as any).__benchListeners = [] as Array<(m: any) => void>);
    if (!(child as any).__benchHooked) {
      (child as any).__benchHooked = true;
      jsonLines(child, (m) => {
        for (const l of [...listeners]) l(m);
      });
    }
    const l = (m: any) => {
      if (!pred(m)) return;
      clearTimeout(timer);
      child.off('exit', onExitEarly);
      listeners.splice(listeners.indexOf(l), 1);
      resolve(m as T);
    };
    listeners.push(l);
  });
}

export function send(child: ChildProcess, msg: unknown): void {
  child.stdin!.write(`${JSON.stringify(msg)}\n`);
}

/** Reads newline-delimited JSON commands from stdin (child side). */
export function onStdinMessages(fn: (msg: any) => void): void {
  let buf = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (line) fn(JSON.parse(line));
    }
  });
}

export function reply(msg: unknown): void {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * Reads `read` until it reaches `target` (or `timeoutMs` passes): how long that took
 * (0 when it was there at the first read) and the last count. Used to end a round when
 * its last acknowledged delivery is applied.
 */
export async function waitForCount(read: () => Promise<number> | number, target: number, timeoutMs = 60_000, everyMs = 5): Promise<{ seconds: number; count: number }> {
  const t0 = performance.now();
  let count = await read();
  if (count >= target) return { seconds: 0, count };
  while (count < target && performance.now() - t0 < timeoutMs) {
    await sleep(everyMs);
    count = await read();
  }
  return { seconds: (performance.now() - t0) / 1000, count };
}
