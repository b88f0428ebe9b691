/**
 * Polls dispatched per second with 100,000 `submitted` operations due
 * (DESIGN.md §11: ≥ 5,000/s against a local seller).
 *
 * The real Scheduler + OperationService from createApp (default concurrency 64,
 * SQLite WAL + synchronous=FULL), against bench/lib/fast-seller.ts — a minimal
 * raw JSON-RPC MCP seller in its OWN process (not the SDK sandbox seller, whose
 * per-request MCP server would measure the seller rather than us). Each poll is
 * claim (batched UPDATE … RETURNING) + get_task_status over MCP + apply
 * (lease-checked write transaction). 90 % of replies are `submitted` again
 * (next poll scheduled), 10 % `completed`.
 *
 *   npx tsx bench/poll-dispatch.ts [--ops 100000] [--seconds 45] [--concurrency 64]
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { fmt, log, machineLine, nextMessage, percentile, printResults, send, sleep, spawnTs } from './lib/common.js';
import { addAgent, seedOperations, startBenchApp } from './lib/orchestrator.js';
import { enableSqlTiming, sqlTimingReport } from './lib/sql-timing.js';

const { values } = parseArgs({
  options: { ops: { type: 'string', default: '100000' }, seconds: { type: 'string', default: '45' }, concurrency: { type: 'string', default: '64' } },
});
const OPS = Number(values.ops);
const SECONDS = Number(values.seconds);
const CONCURRENCY = Number(values.concurrency);
if (process.env.BENCH_SQL_TIMING === '1') enableSqlTiming();

log(`machine: ${machineLine()}`);
const seller = spawnTs('bench/lib/fast-seller.ts');
const { url: sellerUrl } = await nextMessage<{ url: string }>(seller, (m) => 'url' in m);

const bench = await startBenchApp({
  listen: false,
  concurrency: CONCURRENCY,
  // Re-polls far away: every operation is polled once in the window.
  env: { ADCP_ORCH_POLL_INTERVAL_MS: '600000', ADCP_ORCH_CALL_TIMEOUT_MS: '10000' },
});
const agentId = await addAgent(bench, sellerUrl);
const now = Date.now();
const seeded = seedOperations(bench.dbPath, {
  n: OPS,
  tenantId: bench.tenantId,
  agentId,
  status: 'submitted',
  checkKind: 'poll',
  webhookMode: 'none',
  nextCheckAt: (i) => now - 10_000 + (i % 5000),
});
log(`seeded ${fmt(OPS)} due operations in ${seeded.seconds.toFixed(1)} s (${fmt(OPS / seeded.seconds)} rows/s)`);

// Count finished claimed work (the scheduler calls operations.runClaimed for each claimed row).
const ops = bench.app.operations;
const original = ops.runClaimed.bind(ops);
const doneAt: number[] = [];
const durations: number[] = [];
let failures = 0;
ops.runClaimed = async (row) => {
  const t0 = performance.now();
  try {
    await original(row);
  } catch (err) {
    failures++;
    throw err;
  } finally {
    const t1 = performance.now();
    durations.push(t1 - t0);
    doneAt.push(t1);
  }
};

const started = performance.now();
await bench.app.listen();
const deadline = started + SECONDS * 1000;
while (performance.now() < deadline && doneAt.length < OPS) await sleep(200);
const elapsed = (performance.now() - started) / 1000;
const done = doneAt.length;
await bench.app.scheduler.stop();

// Steady state: completions between 2 s after start and the last completion.
const steadyFrom = started + 2000;
const steady = doneAt.filter((t) => t >= steadyFrom);
const steadyRate = steady.length > 1 ? steady.length / ((steady[steady.length - 1] - steadyFrom) / 1000) : NaN;
const db = bench.app.store.db.kysely;
const { rows } = await sql<{ polled: number; completed: number; leased: number }>`
  SELECT (SELECT count(*) FROM operations WHERE poll_count > 0) AS polled,
         (SELECT count(*) FROM operations WHERE status = 'completed') AS completed,
         (SELECT count(*) FROM operations WHERE lease_owner IS NOT NULL) AS leased`.execute(db);
send(seller, { cmd: 'stats' });
const { stats } = await nextMessage<{ stats: { polls: number } }>(seller, (m) => 'stats' in m);
send(seller, { cmd: 'stop' });
if (process.env.BENCH_SQL_TIMING === '1') log(sqlTimingReport());
await bench.close();

const rate = done / elapsed;
printResults(`poll-dispatch (${machineLine()}; ${fmt(OPS)} submitted operations due; scheduler concurrency ${CONCURRENCY}; seller: bench fast MCP seller, separate process)`, [
  { figure: 'polls dispatched+applied per second (whole run)', value: `${fmt(rate)}/s`, target: '≥ 5,000/s', pass: rate >= 5000 },
  { figure: 'steady state (after the first 2 s)', value: `${fmt(steadyRate)}/s` },
  { figure: 'claimed work finished / seconds', value: `${fmt(done)} / ${elapsed.toFixed(1)} s${done < OPS ? ' (time bound hit)' : ''}` },
  { figure: 'one claimed poll, p50 / p99 (call + apply)', value: `${percentile(durations, 50).toFixed(1)} / ${percentile(durations, 99).toFixed(1)} ms` },
  { figure: 'check: seller polls / DB rows polled / completed', value: `${fmt(stats.polls)} / ${fmt(rows[0].polled)} / ${fmt(rows[0].completed)}` },
  { figure: 'check: failures / rows still leased', value: `${failures} / ${rows[0].leased}` },
]);
process.exit(0);
