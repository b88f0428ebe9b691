/**
 * One sample of a running `serve` process for bench/soak.ts, taken from outside
 * it: its /metrics (resident memory, event-loop delay p99 since the previous
 * scrape, open handles and sockets, open file descriptors), heap used right after
 * a full collection (POST /debug/gc), the database and WAL file sizes, and the
 * rows in every table (a read-only connection: WAL lets it read beside the server).
 */
import { existsSync, statSync } from 'node:fs';
import SQLite from 'better-sqlite3';

/** Every table of src/store/schema.ts. */
export const TABLES = [
  'operations',
  'operation_events',
  'notifications',
  'webhook_deliveries',
  'webhook_nonces',
  'api_idempotency',
  'reconcile_reports',
  'subscription_deliveries',
  'subscription_delivery_attempts',
  'sessions',
  'reconcile_deferrals',
  'job_leases',
  'instances',
  'subscriptions',
  'subscription_secrets',
  'tenant_settings',
  'agents',
  'api_keys',
  'tenants',
] as const;

export interface Sample {
  /** Seconds since the load started. */
  t: number;
  /** 1 before the restart, 2 after. */
  life: number;
  rssBytes: number;
  /** prom-client's reading, garbage included. */
  heapUsedBytes: number;
  heapAfterGcBytes: number;
  /** Of which V8's code space (compiled code, grows while the JIT warms up). */
  codeAfterGcBytes: number;
  gcMs: number;
  /** Event-loop delay p99 over the interval since the previous scrape (prom-client resets it each scrape; includes its 10 ms tick). */
  eventLoopP99Ms: number;
  handles: number;
  sockets: number;
  openFds: number;
  dbBytes: number;
  walBytes: number;
  rows: Record<string, number>;
}

/** The value of the Prometheus text line of exactly this series (name and labels), NaN when absent. */
export function metricValue(text: string, series: string): number {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return NaN;
}

const size = (path: string) => (existsSync(path) ? statSync(path).size : 0);

export function rowCounts(dbPath: string): Record<string, number> {
  const db = new SQLite(dbPath, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 10000');
    const rows: Record<string, number> = {};
    for (const table of TABLES) rows[table] = (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    return rows;
  } finally {
    db.close();
  }
}

export async function takeSample(opts: { origin: string; apiKey: string; dbPath: string; t: number; life: number }): Promise<Sample> {
  // Metrics first: the collection below would otherwise show as event-loop delay in this interval.
  const metrics = await (await fetch(`${opts.origin}/metrics`)).text();
  const gcRes = await fetch(`${opts.origin}/debug/gc`, { method: 'POST', headers: { authorization: `Bearer ${opts.apiKey}` } });
  if (gcRes.status !== 200) throw new Error(`POST /debug/gc answered ${gcRes.status}: ${await gcRes.text()}`);
  const gc = (await gcRes.json()) as { heap_used_bytes: number; gc_ms: number; heap_spaces?: Record<string, number> };
  const p = 'adcp_orch_';
  return {
    t: opts.t,
    life: opts.life,
    rssBytes: metricValue(metrics, `${p}process_resident_memory_bytes`),
    heapUsedBytes: metricValue(metrics, `${p}nodejs_heap_size_used_bytes`),
    heapAfterGcBytes: gc.heap_used_bytes,
    codeAfterGcBytes: gc.heap_spaces?.code_space ?? 0,
    gcMs: gc.gc_ms,
    eventLoopP99Ms: metricValue(metrics, `${p}nodejs_eventloop_lag_p99_seconds`) * 1000,
    handles: metricValue(metrics, `${p}nodejs_active_handles_total`),
    sockets: metricValue(metrics, `${p}nodejs_active_handles{type="Socket"}`) || 0,
    openFds: metricValue(metrics, `${p}process_open_fds`),
    dbBytes: size(opts.dbPath),
    walBytes: size(`${opts.dbPath}-wal`),
    rows: rowCounts(opts.dbPath),
  };
}
