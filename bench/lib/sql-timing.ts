/**
 * Diagnostic: time every better-sqlite3 statement (prepare + run/all/get/iterate)
 * by SQL text, to see where a request's database time goes. Enabled by the
 * bench scripts when BENCH_SQL_TIMING=1; it patches the driver's prototype in
 * this process only.
 */
import SQLite from 'better-sqlite3';
import { fmt } from './common.js';

interface Acc {
  calls: number;
  ms: number;
}

const bySql = new Map<string, Acc>();
let prepareMs = 0;
let prepares = 0;

// COMMIT is where the fsync is: keep each one, to show its spread, not only its mean.
const commitSamples: number[] = [];

function acc(sql: string, ms: number): void {
  if (sql === 'COMMIT') commitSamples.push(ms);
  const key = sql.replace(/\s+/g, ' ').replace(/\(\?(, ?\?)*\)(, ?\(\?(, ?\?)*\))*/g, '(?…)').slice(0, 110);
  const a = bySql.get(key) ?? { calls: 0, ms: 0 };
  a.calls++;
  a.ms += ms;
  bySql.set(key, a);
}

export function enableSqlTiming(): void {
  const proto = (SQLite as unknown as { prototype: { prepare: (sql: string) => any } }).prototype;
  const origPrepare = proto.prepare;
  proto.prepare = function (this: unknown, sql: string) {
    const t0 = performance.now();
    const stmt = origPrepare.call(this, sql);
    prepareMs += performance.now() - t0;
    prepares++;
    for (const m of ['run', 'all', 'get', 'iterate'] as const) {
      const orig = stmt[m];
      if (typeof orig !== 'function') continue;
      stmt[m] = function (this: unknown, ...args: unknown[]) {
        const t = performance.now();
        try {
          return orig.apply(this, args);
        } finally {
          acc(sql, performance.now() - t);
        }
      };
    }
    return stmt;
  };
}

export function sqlTimingReport(top = 15): string {
  const rows = [...bySql.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, top);
  const total = [...bySql.values()].reduce((s, a) => s + a.ms, 0);
  const lines = [`SQL time: ${fmt(total)} ms executing + ${fmt(prepareMs)} ms in ${fmt(prepares)} prepare() calls`];
  for (const [sql, a] of rows) lines.push(`  ${fmt(a.ms).padStart(7)} ms ${fmt(a.calls).padStart(8)} calls ${(a.ms / a.calls).toFixed(3).padStart(7)} ms/call  ${sql}`);
  if (commitSamples.length > 0) {
    const sorted = [...commitSamples].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3);
    lines.push(`  COMMIT p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms, max ${sorted[sorted.length - 1]!.toFixed(3)} ms`);
  }
  return lines.join('\n');
}

export function resetSqlTiming(): void {
  bySql.clear();
  commitSamples.length = 0;
  prepareMs = 0;
  prepares = 0;
}
