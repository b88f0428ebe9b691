/**
 * Polls dispatched and applied per second with 100,000 `submitted` operations due,
 * against the durable floor (BENCHMARKS.md, Targets: ≥ 0.6× the floor).
 *
 * Ours: the real Scheduler + OperationService from createApp (SQLite WAL +
 * synchronous=FULL), each poll a claim (batched), a get_task_status over MCP and
 * a lease-checked durable write. A poll counts when its result is applied.
 *
 * Floor (bench/lib/floor-sqlite.ts): a bare loop polling the same seller over the same
 * transport at the same concurrency (CONCURRENCY workers, each POSTing the same JSON-RPC
 * `tools/call get_task_status` with node:http on kept-alive connections and parsing
 * the reply), storing each result with ONE UPDATE of its row in a SQLite file (WAL,
 * synchronous=FULL, 100,000 rows like ours), group-committed once per turn of the event
 * loop; a worker counts the poll and moves on only after that COMMIT. (node:http, the
 * fastest bare client here: Node's fetch is 4-8× slower on this path, which would
 * flatter the ratio.) Rounds alternate (floor before ours, then ours before floor) so
 * both see the same machine; the ratio of record is the median of per-round ratios.
 * The seller is bench/lib/fast-seller.ts in its own process (90 % of replies
 * `submitted`, 10 % `completed`). The scheduler's restart ramp (ADCP_ORCH_WARMUP_MS)
 * is off: the figure is the steady rate, not the deliberate slow start after a restart.
 *
 * Also, information: the same loop storing nothing (the bare baseline of earlier
 * sessions), with fetch, and through the MCP SDK client, to show what those cost; and
 * the floor with the lease our contract adds (bench/lib/claim-floor.ts: each poll
 * claimed under a lease in a page committed before it is sent, its result written
 * under that lease, rows as wide as ours), to show how much of the distance is the
 * lease itself.
 *
 * Correctness: every finished poll of ours applied, none left leased, no failure; the
 * seller saw at least one poll per row we applied; every floor poll's UPDATE in its
 * table (sum of the rows' poll counters = polls counted).
 *
 *   npx tsx bench/poll-dispatch.ts [--ops 100000] [--seconds 20] [--rounds 2] [--concurrency 64] [--profile-ours out.cpuprofile]
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { join } from 'node:path';
import { fmt, log, machineLine, nextMessage, percentile, printResults, send, sleep, spawnTs, tempDir } from './lib/common.js';
import { BarePoller, taskStatusBody } from './lib/bare-poll.js';
import { openFloorDb, TurnCommitter } from './lib/floor-sqlite.js';
import { ClaimingFloor } from './lib/claim-floor.js';
import { floorRows, perSecond, roundRatios } from './lib/floor-report.js';
import { addAgent, opId, seedOperations, startBenchApp } from './lib/orchestrator.js';
import { enableSqlTiming, sqlTimingReport } from './lib/sql-timing.js';

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '64' },
    // Writes a .cpuprofile of this process covering only our rounds (not the bare loops).
    'profile-ours': { type: 'string' },
  },
});
const OPS = Number(values.ops);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
/** Each round of each side lasts this long. */
const ROUND_MS = (Number(values.seconds) * 1000) / (2 * ROUNDS);
if (process.env.BENCH_SQL_TIMING === '1') enableSqlTiming();

log(`machine: ${machineLine()}`);
const loadBefore = machineLine();
const seller = spawnTs('bench/lib/fast-seller.ts');
const { url: sellerUrl } = await nextMessage<{ url: string }>(seller, (m) => 'url' in m);

const bench = await startBenchApp({
  listen: false,
  concurrency: CONCURRENCY,
  // Re-polls far away: every operation is polled once in the run.
  env: { ADCP_ORCH_POLL_INTERVAL_MS: '600000', ADCP_ORCH_CALL_TIMEOUT_MS: '10000', ADCP_ORCH_WARMUP_MS: '0' },
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

// ---- ours: count finished claimed work (the scheduler calls operations.runClaimed per claimed row) ----
const ops = bench.app.operations;
const original = ops.runClaimed.bind(ops);
const durations: number[] = [];
let finished = 0;
let failures = 0;
ops.runClaimed = async (row) => {
  const t0 = performance.now();
  try {
    await original(row);
  } catch (err) {
    failures++;
    throw err;
  } finally {
    durations.push(performance.now() - t0);
    finished++;
  }
};

const { Session } = await import('node:inspector/promises');
const profiler = values['profile-ours'] ? new Session() : undefined;
if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
}

async function oursRound(ms: number): Promise<Tally> {
  if (profiler) {
    await profiler.post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 1000) });
    await profiler.post('Profiler.start');
  }
  try {
    return await oursRoundUnprofiled(ms);
  } finally {
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      const { writeFileSync } = await import('node:fs');
      // One file per round, numbered: summarise any of them with scripts/cpu-profile-top.mjs.
      writeFileSync(`${values['profile-ours']}.${++profiledRounds}`, JSON.stringify(profile));
    }
  }
}
let profiledRounds = 0;

async function oursRoundUnprofiled(ms: number): Promise<Tally> {
  const before = finished;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  bench.app.scheduler.start();
  while (performance.now() - t0 < ms && finished < OPS) await sleep(50);
  // Work in flight when the round ends still counts, and so does the time it takes to finish.
  await bench.app.scheduler.stop();
  return { done: finished - before, seconds: (performance.now() - t0) / 1000, ...cpuSince(cpu0) };
}

/** CPU (user + system, and system alone: sockets, fsync) this process spent since `start`, µs: the seller runs in its own process, so this is the poller's alone. */
function cpuSince(start: NodeJS.CpuUsage): { cpuUs: number; sysUs: number } {
  const d = process.cpuUsage(start);
  return { cpuUs: d.user + d.system, sysUs: d.system };
}

// ---- the bare loop over the same transport (the floor stores what it returns) ----
let bareChecksFailed = 0;
const bare = new BarePoller(sellerUrl);
interface StatusReply {
  result?: { structuredContent?: { status?: string; result?: unknown } };
}
const checkBare = (body: StatusReply) => {
  if (typeof body.result?.structuredContent?.status !== 'string') bareChecksFailed++;
};
async function httpPoll(taskId: string): Promise<StatusReply> {
  const reply = await bare.poll<StatusReply>(taskId);
  checkBare(reply);
  return reply;
}
const barePoll = async (i: number): Promise<void> => void (await httpPoll(`task_bare_${i}`));

// ---- the durable floor: the bare loop + one group-committed UPDATE per result ----
const floorDb = openFloorDb(
  join(tempDir(), 'floor-polls.db'),
  'CREATE TABLE operations (id TEXT PRIMARY KEY, task_id TEXT NOT NULL, status TEXT NOT NULL, result TEXT, polls INTEGER NOT NULL DEFAULT 0, polled_at INTEGER)',
);
const floorIds: string[] = [];
floorDb.transaction(() => {
  const insert = floorDb.prepare("INSERT INTO operations (id, task_id, status) VALUES (?, ?, 'submitted')");
  for (let i = 0; i < OPS; i++) {
    const id = opId('floor-', i);
    floorIds.push(id);
    insert.run(id, `task-${id}`);
  }
})();
const floorCommitter = new TurnCommitter(floorDb);
const storeResult = floorDb.prepare('UPDATE operations SET status = ?, result = ?, polls = polls + 1, polled_at = ? WHERE id = ?');
const floorPoll = async (i: number): Promise<void> => {
  const id = floorIds[i % OPS]!;
  const reply = (await httpPoll(`task-${id}`)).result?.structuredContent;
  const result = reply?.result === undefined ? null : JSON.stringify(reply.result);
  await floorCommitter.write(() => storeResult.run(reply?.status ?? 'unknown', result, Date.now(), id));
};

// ---- information: the floor with the lease (claimed pages, lease-checked results) ----
const claimingFloor = new ClaimingFloor(join(tempDir(), 'floor-polls-leased.db'), OPS, CONCURRENCY);
const leasedFloorPoll = async (): Promise<void> =>
  claimingFloor.pollOne(async (taskId) => {
    const reply = (await httpPoll(taskId)).result?.structuredContent;
    return { status: reply?.status ?? 'unknown', result: reply?.result };
  });

async function fetchPoll(i: number): Promise<void> {
  const res = await fetch(sellerUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: taskStatusBody(`task_fetch_${i}`) });
  checkBare((await res.json()) as never);
}

type Poller = (i: number) => Promise<void>;
/** Numbers every poll of every loop in the run: distinct task ids, and the floor's rows taken in turn. */
let pollSeq = 0;
/** A round of one side: polls counted, its length, and this process's CPU over it (all of it, and the kernel's part). */
interface Tally {
  done: number;
  seconds: number;
  cpuUs: number;
  sysUs: number;
}
async function loopRound(poll: Poller, ms: number): Promise<Tally> {
  let done = 0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const end = t0 + ms;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        await poll(pollSeq++);
        done++;
      }
    }),
  );
  return { done, seconds: (performance.now() - t0) / 1000, ...cpuSince(cpu0) };
}

// ---- informational: the same loop through the MCP SDK client ----
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { CallToolResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
const sdkClient = new Client({ name: 'bench-bare', version: '0.0.0' });
// Per-request signals (src/adcp/request-signal.ts), as our transport does: the SDK's session-wide one collects listeners.
const { fetchWithRequestSignal } = await import('../src/adcp/request-signal.js');
await sdkClient.connect(new StreamableHTTPClientTransport(new URL(sellerUrl), { fetch: fetchWithRequestSignal() }));
const sdkPoll: Poller = async (i) => {
  const r = await sdkClient.request({ method: 'tools/call', params: { name: 'get_task_status', arguments: { task_id: `task_sdk_${i}`, include_result: true } } }, CallToolResultSchema);
  if (typeof (r.structuredContent as { status?: unknown } | undefined)?.status !== 'string') bareChecksFailed++;
};

// Warm the loops a little (their polls reach the seller too: counted out below).
const warmFloorPolls = (await loopRound(floorPoll, 500)).done;
const warmLeasedPolls = (await loopRound(leasedFloorPoll, 500)).done;
const warmPolls = (await loopRound(barePoll, 500)).done + warmFloorPolls + warmLeasedPolls + (await loopRound(fetchPoll, 300)).done + (await loopRound(sdkPoll, 300)).done;
// Ours is warmed as long as the floor (its JIT, statements, the MCP session): unwarmed, its first
// round cost 1.3-2× the CPU per poll of the later ones and pulled the median down. Its polls are
// applied like any others (the checks below count them) but stay out of the rates.
await oursRoundUnprofiled(500);
durations.length = 0;
const zero = (): Tally => ({ done: 0, seconds: 0, cpuUs: 0, sysUs: 0 });
const tally = { bare: zero(), floor: zero(), leased: zero(), fetch: zero(), sdk: zero(), ours: zero() };
const add = (t: Tally, r: Tally) => ((t.done += r.done), (t.seconds += r.seconds), (t.cpuUs += r.cpuUs), (t.sysUs += r.sysUs));
/** CPU µs of this process per poll counted. */
const cpuPerPoll = (t: Tally) => t.cpuUs / Math.max(1, t.done);
const cpuLine = (t: Tally) => `${cpuPerPoll(t).toFixed(0)} µs CPU/poll, ${(t.sysUs / Math.max(1, t.done)).toFixed(0)} of it system`;
const perRound = { floor: [] as number[], ours: [] as number[] };
for (let r = 0; r < ROUNDS && finished < OPS; r++) {
  const b = await loopRound(barePoll, ROUND_MS);
  add(tally.bare, b);
  const f = await loopRound(fetchPoll, ROUND_MS / 4);
  add(tally.fetch, f);
  const s = await loopRound(sdkPoll, ROUND_MS / 4);
  add(tally.sdk, s);
  const l = await loopRound(leasedFloorPoll, ROUND_MS / 2);
  add(tally.leased, l);
  // Floor and ours back to back, their order swapped every other round.
  let fl: Tally | undefined;
  let o: Tally | undefined;
  if (r % 2 === 0) {
    fl = await loopRound(floorPoll, ROUND_MS);
    o = await oursRound(ROUND_MS);
  } else {
    o = await oursRound(ROUND_MS);
    fl = await loopRound(floorPoll, ROUND_MS);
  }
  add(tally.floor, fl);
  add(tally.ours, o);
  perRound.floor.push(fl.done / fl.seconds);
  perRound.ours.push(o.done / o.seconds);
  log(
    `round ${r + 1}: floor ${fmt(fl.done / fl.seconds)}/s (${cpuLine(fl)}), ours ${fmt(o.done / o.seconds)}/s (${cpuLine(o)}); bare ${fmt(b.done / b.seconds)}/s, bare with fetch ${fmt(f.done / f.seconds)}/s, bare via MCP SDK client ${fmt(s.done / s.seconds)}/s, floor with the lease ${fmt(l.done / l.seconds)}/s (${cpuLine(l)})`,
  );
}
await sdkClient.close();
bare.close();

// ---- correctness: every finished poll applied, nothing left leased ----
const db = bench.app.store.db.kysely;
const { rows } = await sql<{ polled: number; completed: number; leased: number }>`
  SELECT (SELECT count(*) FROM operations WHERE poll_count > 0 OR status <> 'submitted') AS polled,
         (SELECT count(*) FROM operations WHERE status = 'completed') AS completed,
         (SELECT count(*) FROM operations WHERE lease_owner IS NOT NULL) AS leased`.execute(db);
send(seller, { cmd: 'stats' });
const { stats } = await nextMessage<{ stats: { polls: number } }>(seller, (m) => 'stats' in m);
send(seller, { cmd: 'stop' });
if (process.env.BENCH_SQL_TIMING === '1') log(sqlTimingReport());
await bench.close();

const rateOf = (t: Tally) => t.done / t.seconds;
const bareRate = rateOf(tally.bare);
const floorRate = rateOf(tally.floor);
const oursRate = rateOf(tally.ours);
const sellerPollsByUs = stats.polls - tally.bare.done - tally.floor.done - tally.leased.done - tally.fetch.done - tally.sdk.done - warmPolls;
const { polled, completed, leased } = rows[0];
const floorPollsStored = floorDb.prepare('SELECT coalesce(sum(polls), 0) FROM operations').pluck().get() as number;
const floorPollsCounted = tally.floor.done + warmFloorPolls;
floorDb.close();
const leasedFloor = claimingFloor.tally();
const claimedAhead = claimingFloor.claimedAhead;
const leasedPollsCounted = tally.leased.done + warmLeasedPolls;
claimingFloor.close();
const checks = [
  { figure: '  check: every finished poll applied (rows polled or ended = finished)', value: `${fmt(polled)} / ${fmt(finished)}`, target: 'equal', pass: polled === finished },
  { figure: '  check: seller saw ≥ one poll per applied row', value: `${fmt(sellerPollsByUs)} ≥ ${fmt(polled)}`, target: '≥', pass: sellerPollsByUs >= polled },
  { figure: '  check: failures / rows still leased', value: `${failures} / ${leased}`, target: '0 / 0', pass: failures === 0 && leased === 0 },
  { figure: '  check, floor: every poll it counted stored (sum of row poll counters / polls)', value: `${fmt(floorPollsStored)} / ${fmt(floorPollsCounted)}`, target: 'equal', pass: floorPollsStored === floorPollsCounted },
  {
    figure: '  check, floor with the lease: every poll stored under its lease (stored / counted; lost leases); leased = claimed ahead, unsent',
    value: `${fmt(leasedFloor.polls)} / ${fmt(leasedPollsCounted)}; ${claimingFloor.lostLeases}; ${leasedFloor.leased} = ${claimedAhead}`,
    target: 'equal; 0; equal',
    pass: leasedFloor.polls === leasedPollsCounted && claimingFloor.lostLeases === 0 && leasedFloor.leased === claimedAhead,
  },
  { figure: '  check: bare and floor replies without a status', value: String(bareChecksFailed), target: '0', pass: bareChecksFailed === 0 },
];
const { ratio, how } = roundRatios(perRound.floor, perRound.ours);
printResults(
  `poll-dispatch (${loadBefore}; ${fmt(OPS)} submitted operations due; concurrency ${CONCURRENCY}; ${ROUNDS} alternating rounds of ${(ROUND_MS / 1000).toFixed(1)} s; seller: bench fast MCP seller, separate process)`,
  [
    ...floorRows({
      figure: 'polls dispatched and applied (SQLite FULL)',
      floor: perSecond(floorRate),
      ours: perSecond(oursRate),
      ratio,
      how,
      target: { cmp: '≥', value: 0.6 },
      checksPassed: checks.every((c) => c.pass),
    }),
    { figure: '  information: bare loop storing nothing (node:http, MCP JSON-RPC); floor / bare; ours / bare', value: `${perSecond(bareRate)}; ${(floorRate / bareRate).toFixed(2)}×; ${(oursRate / bareRate).toFixed(2)}×` },
    { figure: '  information: the bare loop with fetch; through the MCP SDK client', value: `${perSecond(rateOf(tally.fetch))} (${(rateOf(tally.fetch) / bareRate).toFixed(2)}× bare); ${perSecond(rateOf(tally.sdk))} (${(rateOf(tally.sdk) / bareRate).toFixed(2)}× bare)` },
    { figure: '  information: CPU of this process per poll, floor / ours (process.cpuUsage over their rounds)', value: `${cpuPerPoll(tally.floor).toFixed(0)} / ${cpuPerPoll(tally.ours).toFixed(0)} µs (system ${(tally.floor.sysUs / Math.max(1, tally.floor.done)).toFixed(0)} / ${(tally.ours.sysUs / Math.max(1, tally.ours.done)).toFixed(0)})` },
    {
      figure: '  information: the floor with the lease (claim committed before the send, result under the lease); ÷ floor; ours ÷ it',
      value: `${perSecond(rateOf(tally.leased))}; ${(rateOf(tally.leased) / floorRate).toFixed(2)}×; ${(oursRate / rateOf(tally.leased)).toFixed(2)}×`,
    },
    {
      figure: '  information: the floor with the lease: CPU per poll; mean claimed page; results per group commit',
      value: `${cpuPerPoll(tally.leased).toFixed(0)} µs; ${(claimingFloor.pages.rows / Math.max(1, claimingFloor.pages.claims)).toFixed(1)} rows; ${claimingFloor.groupSize().toFixed(1)}`,
    },
    { figure: '  information: floor mean results per group commit', value: (floorCommitter.stats.writes / Math.max(1, floorCommitter.stats.commits)).toFixed(1) },
    { figure: '  ours: one claimed poll, p50 / p99 (call + apply)', value: `${percentile(durations, 50).toFixed(1)} / ${percentile(durations, 99).toFixed(1)} ms` },
    { figure: '  ours: completed rows (every 10th task)', value: fmt(completed) },
    ...checks,
  ],
);
process.exit(0);
