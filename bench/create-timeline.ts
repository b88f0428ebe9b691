/**
 * Where a create_media_buy's time and CPU go in the orchestrator (issue 20, BENCHMARKS.md).
 *
 * Seller: the sandbox seller (src/sandbox/run-seller.ts) in its own process, product
 * `sandbox_instant` (answers `completed` at once). Orchestrator: createApp in this process
 * (SQLite FULL). The clients run in this process too, so that one process.cpuUsage() covers
 * both paths alike:
 *   - ours: POST /v1/media-buys with fetch;
 *   - floor: the SDK's callMCPTool to the same seller with one group-committed durable
 *     commit before and one after (bench/lib/floor-sqlite.ts), as in bench/overhead.ts.
 * Each round runs C workers for --seconds on one path, the paths alternating
 * (floor, ours, ours, floor, ...). Printed per path: creates per second and CPU per
 * create of this process (user + system, all its threads; the idle CPU of the process,
 * measured first, is printed apart: at a low rate it is a visible share). For ours, the
 * timeline of each create from its operation events: client → stored (created_at),
 * calling → completed (the seller call and storing its reply), completed → client
 * (the answer). The figures on a shared machine vary with its load: compare the ratios
 * within one run.
 *
 *   npx tsx bench/create-timeline.ts [--concurrency 8] [--seconds 4] [--rounds 2] [--warm 100]
 *     [--sql]      time every SQLite statement of the orchestrator (bench/lib/sql-timing.ts)
 *     [--profile]  CPU profile of the last round of ours to /tmp/create-timeline.cpuprofile, top self time printed
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, machineLine, nextMessage, percentile, printResults, sleep, spawnTs, tempDir, REPO_ROOT, type ResultRow } from './lib/common.js';
import { Profiler, topSelf, topSelfTable } from './lib/cpu-profile.js';
import { openFloorDb, TurnCommitter } from './lib/floor-sqlite.js';
import { addAgent, startBenchApp } from './lib/orchestrator.js';
import { enableSqlTiming, resetSqlTiming, sqlTimingReport } from './lib/sql-timing.js';

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '2' },
    warm: { type: 'string', default: '100' },
    sql: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
  },
});
const C = Number(values.concurrency);
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const WARM = Number(values.warm);
if (values.sql) enableSqlTiming();

const mediaBuyRequest = () => ({
  account: { account_id: 'acc_bench' },
  brand: { domain: 'example-brand.com' },
  start_time: 'asap',
  end_time: '2027-12-31T23:59:59Z',
  packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_std', budget: 40000 }],
});

const sellerProc = spawnTs('src/sandbox/run-seller.ts', ['--no-a2a']);
const { url: sellerUrl } = await nextMessage<{ url: string }>(sellerProc, (m) => 'url' in m);
const bench = await startBenchApp({ env: { ADCP_ORCH_SYNC_WAIT_MS: '10000' } });
const agentId = await addAgent(bench, sellerUrl);

interface OurCall {
  id: string;
  sentAt: number;
  answeredAt: number;
}

async function ours(): Promise<OurCall> {
  const sentAt = Date.now();
  const res = await fetch(`${bench.url}/v1/media-buys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bench.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: agentId, request: mediaBuyRequest() }),
  });
  const body = (await res.json()) as { id?: string; status?: string };
  if (res.status !== 202 || body.status !== 'completed' || !body.id) throw new Error(`create not completed: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  return { id: body.id, sentAt, answeredAt: Date.now() };
}

const { callMCPTool } = await import('@adcp/sdk');
const floorDb = openFloorDb(
  join(tempDir(), 'floor-calls.db'),
  'CREATE TABLE calls (id INTEGER PRIMARY KEY, idempotency_key TEXT NOT NULL UNIQUE, request TEXT NOT NULL, reply TEXT, sent_at INTEGER NOT NULL, replied_at INTEGER)',
);
const committer = new TurnCommitter(floorDb);
const storeRequest = floorDb.prepare('INSERT INTO calls (idempotency_key, request, sent_at) VALUES (?, ?, ?)');
const storeReply = floorDb.prepare('UPDATE calls SET reply = ?, replied_at = ? WHERE id = ?');

async function floor(): Promise<void> {
  const request = { ...mediaBuyRequest(), idempotency_key: randomUUID() };
  const id = await committer.write(() => storeRequest.run(request.idempotency_key, JSON.stringify(request), Date.now()).lastInsertRowid);
  const r = (await callMCPTool(sellerUrl, 'create_media_buy', request)) as { structuredContent?: unknown };
  const body = JSON.stringify(r?.structuredContent ?? r);
  if (!body.includes('media_buy_id')) throw new Error(`floor reply without media_buy_id: ${body.slice(0, 200)}`);
  await committer.write(() => storeReply.run(body, Date.now(), id));
}

/** C workers calling `call` for SECONDS; the calls' results and this process's CPU over the round. */
async function round<T>(call: () => Promise<T>): Promise<{ results: T[]; cpuUs: number }> {
  const results: T[] = [];
  const cpu0 = process.cpuUsage();
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(Array.from({ length: C }, async () => {
    while (Date.now() < end) results.push(await call());
  }));
  const cpu = process.cpuUsage(cpu0);
  return { results, cpuUs: cpu.user + cpu.system };
}

for (let i = 0; i < WARM; i++) {
  await ours();
  await floor();
}
await sleep(500);
const idle0 = process.cpuUsage();
await sleep(2000);
const idleCpu = process.cpuUsage(idle0);
const idleMsPerSecond = (idleCpu.user + idleCpu.system) / 1000 / 2;

const totals = { ours: { calls: 0, cpuUs: 0 }, floor: { calls: 0, cpuUs: 0 } };
const ourCalls: OurCall[] = [];
let profile: Awaited<ReturnType<Profiler['stop']>> | undefined;
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? (['floor', 'ours'] as const) : (['ours', 'floor'] as const);
  for (const path of order) {
    if (path === 'floor') {
      const { results, cpuUs } = await round(floor);
      totals.floor.calls += results.length;
      totals.floor.cpuUs += cpuUs;
      continue;
    }
    const last = r === ROUNDS - 1;
    if (values.sql) resetSqlTiming();
    const prof = new Profiler();
    if (values.profile && last) await prof.start();
    const { results, cpuUs } = await round(ours);
    if (values.profile && last) profile = await prof.stop('/tmp/create-timeline.cpuprofile');
    totals.ours.calls += results.length;
    totals.ours.cpuUs += cpuUs;
    ourCalls.push(...results);
  }
}

// The timeline of ours, from what the orchestrator stored (milliseconds, its clock and ours are the same).
const db = bench.app.store.db.kysely;
const parts: Record<string, number[]> = { 'client → stored': [], 'stored → calling': [], 'calling → completed': [], 'completed → client': [], total: [] };
for (const call of ourCalls) {
  const op = await db.selectFrom('operations').select(['created_at', 'status']).where('id', '=', call.id).executeTakeFirstOrThrow();
  const events = await db.selectFrom('operation_events').select(['at', 'to_status']).where('operation_id', '=', call.id).orderBy('id').execute();
  const at = (status: string) => events.find((e) => e.to_status === status)?.at;
  const calling = at('calling_adcp') ?? op.created_at;
  const completed = at('completed');
  if (completed === undefined) throw new Error(`operation ${call.id} has no completed event`);
  parts['client → stored']!.push(op.created_at - call.sentAt);
  parts['stored → calling']!.push(calling - op.created_at);
  parts['calling → completed']!.push(completed - calling);
  parts['completed → client']!.push(call.answeredAt - completed);
  parts.total!.push(call.answeredAt - call.sentAt);
}

const perSecond = (calls: number) => calls / (ROUNDS * SECONDS);
const cpuPer = (t: { calls: number; cpuUs: number }) => t.cpuUs / 1000 / t.calls;
const rows: ResultRow[] = [
  { figure: 'idle CPU of this process (ms per second)', value: fmt(idleMsPerSecond, 1) },
  { figure: `floor: creates per second at concurrency ${C}`, value: fmt(perSecond(totals.floor.calls), 1) },
  { figure: `ours: creates per second at concurrency ${C}`, value: fmt(perSecond(totals.ours.calls), 1) },
  { figure: 'floor: CPU per create, ms (client + 2 commits)', value: fmt(cpuPer(totals.floor), 2) },
  { figure: 'ours: CPU per create, ms (client + orchestrator)', value: fmt(cpuPer(totals.ours), 2) },
  { figure: 'ours / floor, CPU per create', value: `${(cpuPer(totals.ours) / cpuPer(totals.floor)).toFixed(2)}×` },
  ...Object.entries(parts).map(([k, v]) => ({ figure: `ours: ${k}, ms p50 / p90`, value: `${fmt(percentile(v, 50), 1)} / ${fmt(percentile(v, 90), 1)}` })),
];
printResults(`create_media_buy timeline, ${ROUNDS} rounds × ${SECONDS} s per path (${machineLine()})`, rows);
if (values.sql) console.log(sqlTimingReport(25));
if (profile) console.log(topSelfTable(topSelf(profile, 30, REPO_ROOT)));

sellerProc.kill('SIGTERM');
floorDb.close();
await bench.close();
process.exit(0);
