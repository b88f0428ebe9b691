/**
 * Webhook ingest against its durable floor (BENCHMARKS.md, Targets). Each figure is a
 * ratio to a floor measured in the same run, in alternating rounds, with the same load
 * generator (bench/lib/loadgen.ts, a separate process) and the same requests:
 *
 * - HMAC: the orchestrator (verified, deduplicated and durably applied on SQLite, WAL +
 *   synchronous=FULL as shipped) against the durable floor: a bare Fastify endpoint that
 *   checks the HMAC, stores each delivery with one INSERT group-committed once per turn
 *   of the event loop, and answers 200 after that commit (bench/lib/ingest-endpoints.ts).
 *   Target ≥ 0.6× the floor.
 * - RFC 9421: the same, the floor verifying the same signature with the same verifier
 *   (src/webhooks/rfc9421.ts) and storing its nonce in the same insert (UNIQUE). ≥ 0.6×.
 *
 * Ours counts deliveries acknowledged AND applied: a round of ours ends when its last
 * acknowledged delivery is applied (the wait after the load generator stops is added to
 * the round's time; it is 0 while deliveries are applied before they are acknowledged).
 * The ratio of record is the median of the per-round ratios (each round: ours ÷ floor).
 * Printed beside it, for information: the bare endpoints that store nothing (the
 * baselines of earlier sessions), absolute rates, the ceiling of the engine and
 * store alone (no HTTP, no signature, see ceilingRound), the HMAC floor with what our
 * contract stores for a delivery (bench/lib/applied-ingest-floor.ts: deduplicated,
 * applied to its operation, its event and notification), and the CPU each side spends
 * per acknowledged delivery (process.cpuUsage over its rounds: this process serves the
 * bare endpoint, the floor and the orchestrator, one at a time; the load generator is
 * another process), the figure that moves least with the machine's other load.
 *
 * Operations are seeded `submitted` (sealed HMAC secrets, or an agent with an inline
 * JWKS). Every delivery is a distinct, validly signed envelope with a unique
 * idempotency_key: 80 % non-terminal progress, 20 % terminal. Round k of a mode sends
 * chunk k of the deliveries to the bare endpoint, the floor and the orchestrator (order
 * reversed every other round); each verifies its own nonces, so the same signed bytes
 * are fresh for each.
 *
 * Correctness (PASS/MISS; a figure counts only with its checks passing): every
 * delivery the orchestrator acknowledged with 200 is applied, none left unapplied, none
 * stored twice, no operation completed twice; every delivery a floor acknowledged is in
 * its table.
 *
 * --profile DIR writes a CPU profile of the orchestrator's first round of each mode and
 * of the 32-in-flight ceiling (V8 inspector in this process, as `node --cpu-prof`) and
 * prints their top self time;
 * profiled rounds are slower, so such a run is not a run of record.
 *
 *   npx tsx bench/webhook-ingest.ts [--seconds 5] [--rounds 3] [--profile DIR]
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { keySourceFromConfig, type WebhookSigningConfig } from '../src/adcp/webhook-signature.js';
import { parseDelivery } from '../src/webhooks/parse-delivery.js';
import { fmt, log, machineLine, printResults, REPO_ROOT, tempDir, waitForCount, type ResultRow } from './lib/common.js';
import { Profiler, topSelf, topSelfTable } from './lib/cpu-profile.js';
import { floorRows, perSecond, roundRatios } from './lib/floor-report.js';
import { startIngestEndpoints, type IngestMode } from './lib/ingest-endpoints.js';
import { startAppliedIngestFloor } from './lib/applied-ingest-floor.js';
import type { LoadResult } from './lib/loadgen.js';
import { appliedDeliveries, INGEST_LOAD, logApplyWait, startLoadRunner, webhookDeliveryChecks, type RoundJob } from './lib/load-runner.js';
import { addAgent, opId, seedOperations, startBenchApp } from './lib/orchestrator.js';
import { enableSqlTiming, resetSqlTiming, sqlTimingReport } from './lib/sql-timing.js';
import { envelope, hmacHeaders, mintRfc9421Identity, plan, rfc9421Headers, ROUNDS, type SeededOp } from './lib/webhooks.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    'hmac-ops': { type: 'string', default: '5000' },
    'rfc-ops': { type: 'string', default: '1500' },
    profile: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const N_ROUNDS = Number(values.rounds);
const HMAC_OPS = Number(values['hmac-ops']); // per round: 5 deliveries each
const RFC_OPS = Number(values['rfc-ops']);
const PROFILE_DIR = values.profile;
const LOAD = INGEST_LOAD;
/** Longest wait, after a round of ours, for its acknowledged deliveries to be applied. */
const APPLY_TIMEOUT_MS = 60_000;

log(`machine: ${machineLine()}`);
const SQL_TIMING = process.env.BENCH_SQL_TIMING === '1';
if (SQL_TIMING) enableSqlTiming();
const dir = tempDir();
const bench = await startBenchApp({ dbPath: join(dir, 'orchestrator.db') });
const origin = bench.url;
const identity = mintRfc9421Identity();
const signing = { jwks: identity.publicJwks };
const agentId = await addAgent(bench, 'http://127.0.0.1:9/mcp', { webhookSigning: signing });

/** Seeds `n` submitted operations for one webhook mode and returns what a sender knows about them. */
function seed(prefix: string, n: number, mode: IngestMode): SeededOp[] {
  const ops: SeededOp[] = [];
  for (let i = 0; i < n; i++) {
    const id = opId(prefix, i);
    ops.push({ id, token: randomBytes(24).toString('base64url'), taskId: `task-${id}`, ...(mode === 'hmac' ? { secret: randomBytes(32).toString('base64url') } : {}) });
  }
  const { seconds } = seedOperations(bench.dbPath, {
    n,
    tenantId: bench.tenantId,
    agentId,
    idPrefix: prefix,
    status: 'submitted',
    webhookMode: mode,
    nextCheckAt: () => Date.now() + 3_600_000, // backup poll far away: only webhooks move them
    row: (i) => ({
      webhook_token: ops[i].token,
      webhook_secret_enc: ops[i].secret ? bench.app.secrets.seal(ops[i].secret!) : null,
    }),
  });
  log(`seeded ${n} ${mode} operations in ${seconds.toFixed(1)} s`);
  return ops;
}

/** Signed requests for `ops`, signed for the orchestrator's URL (the other endpoints verify against that same URL). */
function writeRequests(name: string, ops: SeededOp[], mode: IngestMode): string {
  const lines: string[] = [];
  for (const d of plan(ops)) {
    const body = envelope(d);
    const path = `/webhooks/adcp/${d.op.token}`;
    const headers = mode === 'hmac' ? hmacHeaders(d.op.secret!, body) : rfc9421Headers(identity, `${origin}${path}`, body);
    lines.push(JSON.stringify({ path, headers, body }));
  }
  const file = join(dir, `${name}.ndjson`);
  writeFileSync(file, lines.join('\n'));
  return file;
}

const loadRunner = startLoadRunner({ sqlTop: SQL_TIMING ? 8 : undefined });
const load = (job: RoundJob) => loadRunner.run(job);

const secretByToken = new Map<string, string>();
const endpoints = await startIngestEndpoints({
  signedOrigin: origin,
  secretByToken,
  keys: keySourceFromConfig(signing as WebhookSigningConfig, { allowPrivateNetwork: true, agentType: 'sales' })!,
  dir,
});

const appliedFloor = await startAppliedIngestFloor(dir);

// --- Requests: one chunk of fresh operations per round and mode. ---
const prefixOf = (mode: IngestMode, k: number) => `wh-${mode === 'hmac' ? 'hmac' : 'rfc'}-${k}-`;
const chunks: Record<IngestMode, string[]> = { hmac: [], rfc9421: [] };
for (let k = 0; k < N_ROUNDS; k++) {
  const h = seed(prefixOf('hmac', k), HMAC_OPS, 'hmac');
  for (const o of h) secretByToken.set(o.token, o.secret!);
  appliedFloor.addOperations(h.map((o) => ({ id: o.id, token: o.token, secret: o.secret! })));
  chunks.hmac.push(writeRequests(`hmac-${k}`, h, 'hmac'));
  chunks.rfc9421.push(writeRequests(`rfc-${k}`, seed(prefixOf('rfc9421', k), RFC_OPS, 'rfc9421'), 'rfc9421'));
}
// Warm-up on a separate small set (JIT, connections, SQLite caches), not counted.
const warm = seed('wh-warm-', 400, 'hmac');
for (const o of warm) secretByToken.set(o.token, o.secret!);
appliedFloor.addOperations(warm.map((o) => ({ id: o.id, token: o.token, secret: o.secret! })));
const warmFile = writeRequests('warm', warm, 'hmac');
// RFC 9421 too: the verifier's first calls (key import, the SDK's code) must not land in the first measured round.
const warmRfcFile = writeRequests('warm-rfc', seed('wh-warm-rfc-', 100, 'rfc9421'), 'rfc9421');
await load({ origin, file: warmFile, durationMs: 3_000, label: 'warm-up (orchestrator)' });
await load({ origin: endpoints.floor.hmac, file: warmFile, durationMs: 2_000, label: 'warm-up (floor)' });
await load({ origin: endpoints.bare.hmac, file: warmFile, durationMs: 2_000, label: 'warm-up (bare)' });
const appliedWarmOk = (await load({ origin: appliedFloor.origin, file: warmFile, durationMs: 2_000, label: 'warm-up (floor with the contract\'s storage)' })).ok;
for (const [side, o] of [['orchestrator', origin], ['floor', endpoints.floor.rfc9421], ['bare', endpoints.bare.rfc9421]] as const) {
  await load({ origin: o, file: warmRfcFile, durationMs: 1_000, label: `warm-up RFC 9421 (${side})` });
}

interface Round {
  /** CPU seconds this process (which serves all three sides; the load generator is another) spent in each side's round. */
  cpu: { bare: number; floor: number; ours: number; applied: number };
  bare: LoadResult;
  /** HMAC rounds: the floor with the contract's storage (information). */
  applied?: LoadResult;
  floor: LoadResult;
  /** Rows the floor's table gained in this round (must equal its 200s). */
  floorStored: number;
  ours: LoadResult;
  /** Seconds from the end of our load to the last acknowledged delivery applied. */
  oursApplyWait: number;
}
const rounds: Record<IngestMode, Round[]> = { hmac: [], rfc9421: [] };
/** CPU seconds (user + system, every thread) this process has used so far. */
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const profiles: string[] = [];
const profiler = new Profiler();
if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });

for (let k = 0; k < N_ROUNDS; k++) {
  for (const mode of ['hmac', 'rfc9421'] as const) {
    const file = chunks[mode][k]!;
    const durationMs = SECONDS * 1000;
    const r: Partial<Round> = {};
    const cpu = { bare: 0, floor: 0, ours: 0, applied: 0 };
    r.cpu = cpu;
    const sides: Array<() => Promise<void>> = [
      async () => {
        const c0 = cpuSeconds();
        r.bare = await load({ origin: endpoints.bare[mode], file, durationMs, label: `round ${k + 1} bare ${mode}` });
        cpu.bare = cpuSeconds() - c0;
      },
      async () => {
        const before = endpoints.floorStored(mode);
        const c0 = cpuSeconds();
        r.floor = await load({ origin: endpoints.floor[mode], file, durationMs, label: `round ${k + 1} floor ${mode}` });
        cpu.floor = cpuSeconds() - c0;
        r.floorStored = endpoints.floorStored(mode) - before;
      },
      async () => {
        const profiling = PROFILE_DIR !== undefined && k === 0;
        if (profiling) await profiler.start();
        const c0 = cpuSeconds();
        r.ours = await load({ origin, file, durationMs, label: `round ${k + 1} orchestrator ${mode}${profiling ? ' (profiled)' : ''}` });
        const applied = await waitForCount(() => appliedDeliveries(bench.app.store, prefixOf(mode, k)), r.ours.ok, APPLY_TIMEOUT_MS);
        cpu.ours = cpuSeconds() - c0;
        r.oursApplyWait = applied.seconds;
        logApplyWait(`round ${k + 1} orchestrator ${mode}`, applied.seconds);
        if (profiling) {
          const out = join(PROFILE_DIR!, `webhook-ingest-${mode}.cpuprofile`);
          const p = await profiler.stop(out);
          profiles.push(`\n### ${mode} (${out})\n\n${topSelfTable(topSelf(p, 15, REPO_ROOT))}\n`);
        }
      },
    ];
    if (mode === 'hmac') {
      sides.push(async () => {
        const c0 = cpuSeconds();
        r.applied = await load({ origin: appliedFloor.origin, file, durationMs, label: `round ${k + 1} floor with the contract's storage ${mode}` });
        cpu.applied = cpuSeconds() - c0;
      });
    }
    for (const side of k % 2 === 0 ? sides : [...sides].reverse()) await side();
    rounds[mode].push(r as Round);
  }
}
await endpoints.close();
const appliedTally = appliedFloor.tally();
await appliedFloor.close();
loadRunner.close();

/**
 * The ceiling of our durable path on this machine: the engine + store alone, in this
 * process, with no HTTP and no signature check (the receiver's work after
 * authentication: target read, parse, one `ingest` call), `inFlight` at a time, same
 * mix. No HTTP layer on top can be faster than this at the same concurrency.
 */
async function ceilingRound(file: string, ms: number, inFlight: number): Promise<{ applied: number; other: number; seconds: number; cpu: number }> {
  const deliveries = readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => JSON.parse(line) as { path: string; body: string })
    .map((r) => ({ token: r.path.slice('/webhooks/adcp/'.length), body: Buffer.from(r.body) }));
  const ingest = bench.app.webhookIngest;
  let next = 0;
  let applied = 0;
  let other = 0;
  const c0 = cpuSeconds();
  const t0 = performance.now();
  const until = t0 + ms;
  const worker = async () => {
    while (next < deliveries.length && performance.now() < until) {
      const d = deliveries[next++]!;
      const operation = await ingest.target(d.token);
      const parsed = parseDelivery(d.body);
      if (!operation || !parsed.ok) throw new Error('ceiling: a seeded delivery did not resolve or parse');
      const outcome = await ingest.ingest({ operation, claims: parsed.payload, fingerprint: parsed.fingerprint, text: parsed.text });
      if (outcome.kind === 'applied') applied++;
      else other++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { applied, other, seconds: (performance.now() - t0) / 1000, cpu: cpuSeconds() - c0 };
}
/**
 * The ceiling at the load generator's real concurrency, too: undici pipelines no POST
 * (a request that is not idempotent waits until its connection has nothing in flight),
 * so its 32 connections × pipelining 2 keep 32 deliveries in flight, not 64, and a
 * group commit can gather at most that many. Comparing ours with the 64-in-flight
 * ceiling charges the HTTP layer with half-sized groups it did not cause.
 */
const CEILING_IN_FLIGHT = [LOAD.inFlight, LOAD.connections] as const;
const ceilings: Array<{ inFlight: number; prefix: string; applied: number; other: number; seconds: number; cpu: number }> = [];
for (const [i, inFlight] of CEILING_IN_FLIGHT.entries()) {
  const prefix = i === 0 ? 'wh-ceil-' : `wh-ceil${inFlight}-`;
  const ops = seed(prefix, HMAC_OPS, 'hmac');
  if (SQL_TIMING) resetSqlTiming();
  const file = writeRequests(`ceiling-${inFlight}`, ops, 'hmac');
  // Profiled too, at 32 in flight: beside ours, it tells which costs are the HTTP layer's.
  const profiling = PROFILE_DIR !== undefined && inFlight === LOAD.connections;
  if (profiling) await profiler.start();
  const c = await ceilingRound(file, SECONDS * 1000, inFlight);
  if (profiling) {
    const out = join(PROFILE_DIR!, `webhook-ingest-ceiling-${inFlight}.cpuprofile`);
    profiles.push(`\n### ceiling, ${inFlight} in flight (${out})\n\n${topSelfTable(topSelf(await profiler.stop(out), 15, REPO_ROOT))}\n`);
  }
  if (SQL_TIMING) log(`ceiling ${inFlight} in flight, ${c.applied} deliveries:\n${sqlTimingReport(8)}`);
  log(`ceiling (engine + store alone, HMAC mix, ${inFlight} in flight): ${fmt(c.applied / c.seconds)}/s applied, ${c.other} other outcomes`);
  ceilings.push({ inFlight, prefix, ...c });
}

const checks = (prefix: string) => webhookDeliveryChecks(bench.app.store, prefix);
const sum = (rs: Round[], f: (r: Round) => number) => rs.reduce((a, r) => a + f(r), 0);
const rate = (ok: number, seconds: number) => ok / seconds;
const resultRows: ResultRow[] = [];
for (const [mode, label, prefix] of [
  ['hmac', 'HMAC, acknowledged and applied (SQLite FULL)', 'wh-hmac-'],
  ['rfc9421', 'RFC 9421 (Ed25519 + durable nonce), acknowledged and applied (SQLite FULL)', 'wh-rfc-'],
] as const) {
  const rs = rounds[mode];
  const floorRates = rs.map((r) => rate(r.floor.ok, r.floor.seconds));
  const oursRates = rs.map((r) => rate(r.ours.ok, r.ours.seconds + r.oursApplyWait));
  const bareRate = rate(sum(rs, (r) => r.bare.ok), sum(rs, (r) => r.bare.seconds));
  const floorRate = rate(sum(rs, (r) => r.floor.ok), sum(rs, (r) => r.floor.seconds));
  const oursRate = rate(sum(rs, (r) => r.ours.ok), sum(rs, (r) => r.ours.seconds + r.oursApplyWait));
  const oursOk = sum(rs, (r) => r.ours.ok);
  const oursSent = sum(rs, (r) => r.ours.sent);
  const floorOk = sum(rs, (r) => r.floor.ok);
  const floorStored = sum(rs, (r) => r.floorStored);
  const c = await checks(prefix);
  const checkRows: ResultRow[] = [
    { figure: '  check: every 200 applied (applied rows / 200s)', value: `${c.applied} / ${oursOk}`, target: 'equal', pass: c.applied === oursOk },
    { figure: '  check: none left unapplied', value: String(c.received), target: '0', pass: c.received === 0 },
    { figure: '  check: no duplicate (rows / distinct keys / ops completed twice)', value: `${c.rows} / ${c.keys} / ${c.twice}`, target: 'rows = keys, 0', pass: c.rows === c.keys && c.twice === 0 },
    { figure: '  check: every request to us answered 200', value: `${oursOk} / ${oursSent}`, target: 'equal', pass: oursOk === oursSent },
    { figure: '  check, floor: every 200 in its table (rows / 200s)', value: `${floorStored} / ${floorOk}`, target: 'equal', pass: floorStored === floorOk },
  ];
  const { ratio, how } = roundRatios(floorRates, oursRates);
  resultRows.push(
    ...floorRows({
      figure: `webhook ingest ${label}`,
      floor: perSecond(floorRate),
      ours: perSecond(oursRate),
      ratio,
      how,
      target: { cmp: '≥', value: 0.6 },
      checksPassed: checkRows.every((r) => r.pass !== false),
    }),
  );
  resultRows.push({ figure: '  information: bare endpoint storing nothing; floor / bare; ours / bare', value: `${perSecond(bareRate)}; ${(floorRate / bareRate).toFixed(3)}×; ${(oursRate / bareRate).toFixed(3)}×` });
  resultRows.push({ figure: '  information: floor mean deliveries per group commit', value: endpoints.floorGroupSize(mode).toFixed(1) });
  const us = (cpu: number, n: number) => `${((cpu / Math.max(1, n)) * 1e6).toFixed(0)} µs`;
  resultRows.push({
    figure: '  information: CPU per acknowledged delivery, server side (bare; floor; ours)',
    value: `${us(sum(rs, (r) => r.cpu.bare), sum(rs, (r) => r.bare.ok))}; ${us(sum(rs, (r) => r.cpu.floor), floorOk)}; ${us(sum(rs, (r) => r.cpu.ours), oursOk)}`,
  });
  if (mode === 'hmac') {
    const appliedOk = sum(rs, (r) => r.applied!.ok);
    const appliedRate = rate(appliedOk, sum(rs, (r) => r.applied!.seconds));
    resultRows.push({
      figure: "  information: the floor with the contract's storage (deduplicated, applied, event, notification); ÷ floor; ours ÷ it; its CPU per delivery",
      value: `${perSecond(appliedRate)}; ${(appliedRate / floorRate).toFixed(3)}×; ${(oursRate / appliedRate).toFixed(3)}×; ${us(sum(rs, (r) => r.cpu.applied), appliedOk)}`,
    });
    resultRows.push({
      figure: "  check, floor with the contract's storage: every 200 stored and applied once (rows / 200s; repeats)",
      value: `${appliedTally.stored} / ${appliedOk + appliedWarmOk}; ${appliedTally.repeats}`,
      target: 'equal; 0',
      pass: appliedTally.stored === appliedOk + appliedWarmOk && appliedTally.repeats === 0,
    });
    for (const c of ceilings) {
      const ceil = c.applied / c.seconds;
      resultRows.push({ figure: `  information: ceiling, engine + store alone, no HTTP, no signature (this process, ${c.inFlight} in flight)`, value: `${perSecond(ceil)} = ${(ceil / floorRate).toFixed(3)}× floor, CPU ${us(c.cpu, c.applied)} per delivery` });
      const cc = await checks(c.prefix);
      resultRows.push({ figure: `  check, ceiling ${c.inFlight}: every applied outcome stored applied, none other`, value: `${cc.applied} / ${c.applied}, ${c.other}`, target: 'equal, 0', pass: cc.applied === c.applied && c.other === 0 && cc.received === 0 });
    }
  }
  resultRows.push({ figure: '  ours: wait after each round until its last 200 was applied', value: rs.map((r) => `${(r.oursApplyWait * 1000).toFixed(0)} ms`).join(' / ') });
  resultRows.push({ figure: '  p99 per round: floor / ours', value: rs.map((r) => `${r.floor.p99ms.toFixed(1)} / ${r.ours.p99ms.toFixed(1)} ms`).join('; ') });
  resultRows.push(...checkRows);
}
await bench.close();
printResults(
  `webhook-ingest (${machineLine()}; load: separate process, undici ${LOAD.connections} conns × pipelining ${LOAD.pipelining}, ${LOAD.inFlight} in flight asked, at most ${LOAD.connections} kept: undici pipelines no POST; ${ROUNDS.length} deliveries/op: ${ROUNDS.join(',')}; ${N_ROUNDS} rounds × ${SECONDS} s per side)`,
  resultRows,
);
if (profiles.length > 0) process.stdout.write(`## CPU profiles of the orchestrator, first round (top self time)\n${profiles.join('')}\n`);
process.exit(0);
