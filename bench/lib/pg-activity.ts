/**
 * What PostgreSQL's backends of one database are doing, sampled from pg_stat_activity
 * every `everyMs` while a bench phase runs: how many are busy, and on what they wait
 * (Lock: a row or table lock held by another transaction; LWLock / IO: the server's
 * own internals, e.g. WAL writing and flushing; none: running on a CPU). Also collects
 * the backends' pids, so their CPU can be read from /proc (bench/lib/proc-cpu.ts).
 */
import pg from 'pg';

export interface ActivitySummary {
  samples: number;
  /** Mean backends per sample that were active or idle inside a transaction. */
  meanBusy: number;
  /** Shares of busy-backend samples by what they waited on, largest first. */
  waits: Array<{ on: string; share: number }>;
  /** Share of busy-backend samples waiting on a heavyweight lock (wait_event_type Lock). */
  lockShare: number;
  /** Every backend pid seen for the database. */
  pids: number[];
}

export class PgActivitySampler {
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> | undefined;
  private samples = 0;
  private busy = 0;
  private readonly waits = new Map<string, number>();
  private readonly pids = new Set<number>();

  private constructor(
    private readonly client: pg.Client,
    private readonly database: string,
  ) {}

  /** Opens its own connection to `url` (the bench's database: its own pid is left out). */
  static async open(url: string): Promise<PgActivitySampler> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return new PgActivitySampler(client, new URL(url).pathname.slice(1));
  }

  /** Starts a fresh window of samples. */
  start(everyMs = 100): void {
    this.samples = 0;
    this.busy = 0;
    this.waits.clear();
    this.pids.clear();
    this.timer = setInterval(() => {
      if (this.sampling) return; // the previous sample is still out: skip, do not pile up
      this.sampling = this.sample().finally(() => (this.sampling = undefined));
    }, everyMs);
  }

  /** Pids of the database's backends seen so far in this window. */
  backendPids(): number[] {
    return [...this.pids];
  }

  async stop(): Promise<ActivitySummary> {
    clearInterval(this.timer);
    await this.sampling;
    const total = Math.max(1, this.busy);
    const waits = [...this.waits.entries()].map(([on, n]) => ({ on, share: n / total })).sort((a, b) => b.share - a.share);
    return {
      samples: this.samples,
      meanBusy: this.busy / Math.max(1, this.samples),
      waits,
      lockShare: waits.filter((w) => w.on.startsWith('Lock:')).reduce((a, w) => a + w.share, 0),
      pids: [...this.pids],
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.sampling;
    await this.client.end();
  }

  private async sample(): Promise<void> {
    const { rows } = await this.client.query<{ pid: number; state: string | null; wait_event_type: string | null; wait_event: string | null }>(
      'SELECT pid, state, wait_event_type, wait_event FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [this.database],
    );
    this.samples++;
    for (const r of rows) {
      this.pids.add(r.pid);
      let on: string;
      if (r.state === 'active') on = r.wait_event_type ? `${r.wait_event_type}:${r.wait_event}` : 'running (CPU)';
      else if (r.state?.startsWith('idle in transaction')) on = 'idle in transaction (waiting for its client)';
      else continue;
      this.busy++;
      this.waits.set(on, (this.waits.get(on) ?? 0) + 1);
    }
  }
}
