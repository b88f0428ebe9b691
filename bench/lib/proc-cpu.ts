/**
 * CPU time from /proc (Linux), to say where a multi-process bench spends the machine:
 * per process (utime + stime of /proc/<pid>/stat), every PostgreSQL server process
 * (found by name), and the whole machine (/proc/stat). Elsewhere than Linux the reads
 * return nothing and the bench prints no CPU.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Kernel clock ticks per second (USER_HZ): 100 on every Linux this runs on. */
const TICKS_PER_SECOND = 100;

/** CPU seconds a process has used so far (undefined: gone, or no /proc). */
export function processCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 (state) on.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Pids of the processes named `postgres` (the server and all its backends and workers). */
export function postgresPids(): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/comm`, 'utf8').trim() === 'postgres') pids.push(Number(e));
    } catch {
      /* exited meanwhile */
    }
  }
  return pids;
}

/** Busy and total CPU seconds of the whole machine (all cores) so far. */
export function machineCpuSeconds(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const [, ...nums] = line.trim().split(/\s+/);
    const v = nums.map(Number);
    const total = v.reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0); // idle + iowait
    return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

/**
 * CPU used by a set of processes over a window: snapshot at the start, read again at
 * the end. A process that started during the window counts from zero; one that
 * exited during it is lost (its last seconds are not seen).
 */
export class CpuWindow {
  private readonly start = new Map<number, number>();
  private readonly machineStart = machineCpuSeconds();
  private readonly t0 = performance.now();

  constructor(pids: number[]) {
    for (const pid of pids) {
      const s = processCpuSeconds(pid);
      if (s !== undefined) this.start.set(pid, s);
    }
  }

  /** CPU seconds per pid since the start (pids not seen at the start count from 0). */
  used(pids: number[]): Map<number, number> {
    const out = new Map<number, number>();
    for (const pid of pids) {
      const now = processCpuSeconds(pid);
      if (now !== undefined) out.set(pid, now - (this.start.get(pid) ?? 0));
    }
    return out;
  }

  /** Seconds of wall time since the start. */
  elapsed(): number {
    return (performance.now() - this.t0) / 1000;
  }

  /** Share of the machine's CPU (all cores) that was busy since the start, 0–1. */
  machineBusy(): number | undefined {
    const end = machineCpuSeconds();
    if (!end || !this.machineStart) return undefined;
    return (end.busy - this.machineStart.busy) / Math.max(1e-9, end.total - this.machineStart.total);
  }
}
