/**
 * Watching a child's output for bench/soak.ts: every process warning Node
 * prints (`(node:PID) [CODE] SomeWarning: …`), every log line at warn level or
 * above (pino JSON, level ≥ 40), all of it appended to a file for reading later.
 */
import type { ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';

const NODE_WARNING = /^\(node:\d+\) (?:\[[^\]]+\] )?\w*Warning: /;

export interface OutputWatch {
  /** Process warning lines, as printed. */
  warnings: string[];
  /** Log lines at warn level or above (their `msg`). */
  problems: Array<{ level: number; msg: string }>;
}

export function watchOutput(
  child: ChildProcess,
  label: string,
  file: string,
  watch: OutputWatch = { warnings: [], problems: [] },
  opts: { echoStderr?: boolean } = {},
): OutputWatch {
  child.once('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM' && signal !== 'SIGKILL') process.stderr.write(`[${label}] exited with ${code ?? signal}\n`);
  });
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    const echo = opts.echoStderr === true && stream === child.stderr;
    let buffer = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      appendFileSync(file, chunk);
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (!inspect(line) && echo) process.stderr.write(`[${label}] ${line}\n`);
      }
    });
  }
  /** True when the line was reported already. */
  function inspect(line: string): boolean {
    if (NODE_WARNING.test(line)) {
      watch.warnings.push(`${label}: ${line}`);
      process.stderr.write(`[${label}] ${line}\n`);
      return true;
    }
    if (!line.startsWith('{')) return false;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string };
      if (typeof entry.level === 'number' && entry.level >= 40) watch.problems.push({ level: entry.level, msg: `${label}: ${entry.msg ?? line.slice(0, 200)}` });
    } catch {
      /* not a log line */
    }
    return false;
  }
  return watch;
}

/** Counts per message, most frequent first, for the report. */
export function summarize(problems: OutputWatch['problems'], top = 8): string[] {
  const counts = new Map<string, number>();
  for (const p of problems) counts.set(p.msg, (counts.get(p.msg) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([msg, n]) => `${n} × ${msg}`);
}
