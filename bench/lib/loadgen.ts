/**
 * Closed-loop HTTP load generator, run as a SEPARATE process so that it does not
 * share an event loop with the server under test:
 *
 *   node --import tsx bench/lib/loadgen.ts
 *
 * stdin (one JSON line per job):
 *   {"cmd":"run","origin":"http://127.0.0.1:1234","file":"/tmp/x.ndjson","durationMs":15000,
 *    "connections":16,"pipelining":4,"inFlight":64,"cycle":false,"label":"..."}
 * where the file holds one request per line: {"path","headers","body"} (body a string).
 * Each request is sent once in file order (or cycled when `cycle`), until the file
 * is exhausted or durationMs passes. With `origins` (several servers), request i goes
 * to origins[i % n], round-robin, and the connections are split among them.
 * stdout: one JSON result line per job.
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { onStdinMessages, percentile, reply } from './common.js';

export interface LoadJob {
  cmd: 'run';
  origin: string;
  /** Several servers sharing the load round-robin (then `origin` is ignored). */
  origins?: string[];
  file: string;
  durationMs: number;
  connections: number;
  pipelining: number;
  inFlight: number;
  cycle?: boolean;
  label?: string;
  /** Requests sent (and not counted) before measuring, taken from the start of the file. */
  warmup?: number;
}

export interface LoadResult {
  label?: string;
  sent: number;
  ok: number;
  statuses: Record<string, number>;
  errors: number;
  seconds: number;
  perSecond: number;
  p50ms: number;
  p99ms: number;
  firstErrorBody?: string;
}

interface Req {
  path: string;
  headers: Record<string, string>;
  body: string;
}

async function run(job: LoadJob): Promise<LoadResult> {
  const requests: Req[] = readFileSync(job.file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
  const origins = job.origins ?? [job.origin];
  const pools = origins.map(
    (origin) => new Pool(origin, { connections: Math.max(1, Math.ceil(job.connections / origins.length)), pipelining: job.pipelining, keepAliveTimeout: 60_000 }),
  );
  let next = 0;
  let taken = 0;
  const take = (): { r: Req; pool: Pool } | undefined => {
    if (next >= requests.length) {
      if (!job.cycle) return undefined;
      next = 0;
    }
    return { r: requests[next++]!, pool: pools[taken++ % pools.length]! };
  };
  const sendOne = async ({ r, pool }: { r: Req; pool: Pool }) => {
    const res = await pool.request({ path: r.path, method: 'POST', headers: r.headers, body: r.body });
    const text = await res.body.text();
    return { status: res.statusCode, text };
  };

  // Warm-up (JIT, connections), not measured.
  const warm = Math.min(job.warmup ?? 0, requests.length);
  for (let i = 0; i < warm; i += job.inFlight) {
    const batch: Promise<unknown>[] = [];
    for (let k = 0; k < job.inFlight && i + k < warm; k++) batch.push(sendOne(take()!).catch(() => undefined));
    await Promise.all(batch);
  }

  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  let firstErrorBody: string | undefined;
  const started = performance.now();
  const deadline = started + job.durationMs;
  const worker = async () => {
    for (;;) {
      if (performance.now() >= deadline) return;
      const item = take();
      if (!item) return;
      sent++;
      const t0 = performance.now();
      try {
        const { status, text } = await sendOne(item);
        latencies.push(performance.now() - t0);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status >= 300 && firstErrorBody === undefined) firstErrorBody = `${status} ${text.slice(0, 300)}`;
      } catch (err) {
        errors++;
        if (firstErrorBody === undefined) firstErrorBody = String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: job.inFlight }, worker));
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(pools.map((p) => p.close()));
  const ok = statuses['200'] ?? 0;
  return {
    label: job.label,
    sent,
    ok,
    statuses,
    errors,
    seconds,
    perSecond: ok / seconds,
    p50ms: percentile(latencies, 50),
    p99ms: percentile(latencies, 99),
    firstErrorBody,
  };
}

onStdinMessages((m: LoadJob) => {
  if (m.cmd !== 'run') return;
  run(m).then(
    (r) => reply({ result: r }),
    (err) => reply({ error: String(err?.stack ?? err) }),
  );
});
process.stdin.on('end', () => process.exit(0));
