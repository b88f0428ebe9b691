/**
 * Restart with 1,000,000 pending operations (BENCHMARKS.md, Targets: ready and polling
 * again within 2 s).
 *
 * Seeds a SQLite file with 1,000,000 pending `submitted` operations (1 % of them
 * due now, the rest over the next 24 h), then several times: spawns
 * `node bin/adcp-orchestrator.js serve --db sqlite:<file>` (as `npm start` runs it:
 * node on the bin, which runs the build `npm install` made with the `prepare` script)
 * and measures from spawn to /readyz 200 and to the first
 * get_task_status reaching a local seller (bench fast MCP seller, in this
 * process, same clock). Separately: time to `--help` (Node start + tsx + loading
 * the CLI's modules, no database) and a bare `node -e 0`.
 *
 *   npx tsx bench/restart.ts [--ops 1000000] [--runs 3]
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BENCH_SECRET_KEY, fmt, log, machineLine, onExit, printResults, REPO_ROOT, sleep, tempDir } from './lib/common.js';
import { startFastSeller } from './lib/fast-seller.js';
import { addAgent, seedOperations, startBenchApp } from './lib/orchestrator.js';

const { values } = parseArgs({ options: { ops: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '3' } } });
const OPS = Number(values.ops);
const RUNS = Number(values.runs);
const BIN = join(REPO_ROOT, 'bin/adcp-orchestrator.js');
const wall = () => performance.timeOrigin + performance.now();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Runs the CLI from its TypeScript sources through tsx, even when a build exists. */
const FROM_SOURCE = { ADCP_ORCH_FROM_SOURCE: '1' };

function timeCommand(args: string[], env: Record<string, string> = {}): number {
  const t0 = wall();
  const r = spawnSync(process.execPath, args, { cwd: REPO_ROOT, stdio: 'ignore', env: { ...process.env, ADCP_ORCH_SECRET_KEY: BENCH_SECRET_KEY, ...env } });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
  return wall() - t0;
}

log(`machine: ${machineLine()}`);
// What `npm install` / `npm ci` leave behind: their `prepare` script builds dist/, which
// bin/adcp-orchestrator.js (what `npm start` runs) prefers when it is not older than src/.
// For comparison, the same CLI from its sources through tsx.
const t0Build = wall();
const built = spawnSync(process.execPath, ['scripts/prepare.mjs'], { cwd: REPO_ROOT, stdio: 'ignore' });
if (built.status !== 0) throw new Error('the prepare script (build) failed');
const buildMs = wall() - t0Build;
timeCommand([BIN, '--help']); // warm the OS file cache
const nodeOnly = median([0, 1, 2].map(() => timeCommand(['-e', '0'])));
const helpMs = median([0, 1, 2].map(() => timeCommand([BIN, '--help'])));
const sourceHelpMs = median([0, 1, 2].map(() => timeCommand([BIN, '--help'], FROM_SOURCE)));
log(`node -e 0: ${nodeOnly.toFixed(0)} ms; --help built (build took ${buildMs.toFixed(0)} ms): ${helpMs.toFixed(0)} ms; --help from source (tsx): ${sourceHelpMs.toFixed(0)} ms`);

const seller = await startFastSeller();
const dir = tempDir();
const dbPath = join(dir, 'orchestrator.db');
const setup = await startBenchApp({ dbPath, listen: false });
const agentId = await addAgent(setup, seller.url);
const { tenantId } = setup;
await setup.close();
const now = Date.now();
const dueEvery = 100; // 1 % due now
const seeded = seedOperations(dbPath, {
  n: OPS,
  tenantId,
  agentId,
  status: 'submitted',
  checkKind: 'poll',
  webhookMode: 'none',
  nextCheckAt: (i) => (i % dueEvery === 0 ? now - 60_000 + (i % 1000) : now + 600_000 + ((i * 7919) % 86_400_000)),
});
log(`seeded ${fmt(OPS)} pending operations (${fmt(OPS / dueEvery)} due) in ${seeded.seconds.toFixed(1)} s`);

async function startRuns(entry: string, label: string, extraEnv: Record<string, string> = {}) {
const runs: Array<{ ready: number; firstPoll: number; listening: number }> = [];
for (let run = 0; run < RUNS; run++) {
  const port = await freePort();
  seller.stats.firstPollAt = null;
  const t0 = wall();
  const child = spawn(process.execPath, [entry, 'serve', '--db', `sqlite:${dbPath}`, '--port', String(port)], {
    cwd: REPO_ROOT,
    env: { ...process.env, ADCP_ORCH_SECRET_KEY: BENCH_SECRET_KEY, LOG_LEVEL: 'warn', ADCP_ORCH_ALLOW_PRIVATE_NETWORK: 'true', ADCP_ORCH_POLL_INTERVAL_MS: '600000', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onExit(() => child.exitCode === null && child.kill('SIGKILL'));
  let out = '';
  let listening = NaN;
  child.stdout!.on('data', (d) => {
    out += d;
    if (Number.isNaN(listening) && out.includes('listening on')) listening = wall() - t0;
  });
  child.stderr!.on('data', (d) => (out += d));
  let ready = NaN;
  const deadline = t0 + 60_000;
  while (wall() < deadline && child.exitCode === null) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      await res.arrayBuffer();
      if (res.status === 200) {
        ready = wall() - t0;
        break;
      }
    } catch {
      /* not listening yet */
    }
    await sleep(5);
  }
  while (wall() < deadline && seller.stats.firstPollAt === null && child.exitCode === null) await sleep(5);
  const firstPoll = seller.stats.firstPollAt === null ? NaN : seller.stats.firstPollAt - t0;
  child.kill('SIGTERM');
  await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  if (Number.isNaN(ready) || Number.isNaN(firstPoll)) log(`run ${run + 1} output:\n${out}`);
  log(`${label} run ${run + 1}: stdout "listening" ${listening.toFixed(0)} ms, /readyz 200 ${ready.toFixed(0)} ms, first poll at seller ${firstPoll.toFixed(0)} ms`);
  runs.push({ ready, firstPoll, listening });
}
return runs;
}
const runs = await startRuns(BIN, 'built');
const sourceRuns = await startRuns(BIN, 'from source (tsx)', FROM_SOURCE);
await seller.close();

const readyMs = median(runs.map((r) => r.ready));
const pollMs = median(runs.map((r) => r.firstPoll));
printResults(`restart (${machineLine()}; ${fmt(OPS)} pending operations, ${fmt(OPS / dueEvery)} due; median of ${RUNS} starts of bin/adcp-orchestrator.js serve)`, [
  { figure: 'spawn → /readyz 200', value: `${readyMs.toFixed(0)} ms`, target: '≤ 2,000 ms', pass: readyMs <= 2000 },
  { figure: 'spawn → first poll reaches the seller', value: `${pollMs.toFixed(0)} ms`, target: '≤ 2,000 ms', pass: pollMs <= 2000 },
  { figure: 'of which: node + tsx + CLI modules (`--help`)', value: `${helpMs.toFixed(0)} ms` },
  { figure: 'of which: bare `node -e 0`', value: `${nodeOnly.toFixed(0)} ms` },
  { figure: 'all runs (ready / first poll)', value: runs.map((r) => `${r.ready.toFixed(0)}/${r.firstPoll.toFixed(0)}`).join(', ') },
  { figure: 'from source through tsx (no build) → /readyz 200', value: `${median(sourceRuns.map((r) => r.ready)).toFixed(0)} ms` },
  { figure: 'from source through tsx → first poll', value: `${median(sourceRuns.map((r) => r.firstPoll)).toFixed(0)} ms` },
  { figure: '`--help` from source (tsx)', value: `${sourceHelpMs.toFixed(0)} ms` },
]);
process.exit(0);
