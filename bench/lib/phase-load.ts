/**
 * Where a phase of a multi-process bench spent the machine: CPU per named process and
 * PostgreSQL's (this database's backends apart from the server's other processes), the
 * machine's busy share, and what PostgreSQL's backends waited on, with a one-line
 * verdict on what bounds the phase.
 */
import type { ActivitySummary, PgActivitySampler } from './pg-activity.js';
import { CpuWindow, postgresPids } from './proc-cpu.js';

export interface PhaseLoad {
  seconds: number;
  /** Cores used (CPU seconds ÷ wall seconds) per named process. */
  processes: Array<{ name: string; cores: number }>;
  /** Cores used by PostgreSQL's backends of the bench's database. */
  postgresOurs: number;
  /** Cores used by PostgreSQL's other processes (WAL writer, checkpointer, other databases' backends). */
  postgresOther: number;
  /** Busy share of the whole machine, 0–1 (other tenants of the machine included). */
  machineBusy: number | undefined;
  activity: ActivitySummary;
}

/** Runs `work` while reading CPU and sampling PostgreSQL's activity. */
export async function measurePhase(sampler: PgActivitySampler, named: Record<string, number>, work: () => Promise<void>): Promise<PhaseLoad> {
  const pgAtStart = postgresPids();
  const cpu = new CpuWindow([...Object.values(named), ...pgAtStart]);
  sampler.start();
  let activity: ActivitySummary;
  try {
    await work();
  } finally {
    activity = await sampler.stop();
  }
  const seconds = cpu.elapsed();
  const machineBusy = cpu.machineBusy();
  const pgAll = [...new Set([...pgAtStart, ...postgresPids()])];
  const used = cpu.used([...Object.values(named), ...pgAll]);
  const ours = new Set(activity.pids);
  const sum = (pids: number[]) => pids.reduce((a, p) => a + (used.get(p) ?? 0), 0);
  return {
    seconds,
    processes: Object.entries(named).map(([name, pid]) => ({ name, cores: (used.get(pid) ?? 0) / seconds })),
    postgresOurs: sum(pgAll.filter((p) => ours.has(p))) / seconds,
    postgresOther: sum(pgAll.filter((p) => !ours.has(p))) / seconds,
    machineBusy,
    activity,
  };
}

const pct = (x: number) => `${Math.round(x * 100)} %`;

/** What bounds the phase, from the figures: the CPU when the machine is (nearly) all busy, else locks, else the top wait. */
export function boundBy(l: PhaseLoad): string {
  const all = [...l.processes, { name: 'PostgreSQL (this database)', cores: l.postgresOurs }].sort((a, b) => b.cores - a.cores);
  if (l.machineBusy !== undefined && l.machineBusy >= 0.9) return `CPU (machine ${pct(l.machineBusy)} busy; most: ${all[0]!.name} ${all[0]!.cores.toFixed(2)} cores)`;
  if (l.activity.lockShare >= 0.2) return `lock waits (${pct(l.activity.lockShare)} of busy backend samples)`;
  const top = l.activity.waits[0];
  return `not the CPU (machine ${l.machineBusy === undefined ? '?' : pct(l.machineBusy)} busy)${top ? `; PostgreSQL mostly ${top.on} (${pct(top.share)})` : ''}`;
}

export function describePhase(l: PhaseLoad): string {
  const procs = [...l.processes.map((p) => `${p.name} ${p.cores.toFixed(2)}`), `PostgreSQL this database ${l.postgresOurs.toFixed(2)}`, `PostgreSQL other ${l.postgresOther.toFixed(2)}`];
  const waits = l.activity.waits
    .slice(0, 4)
    .map((w) => `${w.on} ${pct(w.share)}`)
    .join(', ');
  return (
    `CPU cores: ${procs.join(', ')}; machine busy ${l.machineBusy === undefined ? '?' : pct(l.machineBusy)}; ` +
    `PostgreSQL busy backends ${l.activity.meanBusy.toFixed(1)} (${waits || 'no samples'}), lock waits ${pct(l.activity.lockShare)}; bound: ${boundBy(l)}`
  );
}
