/**
 * Soak: one `serve` process under mixed load from other processes for a long
 * time, sampled from outside; does anything grow that should not?
 *
 *   npx tsx bench/soak.ts [--minutes 20] [--sample-seconds N] [--creates-per-second 3]
 *                         [--reads-per-second 10] [--sse-clients 4]
 *
 * Processes: the orchestrator (`node --expose-gc bin/adcp-orchestrator.js serve`,
 * SQLite, as shipped, with ADCP_ORCH_DEBUG_GC=1 so heap can be read after a full
 * collection), the sandbox seller (bench/lib/soak-seller.ts: RFC 9421 and HMAC
 * webhooks, each delivered twice), and the load (bench/lib/soak-load.ts: API
 * creates with Idempotency-Key over products with known endings and webhook modes
 * rfc9421 / hmac / none (polled), reads, SSE clients that connect and drop,
 * POST /v1/reconcile; periodic reconciliation runs too). Halfway through the
 * orchestrator is stopped (SIGTERM) and started again on the same database and port.
 *
 * Each sample: resident memory, heap used after GC, event-loop delay p99 since
 * the previous sample, open handles / sockets / fds, database and WAL size, rows
 * per table. Printed as a table over time, then a verdict: heap after GC at the
 * end of each process's life within 10 % of its value after warm-up, event-loop
 * delay p99 under 50 ms in every sample after warm-up, no process warning printed
 * by any process, every webhook the orchestrator acknowledged applied, every
 * accepted create stored, and every operation at the state its product ends in.
 * Exits 0 on PASS, 1 on FAIL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import { BENCH_SECRET_KEY, fmt, log, machineLine, nextMessage, onExit, REPO_ROOT, send, sleep, spawnTs, tempDir } from './lib/common.js';
import { startBenchApp } from './lib/orchestrator.js';
import { PRODUCT_MIX, type Accepted, type LoadStats } from './lib/soak-load.js';
import { takeSample, type Sample } from './lib/soak-sample.js';
import { summarize, watchOutput, type OutputWatch } from './lib/watch-output.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '20' },
    'sample-seconds': { type: 'string' },
    'creates-per-second': { type: 'string', default: '3' },
    'reads-per-second': { type: 'string', default: '10' },
    'sse-clients': { type: 'string', default: '4' },
    /** Keep the processes' output (and the database) in this directory instead of a temporary one. */
    keep: { type: 'string' },
  },
});
const MINUTES = Number(values.minutes);
if (!(MINUTES > 0)) throw new Error('--minutes must be a positive number');
const RUN_S = MINUTES * 60;
const SAMPLE_S = Number(values['sample-seconds'] ?? Math.max(10, Math.round(RUN_S / 20)));
/** Per process life: the first sample at least this long after its start counts as "after warm-up". */
const WARMUP_S = Math.max(20, Math.min(120, RUN_S * 0.1));
const RESTART_AT_S = RUN_S / 2;
const DRAIN_MAX_S = 180;
const HEAP_TOLERANCE = 0.1;
const EVENT_LOOP_P99_LIMIT_MS = 50;
const BIN = join(REPO_ROOT, 'bin/adcp-orchestrator.js');

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
function fmtT(s: number): string {
  const m = Math.floor(s / 60);
  const sec = Math.floor(s - m * 60);
  return `${m}:${String(sec).padStart(2, '0')}`;
}

const warnings: OutputWatch = { warnings: [], problems: [] };
process.on('warning', (w) => warnings.warnings.push(`soak: ${w.name}: ${w.message}`));

log(`machine: ${machineLine()}`);
log(`soak: ${MINUTES} min, a sample every ${SAMPLE_S} s, warm-up ${WARMUP_S} s per process life, restart at ${RESTART_AT_S} s`);
const dir = values.keep ? (mkdirSync(values.keep, { recursive: true }), values.keep) : tempDir('adcp-soak-');
const dbPath = join(dir, 'orchestrator.db');
const outFile = (name: string) => join(dir, `${name}.log`);

// --- The sellers (one for MCP, one for A2A), in their own process. ---
const seller = spawnTs('bench/lib/soak-seller.ts', ['--submitted-delay-ms', '20000', '--working-delay-ms', '6000'], { stderr: 'pipe' });
watchOutput(seller, 'seller', outFile('seller'), warnings, { echoStderr: true });
const sellerAt = await nextMessage<{ url: string; jwksUrl: string; a2aUrl: string; a2aJwksUrl: string }>(seller, (m) => 'url' in m);

// --- The database: tenant, admin key, the seller registered over MCP and A2A. ---
const setup = await startBenchApp({ dbPath, listen: false });
const { apiKey, tenantId } = setup;
const mcpAgentId = (
  await setup.app.store.agents.insert({ tenantId, name: 'soak-seller-mcp', role: 'seller', url: sellerAt.url, protocol: 'mcp', webhookSigning: { jwks_uri: sellerAt.jwksUrl } })
).id;
const a2aAgentId = (
  await setup.app.store.agents.insert({ tenantId, name: 'soak-seller-a2a', role: 'seller', url: sellerAt.a2aUrl, protocol: 'a2a', webhookSigning: { jwks_uri: sellerAt.a2aJwksUrl } })
).id;
await setup.close();

// --- The orchestrator: a real `serve` process. ---
const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
let serve: ChildProcess;
let life = 0;

async function startServe(): Promise<number> {
  const t0 = performance.now();
  life++;
  serve = spawn(process.execPath, ['--expose-gc', BIN, 'serve', '--port', String(port), '--db', `sqlite:${dbPath}`], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ADCP_ORCH_SECRET_KEY: BENCH_SECRET_KEY,
      ADCP_ORCH_PUBLIC_URL: origin,
      ADCP_ORCH_ALLOW_PRIVATE_NETWORK: 'true',
      ADCP_ORCH_DEBUG_GC: '1',
      LOG_LEVEL: process.env.SOAK_LOG_LEVEL ?? 'warn',
      LOG_FORMAT: 'json',
      ADCP_ORCH_POLL_INTERVAL_MS: '2000',
      ADCP_ORCH_BACKUP_POLL_AFTER_MS: '30000',
      ADCP_ORCH_WORKING_TIMEOUT_MS: '5000',
      ADCP_ORCH_CALL_TIMEOUT_MS: '10000',
      ADCP_ORCH_RECONCILE_INTERVAL_MS: '120000',
      // The shortest allowed window, so that pruning shows within the run.
      ADCP_ORCH_API_IDEMPOTENCY_TTL_MS: '300000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child = serve;
  onExit(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  watchOutput(child, `serve#${life}`, outFile(`serve-${life}`), warnings);
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited (${child.exitCode}); see ${outFile(`serve-${life}`)}`);
    try {
      if ((await fetch(`${origin}/readyz`)).status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error('serve not ready within 120 s');
    await sleep(100);
  }
  return performance.now() - t0;
}

async function stopServe(): Promise<number> {
  const t0 = performance.now();
  const child = serve;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
  return performance.now() - t0;
}

function freePort(): Promise<number> {
  return import('node:net').then(
    ({ createServer }) =>
      new Promise<number>((resolve, reject) => {
        const srv = createServer();
        srv.once('error', reject);
        srv.listen(0, '127.0.0.1', () => {
          const p = (srv.address() as { port: number }).port;
          srv.close(() => resolve(p));
        });
      }),
  );
}

log(`serve ready in ${(await startServe()).toFixed(0)} ms at ${origin}`);

// --- The load, in its own process. ---
const load = spawnTs('bench/lib/soak-load.ts', [], { stderr: 'pipe' });
watchOutput(load, 'load', outFile('load'), warnings, { echoStderr: true });
async function loadStats(): Promise<LoadStats> {
  const answer = nextMessage<{ stats: LoadStats }>(load, (m) => 'stats' in m, 30_000);
  send(load, { cmd: 'stats' });
  return (await answer).stats;
}
const plan = {
  origin,
  apiKey,
  mcpAgentId,
  a2aAgentId,
  createsPerSecond: Number(values['creates-per-second']),
  readsPerSecond: Number(values['reads-per-second']),
  sseClients: Number(values['sse-clients']),
  reconcileEveryMs: 90_000,
};
const started = nextMessage(load, (m) => 'started' in m);
send(load, { cmd: 'start', ...plan });
await started;
const t0 = performance.now();
const elapsedS = () => (performance.now() - t0) / 1000;

// --- Samples over time, the restart halfway. ---
interface Row extends Sample {
  creates: number;
  reads: number;
  sseConnects: number;
}
const rows: Row[] = [];
let lifeStartedS = 0;
let restart: { stopMs: number; startMs: number } | undefined;
let sampleFailures = 0;
for (let next = SAMPLE_S; next <= RUN_S + 0.001; next += SAMPLE_S) {
  if (!restart && next > RESTART_AT_S) {
    while (elapsedS() < RESTART_AT_S) await sleep(200);
    const stopMs = await stopServe();
    const startMs = await startServe();
    restart = { stopMs, startMs };
    lifeStartedS = elapsedS();
    log(`restarted at ${fmt(RESTART_AT_S)} s: SIGTERM → exit ${stopMs.toFixed(0)} ms, start → ready ${startMs.toFixed(0)} ms`);
  }
  while (elapsedS() < next) await sleep(200);
  try {
    const sample = await takeSample({ origin, apiKey, dbPath, t: elapsedS(), life });
    const s = await loadStats();
    rows.push({ ...sample, creates: s.creates.accepted, reads: s.reads.ok, sseConnects: s.sse.connects });
    const afterWarmup = sample.t - lifeStartedS >= WARMUP_S;
    log(
      `t=${fmtT(sample.t)} life ${life}${afterWarmup ? '' : ' (warm-up)'}: rss ${mb(sample.rssBytes)} MB, heap after GC ${mb(sample.heapAfterGcBytes)} MB (code ${mb(sample.codeAfterGcBytes)}), ` +
        `event loop p99 ${sample.eventLoopP99Ms.toFixed(1)} ms, ops ${fmt(sample.rows.operations!)}, creates ${fmt(s.creates.accepted)}`,
    );
  } catch (err) {
    sampleFailures++;
    log(`sample at ${fmtT(elapsedS())} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

// --- Stop the load, let the work settle, and check every outcome. ---
const stopped = nextMessage<{ final: LoadStats & { accepted: Accepted[] } }>(load, (m) => 'final' in m, 300_000);
send(load, { cmd: 'stop' });
const final = (await stopped).final;
log(`load stopped: ${fmt(final.creates.accepted)} creates accepted; draining (at most ${DRAIN_MAX_S} s)`);

const EXPECTED = new Map(PRODUCT_MIX.map((p) => [p.product, p.final]));
interface OpRow {
  id: string;
  status: string;
  request_body: string;
}
function misplaced(): { total: number; wrong: Array<{ id: string; product: string; status: string; want: string }>; byStatus: Record<string, number> } {
  const db = new SQLite(dbPath, { readonly: true });
  try {
    const ops = db.prepare('SELECT id, status, request_body FROM operations').all() as OpRow[];
    const wrong: Array<{ id: string; product: string; status: string; want: string }> = [];
    const byStatus: Record<string, number> = {};
    for (const op of ops) {
      byStatus[op.status] = (byStatus[op.status] ?? 0) + 1;
      const product = (JSON.parse(op.request_body) as { packages?: Array<{ product_id?: string }> }).packages?.[0]?.product_id ?? '?';
      const want = EXPECTED.get(product) ?? '?';
      if (op.status !== want) wrong.push({ id: op.id, product, status: op.status, want });
    }
    return { total: ops.length, wrong, byStatus };
  } finally {
    db.close();
  }
}
const drainStart = performance.now();
let states = misplaced();
while (states.wrong.length > 0 && performance.now() - drainStart < DRAIN_MAX_S * 1000) {
  await sleep(5_000);
  states = misplaced();
}
const drainS = (performance.now() - drainStart) / 1000;
const idle = await takeSample({ origin, apiKey, dbPath, t: elapsedS(), life });

const webhooksReply = nextMessage<{ webhooks: Array<{ task_id: string; status: string; idempotency_key?: string; acknowledged: boolean; duplicate: boolean }> }>(
  seller,
  (m) => 'webhooks' in m,
  120_000,
);
send(seller, { cmd: 'webhooks' });
const webhooks = (await webhooksReply).webhooks;
const acknowledged = webhooks.filter((w) => w.acknowledged && w.idempotency_key);
const deliveries = (() => {
  const db = new SQLite(dbPath, { readonly: true });
  try {
    return new Map((db.prepare('SELECT idempotency_key, state FROM webhook_deliveries').all() as Array<{ idempotency_key: string; state: string }>).map((d) => [d.idempotency_key, d.state]));
  } finally {
    db.close();
  }
})();
const unapplied = acknowledged.filter((w) => deliveries.get(w.idempotency_key!) !== 'applied');
const storedIds = (() => {
  const db = new SQLite(dbPath, { readonly: true });
  try {
    return new Set((db.prepare('SELECT id FROM operations').all() as Array<{ id: string }>).map((r) => r.id));
  } finally {
    db.close();
  }
})();
const lost = final.accepted.filter((a) => !storedIds.has(a.id));

await stopServe();
seller.kill('SIGTERM');
load.stdin!.end();

// --- The report. ---
const cols: Array<[string, (r: Row) => string]> = [
  ['t', (r) => fmtT(r.t)],
  ['life', (r) => String(r.life)],
  ['RSS MB', (r) => mb(r.rssBytes)],
  ['heap MB', (r) => mb(r.heapUsedBytes)],
  ['heap after GC MB', (r) => mb(r.heapAfterGcBytes)],
  ['of which code MB', (r) => mb(r.codeAfterGcBytes)],
  ['GC ms', (r) => r.gcMs.toFixed(0)],
  ['loop p99 ms', (r) => r.eventLoopP99Ms.toFixed(1)],
  ['handles', (r) => String(r.handles)],
  ['sockets', (r) => String(r.sockets)],
  ['fds', (r) => String(r.openFds)],
  ['DB MB', (r) => mb(r.dbBytes)],
  ['WAL MB', (r) => mb(r.walBytes)],
  ['operations', (r) => fmt(r.rows.operations!)],
  ['events', (r) => fmt(r.rows.operation_events!)],
  ['notifications', (r) => fmt(r.rows.notifications!)],
  ['deliveries', (r) => fmt(r.rows.webhook_deliveries!)],
  ['nonces', (r) => fmt(r.rows.webhook_nonces!)],
  ['idempotency', (r) => fmt(r.rows.api_idempotency!)],
  ['reconcile reports', (r) => fmt(r.rows.reconcile_reports!)],
  ['creates', (r) => fmt(r.creates)],
  ['reads', (r) => fmt(r.reads)],
  ['SSE connects', (r) => fmt(r.sseConnects)],
];
const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
process.stdout.write(`\n## soak (${machineLine()}; ${MINUTES} min, restart at ${fmtT(RESTART_AT_S)})\n\n`);
process.stdout.write(`${line(cols.map(([h]) => h))}\n${line(cols.map(() => '---'))}\n`);
for (const r of rows) process.stdout.write(`${line(cols.map(([, f]) => f(r)))}\n`);
process.stdout.write(
  `\nAfter the load stopped and ${drainS.toFixed(0)} s of draining: RSS ${mb(idle.rssBytes)} MB, heap after GC ${mb(idle.heapAfterGcBytes)} MB, ` +
    `handles ${idle.handles}, sockets ${idle.sockets}; rows ${Object.entries(idle.rows)
      .map(([t, n]) => `${t} ${fmt(n)}`)
      .join(', ')}.\n`,
);
process.stdout.write(
  `Load: ${fmt(final.creates.accepted)} creates accepted (${fmt(final.creates.resent)} resent after a network error or 5xx, ${final.creates.refused} refused, ` +
    `${final.creates.gaveUp} given up; ${final.creates.replayed} replays checked, ${final.creates.replayMismatch} wrong), ${fmt(final.reads.ok)} reads (${final.reads.failed} failed), ` +
    `${fmt(final.sse.connects)} SSE connections (${fmt(final.sse.resumed)} resumed, ${fmt(final.sse.messages)} messages), ${final.reconciles.ok} reconciles requested, ` +
    `${fmt(final.networkErrors)} network errors (the restart); seller webhooks ${fmt(webhooks.length)} (${fmt(acknowledged.length)} acknowledged). ` +
    `Restart: SIGTERM → exit ${restart?.stopMs.toFixed(0)} ms, → ready ${restart?.startMs.toFixed(0)} ms. Operations by status: ${JSON.stringify(states.byStatus)}.\n`,
);
if (final.firstProblem) process.stdout.write(`First problem the load saw: ${final.firstProblem}\n`);
const problemLines = summarize(warnings.problems);
if (problemLines.length > 0) process.stdout.write(`Log lines at warn or above (${warnings.problems.length}):\n${problemLines.map((l) => `  ${l}`).join('\n')}\n`);

// --- The verdict. ---
const afterWarmup = (l: number) => rows.filter((r) => r.life === l && r.t - (l === 1 ? 0 : lifeStartedS) >= WARMUP_S);
interface Check {
  what: string;
  value: string;
  pass: boolean;
}
const checks: Check[] = [];
for (const l of [1, 2]) {
  const lifeRows = afterWarmup(l);
  if (lifeRows.length < 2) {
    checks.push({ what: `heap after GC, life ${l}: end vs after warm-up`, value: `only ${lifeRows.length} sample(s) after warm-up`, pass: false });
    continue;
  }
  const first = lifeRows[0]!.heapAfterGcBytes;
  const last = lifeRows[lifeRows.length - 1]!.heapAfterGcBytes;
  const change = last / first - 1;
  checks.push({
    what: `heap after GC, life ${l}: end vs after warm-up (≤ +10 %)`,
    value: `${mb(first)} → ${mb(last)} MB (${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)} %)`,
    pass: change <= HEAP_TOLERANCE,
  });
}
const loopRows = [...afterWarmup(1), ...afterWarmup(2)];
const worstLoop = Math.max(...loopRows.map((r) => r.eventLoopP99Ms));
const sortedLoop = loopRows.map((r) => r.eventLoopP99Ms).sort((a, b) => a - b);
checks.push({
  what: `event-loop delay p99, every sample after warm-up (< ${EVENT_LOOP_P99_LIMIT_MS} ms)`,
  value: loopRows.length ? `worst ${worstLoop.toFixed(1)} ms, median ${sortedLoop[Math.floor(sortedLoop.length / 2)]!.toFixed(1)} ms` : 'no samples',
  pass: loopRows.length > 0 && worstLoop < EVENT_LOOP_P99_LIMIT_MS,
});
checks.push({ what: 'process warnings printed (serve, seller, load, this process)', value: String(warnings.warnings.length), pass: warnings.warnings.length === 0 });
checks.push({ what: 'acknowledged webhooks applied', value: `${fmt(acknowledged.length - unapplied.length)} / ${fmt(acknowledged.length)}`, pass: unapplied.length === 0 && acknowledged.length > 0 });
checks.push({ what: 'accepted creates stored', value: `${fmt(final.accepted.length - lost.length)} / ${fmt(final.accepted.length)}`, pass: lost.length === 0 && final.accepted.length > 0 });
checks.push({
  what: 'operations at the state their product ends in',
  value: `${fmt(states.total - states.wrong.length)} / ${fmt(states.total)}`,
  pass: states.wrong.length === 0 && states.total > 0,
});
checks.push({ what: 'idempotent replays answered with the first answer', value: `${final.creates.replayed} / ${final.creates.replayed + final.creates.replayMismatch}`, pass: final.creates.replayMismatch === 0 });
checks.push({ what: 'samples taken', value: `${rows.length} (${sampleFailures} failed)`, pass: sampleFailures === 0 });

const pass = checks.every((c) => c.pass);
process.stdout.write(`\n### verdict: ${pass ? 'PASS' : 'FAIL'}\n\n| check | value | ok |\n|---|---|---|\n`);
for (const c of checks) process.stdout.write(`| ${c.what} | ${c.value} | ${c.pass ? 'PASS' : 'FAIL'} |\n`);
for (const w of warnings.warnings.slice(0, 10)) process.stdout.write(`\nwarning: ${w}`);
for (const w of states.wrong.slice(0, 10)) process.stdout.write(`\nmisplaced: ${w.id} (${w.product}) is ${w.status}, should be ${w.want}`);
for (const w of unapplied.slice(0, 10)) process.stdout.write(`\nunapplied: webhook ${w.idempotency_key} (${w.task_id} ${w.status}) is ${deliveries.get(w.idempotency_key!) ?? 'not stored'}`);
process.stdout.write('\n');
process.exit(pass ? 0 : 1);
