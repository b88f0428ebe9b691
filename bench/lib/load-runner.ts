/**
 * The ingest benches' side of the load generator (bench/lib/loadgen.ts, a separate
 * process): one job at a time with the same connections and requests in flight for
 * every round, each round's result logged on one line (with the SQL time it cost,
 * when BENCH_SQL_TIMING=1), and how long after a round its last acknowledged delivery
 * was applied. Used by bench/webhook-ingest.ts and bench/reporting-ingest.ts.
 */
import { sql } from 'kysely';
import type { Store } from '../../src/store/index.js';
import { fmt, log, nextMessage, send, spawnTs } from './common.js';
import type { LoadJob, LoadResult } from './loadgen.js';
import { resetSqlTiming, sqlTimingReport } from './sql-timing.js';

/** The load of every ingest round: 32 connections, 2 pipelined each, 64 requests in flight. */
export const INGEST_LOAD = { connections: 32, pipelining: 2, inFlight: 64 } as const;

export type RoundJob = Omit<LoadJob, 'cmd' | 'connections' | 'pipelining' | 'inFlight'>;

export interface LoadRunner {
  run(job: RoundJob): Promise<LoadResult>;
  /** Lets the load generator exit. */
  close(): void;
}

/** `sqlTop`: with SQL timing enabled (enableSqlTiming), how many statements each round's report lists. */
export function startLoadRunner(opts: { sqlTop?: number } = {}): LoadRunner {
  const loadgen = spawnTs('bench/lib/loadgen.ts');
  return {
    async run(job) {
      if (opts.sqlTop !== undefined) resetSqlTiming();
      const reply = nextMessage(loadgen, (m) => 'result' in m || 'error' in m, job.durationMs + 120_000);
      send(loadgen, { cmd: 'run', ...INGEST_LOAD, ...job });
      const m = await reply;
      if (m.error) throw new Error(m.error);
      const r = m.result as LoadResult;
      if (opts.sqlTop !== undefined) log(`${r.label}, ${r.ok} deliveries:\n${sqlTimingReport(opts.sqlTop)}`);
      log(`${r.label}: ${fmt(r.perSecond)}/s ok, sent ${r.sent}, statuses ${JSON.stringify(r.statuses)}, errors ${r.errors}, p50 ${r.p50ms.toFixed(1)} ms, p99 ${r.p99ms.toFixed(1)} ms${r.firstErrorBody ? `, first non-2xx: ${r.firstErrorBody}` : ''}`);
      return r;
    },
    close() {
      loadgen.stdin!.end();
    },
  };
}

/** Says how long after the load ended a round's last acknowledged delivery was applied, if it was not at once. */
export function logApplyWait(round: string, seconds: number): void {
  if (seconds > 0) log(`${round}: last acknowledged delivery applied ${(seconds * 1000).toFixed(0)} ms after the load ended`);
}

/** Operation-webhook deliveries applied, of operations whose id starts with `prefix`: polled while a round's are applied. */
export async function appliedDeliveries(store: Store, prefix: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'applied' AND operation_id LIKE ${`${prefix}%`}`.execute(store.db.kysely);
  return Number(rows[0]!.n);
}

/** What the database says about the operation-webhook deliveries of operations whose id starts with `prefix`. */
export interface DeliveryChecks {
  applied: number;
  received: number;
  rows: number;
  keys: number;
  /** Operations completed more than once. */
  twice: number;
}

export async function webhookDeliveryChecks(store: Store, prefix: string): Promise<DeliveryChecks> {
  const like = `${prefix}%`;
  const { rows } = await sql<DeliveryChecks>`
    SELECT
      (SELECT count(*) FROM webhook_deliveries WHERE state = 'applied' AND operation_id LIKE ${like}) AS applied,
      (SELECT count(*) FROM webhook_deliveries WHERE state = 'received' AND operation_id LIKE ${like}) AS received,
      (SELECT count(*) FROM webhook_deliveries WHERE operation_id LIKE ${like}) AS rows,
      (SELECT count(DISTINCT sender || ' ' || idempotency_key) FROM webhook_deliveries WHERE operation_id LIKE ${like}) AS keys,
      (SELECT count(*) FROM (SELECT operation_id FROM operation_events
         WHERE operation_id LIKE ${like} AND kind = 'transition' AND to_status = 'completed'
         GROUP BY operation_id HAVING count(*) > 1)) AS twice`.execute(store.db.kysely);
  return rows[0]!;
}
