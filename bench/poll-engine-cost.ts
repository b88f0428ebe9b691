/**
 * Diagnostic: CPU per poll of the engine and store alone, the other share of a poll in
 * bench/poll-dispatch.ts. The real createApp (Scheduler, OperationService, SQLite WAL +
 * synchronous=FULL) with 100,000 `submitted` operations due, 64 in flight, every claimed
 * poll answered in-process after one turn of the event loop (no HTTP: a diagnostic, not a
 * figure of record; 1 in 10 completes with a small result, as the bench seller does).
 * Per round: polls applied, CPU per poll, and WAL pages written per poll (checkpoints
 * held off on the app's connection; the WAL read through a second one).
 *
 * With `--base DIR` (a checkout of another commit with node_modules linked) that tree's
 * app runs too, on its own file, rounds alternating, in the same process.
 *
 *   npx tsx bench/poll-engine-cost.ts [--rounds 8] [--base DIR] (BENCH_SQL_TIMING=1: statement times)
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { log, REPO_ROOT, sleep, tempDir } from './lib/common.js';
import { benchEnv, seedOperations } from './lib/orchestrator.js';
import { enableSqlTiming, sqlTimingReport } from './lib/sql-timing.js';
import type { App } from '../src/app.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '8' }, base: { type: 'string' } } });
const ROUNDS = Number(values.rounds);
const ROUND_MS = 1500;
if (process.env.BENCH_SQL_TIMING === '1') enableSqlTiming();

interface Side {
  name: string;
  app: App;
  wal: SQLite.Database;
  finished: number;
  cpuUs: number;
  polls: number;
}

async function side(root: string, name: string): Promise<Side> {
  const { createApp } = (await import(`${root}/src/app.ts`)) as typeof import('../src/app.js');
  const { loadConfig } = (await import(`${root}/src/config.ts`)) as typeof import('../src/config.js');
  const { createLogger } = (await import(`${root}/src/logger.ts`)) as typeof import('../src/logger.js');
  const { createAdcpClient } = (await import(`${root}/src/adcp/client.ts`)) as typeof import('../src/adcp/client.js');
  const dbPath = join(tempDir(), `engine-${name}.db`);
  const config = loadConfig(benchEnv(`sqlite:${dbPath}`, 0, { ADCP_ORCH_POLL_INTERVAL_MS: '600000', ADCP_ORCH_CALL_TIMEOUT_MS: '10000', ADCP_ORCH_WARMUP_MS: '0' }));
  const client = createAdcpClient({});
  const adcp = {
    ...client,
    // Answered after one turn, as a reply would be: `submitted`, or every tenth task `completed`.
    getTask: async (_agent: unknown, taskId: string) => {
      await new Promise((r) => setImmediate(r));
      return taskId.endsWith('0')
        ? { status: 'completed' as const, taskId, data: { media_buy_id: `mb_${taskId}`, status: 'active', packages: [] } }
        : { status: 'submitted' as const, taskId, data: { task_id: taskId, status: 'submitted' } };
    },
  };
  const app = await createApp({ config, logger: createLogger('silent'), concurrency: 64, adcp });
  const tenant = await app.store.tenants.ensureTenant('bench');
  const agent = await app.store.agents.insert({ tenantId: tenant.id, name: 'bench-seller', role: 'seller', url: 'http://127.0.0.1:9/mcp', protocol: 'mcp' });
  const now = Date.now();
  seedOperations(dbPath, { n: 100_000, tenantId: tenant.id, agentId: agent.id, status: 'submitted', checkKind: 'poll', webhookMode: 'none', nextCheckAt: (i) => now - 10_000 + (i % 5000) });
  // WAL pages per poll: no checkpoint by the app during a round; the WAL is emptied between rounds.
  await sql`PRAGMA wal_autocheckpoint = 0`.execute(app.store.db.kysely);
  const s: Side = { name, app, wal: new SQLite(dbPath), finished: 0, cpuUs: 0, polls: 0 };
  const run = app.operations.runClaimed.bind(app.operations);
  app.operations.runClaimed = async (row, writes) => {
    try {
      await run(row, writes);
    } finally {
      s.finished++;
    }
  };
  return s;
}

const sides = [await side(REPO_ROOT, 'ours')];
if (values.base) sides.push(await side(values.base, 'base'));
for (let r = 0; r <= ROUNDS; r++) {
  for (const s of r % 2 ? [...sides].reverse() : sides) {
    s.wal.pragma('wal_checkpoint(TRUNCATE)');
    const before = s.finished;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    s.app.scheduler.start();
    while (performance.now() - t0 < ROUND_MS) await sleep(50);
    await s.app.scheduler.stop();
    const d = process.cpuUsage(cpu0);
    const n = s.finished - before;
    const pages = (s.wal.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>)[0]!.log;
    // Round 0 is the warm-up (JIT, statements): reported, not counted.
    if (r > 0) {
      s.cpuUs += d.user + d.system;
      s.polls += n;
    }
    log(`round ${r}${r === 0 ? ' (warm-up)' : ''}: ${s.name} ${n} polls, ${(n / ((performance.now() - t0) / 1000)).toFixed(0)}/s, ${((d.user + d.system) / n).toFixed(0)} µs CPU/poll (${(d.system / n).toFixed(0)} system), ${(pages / n).toFixed(2)} WAL pages/poll`);
  }
}
log(`mean CPU per poll: ${sides.map((s) => `${s.name} ${(s.cpuUs / Math.max(1, s.polls)).toFixed(0)} µs`).join(', ')}`);
if (process.env.BENCH_SQL_TIMING === '1') log(sqlTimingReport());
for (const s of sides) {
  s.wal.close();
  await s.app.close();
}
process.exit(0);
