/**
 * CPU profiles of the server's side of a bench, taken with the V8 inspector in
 * this process (the same profiler as `node --cpu-prof`), so that a profile covers
 * only the orchestrator's rounds and not the seeding or the baselines beside them.
 * `topSelf` turns a profile into the table BENCHMARKS.md carries: self time per
 * function, largest first.
 */
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';

export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }>;
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

export class Profiler {
  private session: Session | null = null;

  async start(): Promise<void> {
    this.session = new Session();
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 500) });
    await this.session.post('Profiler.start');
  }

  /** Stops, writes the .cpuprofile (loadable in Chrome DevTools / speedscope) and returns it. */
  async stop(file: string): Promise<CpuProfile> {
    const s = this.session!;
    const { profile } = (await s.post('Profiler.stop')) as unknown as { profile: CpuProfile };
    s.disconnect();
    this.session = null;
    writeFileSync(file, JSON.stringify(profile));
    return profile;
  }
}

export interface SelfEntry {
  name: string;
  where: string;
  selfMs: number;
  share: number;
}

/** Self time per function (name + file:line), summed over every node of the tree, largest first. */
export function topSelf(profile: CpuProfile, n = 15, root = ''): SelfEntry[] {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const ms = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) ms.set(samples[i]!, (ms.get(samples[i]!) ?? 0) + (deltas[i] ?? 0) / 1000);
  const total = [...ms.values()].reduce((a, b) => a + b, 0) || 1;
  const sums = new Map<string, SelfEntry>();
  for (const [id, t] of ms) {
    const f = byNode.get(id)!.callFrame;
    const file = f.url ? f.url.replace(/^file:\/\//, '').replace(root, '').replace(/^.*node_modules\//, 'node_modules/') : '';
    const where = file ? `${file}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName}@${where}`;
    const e = sums.get(key) ?? { name: f.functionName || '(anonymous)', where, selfMs: 0, share: 0 };
    e.selfMs += t;
    sums.set(key, e);
  }
  return [...sums.values()]
    .map((e) => ({ ...e, share: e.selfMs / total }))
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, n);
}

export function topSelfTable(entries: SelfEntry[]): string {
  const rows = entries.map((e) => `| ${(e.share * 100).toFixed(1)} % | ${e.selfMs.toFixed(0)} | \`${e.name}\` | ${e.where || '(native)'} |`);
  return ['| self % | self ms | function | where |', '|---:|---:|---|---|', ...rows].join('\n');
}
