/**
 * Reporting-fire ingest beside operation-webhook ingest (BENCHMARKS.md, Targets): the
 * same orchestrator, the same load generator (bench/lib/loadgen.ts, a separate process,
 * the same connections and 64 in flight), in alternating rounds of the same length:
 *
 * - operation webhooks: legacy HMAC deliveries to `POST /webhooks/adcp/:token` for fresh
 *   `submitted` operations, the mix of bench/webhook-ingest.ts (80 % progress, 20 %
 *   terminal, 5 per operation), acknowledged and applied;
 * - reporting fires: legacy HMAC fires to `POST /webhooks/adcp/reporting/:token` for
 *   fresh active buys (one seller, a per-buy sealed secret, as a completed create makes
 *   them), 5 daily periods per buy in sequence, each fire deduplicated, stored and
 *   applied to its buy (report, ledger, figures, pacing, timers) in one commit before
 *   its 200.
 *
 * A round of either ends when its last acknowledged delivery is applied (the wait is
 * added to the round's time); the next starts once the background work it caused (a
 * buy's status read a second after its report) is done, so neither side is charged
 * with the other's. The figure of record: reporting ÷ operation webhooks, the
 * median of the per-round ratios; target ≥ 0.8 (a fire does more than a status update:
 * a report row, the buy's figures recomputed from its ledger). It counts only with its
 * checks passing: every fire acknowledged stored once and applied, every buy holding
 * exactly the sum of the fires stored for it, every operation delivery applied once.
 *
 * Printed beside it, for information: each path's ceiling (the engine and store alone,
 * no HTTP, bench/lib/ingest-ceiling.ts) in alternating rounds, with the CPU time spent
 * per delivery, the figure least disturbed by a busy machine.
 *
 * --profile DIR writes a CPU profile of the first reporting round (not a run of record).
 *
 *   npx tsx bench/reporting-ingest.ts [--seconds 5] [--rounds 3] [--ops 5000] [--buys 5000] [--profile DIR]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { fmt, log, machineLine, median, nextMessage, printResults, REPO_ROOT, spawnTs, tempDir, waitForCount, type ResultRow } from './lib/common.js';
import { Profiler, topSelf, topSelfTable } from './lib/cpu-profile.js';
import { perSecond } from './lib/floor-report.js';
import { operationWebhookCeiling, reportingFireCeiling, settle, type Ceiling } from './lib/ingest-ceiling.js';
import { seedHmacRequests } from './lib/ingest-rate.js';
import type { LoadResult } from './lib/loadgen.js';
import { appliedDeliveries, INGEST_LOAD, logApplyWait, startLoadRunner, webhookDeliveryChecks, type RoundJob } from './lib/load-runner.js';
import { addAgent, startBenchApp } from './lib/orchestrator.js';
import { checkFires, fireRequests, FIRES_PER_BUY, seedBuys } from './lib/reporting-fires.js';
import { enableSqlTiming } from './lib/sql-timing.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    ops: { type: 'string', default: '5000' },
    buys: { type: 'string', default: '5000' },
    profile: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const N_ROUNDS = Number(values.rounds);
const OPS = Number(values.ops); // per round: 5 deliveries each
const BUYS = Number(values.buys); // per round: FIRES_PER_BUY fires each
const PROFILE_DIR = values.profile;
const LOAD = INGEST_LOAD;
const TARGET = 0.8;
const SQL_TIMING = process.env.BENCH_SQL_TIMING === '1';
if (SQL_TIMING) enableSqlTiming();

log(`machine: ${machineLine()}`);
const dir = tempDir();
const bench = await startBenchApp({ dbPath: join(dir, 'orchestrator.db') });
const origin = bench.url;
// The seller, in its own process, answers the status read that follows a buy's reports (and a
// completed create's) at once, as a live seller does: reads that failed would be retried in a
// storm of writes that has nothing to do with ingest.
const seller = spawnTs('bench/lib/fast-seller.ts');
const { url: sellerUrl } = await nextMessage<{ url: string }>(seller, (m) => 'url' in m);
const agentId = await addAgent(bench, sellerUrl);

type Side = 'webhook' | 'reporting';
const opPrefix = (k: number | string) => `rw-op-${k}-`;
const buyPrefix = (k: number | string) => `buy_rf-${k}-`;

function writeFires(name: string, prefix: string, n: number): string {
  const started = performance.now();
  const file = join(dir, `${name}.ndjson`);
  writeFileSync(file, fireRequests(seedBuys(bench, agentId, prefix, n)));
  log(`seeded ${n} buys (${prefix}) and their fires in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return file;
}

const files: Record<Side, string[]> = { webhook: [], reporting: [] };
for (let k = 0; k < N_ROUNDS; k++) {
  files.webhook.push(seedHmacRequests(bench, agentId, opPrefix(k), OPS));
  files.reporting.push(writeFires(`fires-${k}`, buyPrefix(k), BUYS));
}
// The ceilings' own sets, under prefixes of their own (their deliveries are no load generator's 200s).
const CEILING_ROUNDS = 2;
const ceilingFiles: Record<Side, string[]> = { webhook: [], reporting: [] };
for (let k = 0; k < CEILING_ROUNDS; k++) {
  ceilingFiles.webhook.push(seedHmacRequests(bench, agentId, `rc-op-${k}-`, OPS));
  ceilingFiles.reporting.push(writeFires(`ceiling-fires-${k}`, `buy_rc-${k}-`, BUYS));
}

const loadRunner = startLoadRunner({ sqlTop: SQL_TIMING ? 24 : undefined });
const load = (job: RoundJob) => loadRunner.run(job);

/** Acknowledged deliveries of a round that are applied. */
async function applied(side: Side, prefix: string): Promise<number> {
  if (side === 'webhook') return appliedDeliveries(bench.app.store, prefix);
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM reporting_fires WHERE state = 'applied' AND buy_id LIKE ${`${prefix}%`}`.execute(bench.app.store.db.kysely);
  return Number(rows[0]!.n);
}

// Warm-up on separate small sets (JIT, connections, SQLite caches), not counted.
await load({ origin, file: seedHmacRequests(bench, agentId, opPrefix('warm'), 400), durationMs: 3_000, label: 'warm-up (operation webhooks)' });
await load({ origin, file: writeFires('fires-warm', buyPrefix('warm'), 400), durationMs: 3_000, label: 'warm-up (reporting fires)' });

interface Round {
  load: LoadResult;
  /** Seconds from the end of the load to the last acknowledged delivery applied. */
  applyWait: number;
}
const rounds: Record<Side, Round[]> = { webhook: [], reporting: [] };
const profiler = new Profiler();
let profileTable = '';
if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });

for (let k = 0; k < N_ROUNDS; k++) {
  const sides: Side[] = k % 2 === 0 ? ['webhook', 'reporting'] : ['reporting', 'webhook'];
  for (const side of sides) {
    const prefix = side === 'webhook' ? opPrefix(k) : buyPrefix(k);
    const profiling = PROFILE_DIR !== undefined && k === 0 && side === 'reporting';
    if (profiling) await profiler.start();
    const r = await load({ origin, file: files[side][k]!, durationMs: SECONDS * 1000, label: `round ${k + 1} ${side}${profiling ? ' (profiled)' : ''}` });
    const done = await waitForCount(() => applied(side, prefix), r.ok, 60_000);
    logApplyWait(`round ${k + 1} ${side}`, done.seconds);
    if (profiling) {
      const out = join(PROFILE_DIR!, 'reporting-ingest.cpuprofile');
      profileTable = topSelfTable(topSelf(await profiler.stop(out), 20, REPO_ROOT));
      log(`profile written to ${out}`);
    }
    rounds[side].push({ load: r, applyWait: done.seconds });
    // The status reads a round's deliveries cause (a second after each report) done before the other side's round.
    await settle(bench.app);
  }
}
loadRunner.close();

const ceilings: Record<Side, Ceiling[]> = { webhook: [], reporting: [] };
for (let k = 0; k < CEILING_ROUNDS; k++) {
  for (const side of (k % 2 === 0 ? ['webhook', 'reporting'] : ['reporting', 'webhook']) as Side[]) {
    const c = await (side === 'webhook' ? operationWebhookCeiling : reportingFireCeiling)(bench.app, ceilingFiles[side][k]!, SECONDS * 1000);
    log(`ceiling round ${k + 1} ${side}: ${fmt(c.perSecond)}/s applied, ${c.other} other, ${fmt(c.cpuMicros)} µs CPU per delivery`);
    ceilings[side].push(c);
  }
}
seller.stdin!.end();

// --- Checks ---
const ok = (side: Side) => rounds[side].reduce((n, r) => n + r.load.ok, 0);
const sent = (side: Side) => rounds[side].reduce((n, r) => n + r.load.sent, 0);
const rateOf = (r: Round) => r.load.ok / (r.load.seconds + r.applyWait);
const overall = (side: Side) => ok(side) / rounds[side].reduce((n, r) => n + r.load.seconds + r.applyWait, 0);

const fires = checkFires(bench.dbPath, 'buy_rf-');
const warm = checkFires(bench.dbPath, buyPrefix('warm'));
// The measured rounds only: the warm-up's fires are under the same prefix family.
const measured = {
  applied: fires.applied - warm.applied,
  received: fires.received,
  rows: fires.rows - warm.rows,
  keys: fires.keys - warm.keys,
  reports: fires.reports - warm.reports,
};
// As for the fires: the measured rounds' deliveries applied, without the warm-up's.
const opAll = await webhookDeliveryChecks(bench.app.store, 'rw-op-');
const op = { ...opAll, applied: Number(opAll.applied) - Number((await webhookDeliveryChecks(bench.app.store, opPrefix('warm'))).applied) };
const ceilingFires = checkFires(bench.dbPath, 'buy_rc-');
await bench.close();

const checkRows: ResultRow[] = [
  { figure: '  check, fires: every 200 stored and applied (applied / 200s)', value: `${measured.applied} / ${ok('reporting')}`, target: 'equal', pass: measured.applied === ok('reporting') },
  { figure: '  check, fires: none left unapplied', value: String(measured.received), target: '0', pass: measured.received === 0 },
  { figure: '  check, fires: stored once (rows / distinct keys)', value: `${measured.rows} / ${measured.keys}`, target: 'equal', pass: measured.rows === measured.keys && measured.rows === measured.applied },
  { figure: '  check, fires: one counted report per fire (reports / fires)', value: `${measured.reports} / ${measured.rows}`, target: 'equal', pass: measured.reports === measured.rows },
  {
    figure: '  check, fires: every buy holds the sum of its fires (wrong buys; Σ buys / Σ fires spend)',
    value: `${fires.wrongBuys}; ${fires.buySpend.toFixed(2)} / ${fires.fireSpend.toFixed(2)}`,
    target: '0; equal',
    pass: fires.wrongBuys === 0 && Math.round(fires.buySpend * 100) === Math.round(fires.fireSpend * 100),
  },
  { figure: '  check, fires: every request answered 200', value: `${ok('reporting')} / ${sent('reporting')}`, target: 'equal', pass: ok('reporting') === sent('reporting') },
  { figure: '  check, operation webhooks: every 200 applied (applied / 200s)', value: `${op.applied} / ${ok('webhook')}`, target: 'equal', pass: Number(op.applied) === ok('webhook') },
  { figure: '  check, operation webhooks: none unapplied, none twice (received; rows / keys; completed twice)', value: `${op.received}; ${op.rows} / ${op.keys}; ${op.twice}`, target: '0; equal; 0', pass: Number(op.received) === 0 && Number(op.rows) === Number(op.keys) && Number(op.twice) === 0 },
  { figure: '  check, operation webhooks: every request answered 200', value: `${ok('webhook')} / ${sent('webhook')}`, target: 'equal', pass: ok('webhook') === sent('webhook') },
  {
    figure: '  check, ceiling fires: each applied once, every buy right (applied / stored; unapplied; wrong buys)',
    value: `${ceilings.reporting.reduce((n, c) => n + c.applied, 0)} / ${ceilingFires.applied}; ${ceilingFires.received}; ${ceilingFires.wrongBuys}`,
    target: 'equal; 0; 0',
    pass: ceilings.reporting.reduce((n, c) => n + c.applied + c.other, 0) === ceilingFires.applied && ceilingFires.received === 0 && ceilingFires.wrongBuys === 0,
  },
];
const ceilingOf = (side: Side) => {
  const cs = ceilings[side];
  const applied = cs.reduce((n, c) => n + c.applied, 0);
  return { rate: applied / cs.reduce((n, c) => n + c.seconds, 0), cpu: cs.reduce((n, c) => n + c.cpuMicros * c.applied, 0) / Math.max(1, applied) };
};
const ratios = rounds.reporting.map((r, i) => rateOf(r) / rateOf(rounds.webhook[i]!));
const ratio = median(ratios);
const checksPassed = checkRows.every((r) => r.pass !== false);
const rows: ResultRow[] = [
  { figure: 'operation-webhook ingest, HMAC, acknowledged and applied (SQLite FULL)', value: perSecond(overall('webhook')) },
  { figure: 'reporting-fire ingest, HMAC, acknowledged and applied (SQLite FULL)', value: perSecond(overall('reporting')) },
  {
    figure: `  ratio reporting / operation webhooks, median of ${ratios.length} alternating rounds (${ratios.map((r) => r.toFixed(2)).join(' / ')})${checksPassed ? '' : ' (checks failed: does not count)'}`,
    value: `${ratio.toFixed(3)}×`,
    target: `≥ ${TARGET}×`,
    pass: ratio >= TARGET && checksPassed,
  },
  { figure: '  per round: operation webhooks / reporting fires', value: rounds.webhook.map((r, i) => `${fmt(rateOf(r))} / ${fmt(rateOf(rounds.reporting[i]!))}`).join('; ') },
  { figure: '  wait after each round until its last 200 was applied: webhooks; fires', value: `${rounds.webhook.map((r) => `${(r.applyWait * 1000).toFixed(0)}`).join('/')}; ${rounds.reporting.map((r) => `${(r.applyWait * 1000).toFixed(0)}`).join('/')} ms` },
  { figure: '  p99 per round: operation webhooks / reporting fires', value: rounds.webhook.map((r, i) => `${r.load.p99ms.toFixed(1)} / ${rounds.reporting[i]!.load.p99ms.toFixed(1)} ms`).join('; ') },
  {
    figure: `  information: ceiling, engine + store alone (no HTTP), ${CEILING_ROUNDS} alternating rounds: operation webhooks / fires`,
    value: `${perSecond(ceilingOf('webhook').rate)} / ${perSecond(ceilingOf('reporting').rate)} = ${(ceilingOf('reporting').rate / ceilingOf('webhook').rate).toFixed(3)}×`,
  },
  {
    figure: '  information: ceiling, CPU of this process per delivery: operation webhooks / fires',
    value: `${fmt(ceilingOf('webhook').cpu)} / ${fmt(ceilingOf('reporting').cpu)} µs = ${(ceilingOf('webhook').cpu / ceilingOf('reporting').cpu).toFixed(3)}×`,
  },
  ...checkRows,
];
printResults(
  `reporting-ingest (${machineLine()}; load: separate process, undici ${LOAD.connections} conns × pipelining ${LOAD.pipelining}, ${LOAD.inFlight} in flight; ${OPS} operations × 5 deliveries and ${BUYS} buys × ${FIRES_PER_BUY} fires per round; ${N_ROUNDS} rounds × ${SECONDS} s per side)`,
  rows,
);
if (profileTable) process.stdout.write(`## CPU profile of the first reporting round (top self time)\n\n${profileTable}\n`);
process.exit(0);
