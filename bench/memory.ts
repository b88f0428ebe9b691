/**
 * Resident memory of a running orchestrator with 1,000 vs 1,000,000 pending
 * operations in the database (BENCHMARKS.md, Targets: ≤ 1.5×).
 *
 * For each size: seed a fresh SQLite file (bulk multi-row INSERTs in one
 * transaction per 50k rows), then start a FRESH child process
 * (node --expose-gc --import tsx) that runs createApp + listen (API, scheduler,
 * webhook maintenance), serves a few API and /metrics requests, waits, runs GC
 * and reports process.memoryUsage(). Pending operations are `submitted` with
 * their next check spread over the next 24 h, as in a steady state (none due
 * during the measurement).
 *
 *   npx tsx bench/memory.ts [--sizes 1000,1000000]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { fmt, log, machineLine, nextMessage, printResults, reply, sleep, spawnTs, tempDir, type ResultRow } from './lib/common.js';
import { addAgent, benchEnv, seedOperations, startBenchApp } from './lib/orchestrator.js';

const { values } = parseArgs({
  options: { child: { type: 'boolean' }, db: { type: 'string' }, key: { type: 'string' }, sizes: { type: 'string', default: '1000,1000000' } },
});

if (values.child) {
  // ---- child: a running orchestrator on the given database ----
  const config = loadConfig(benchEnv(`sqlite:${values.db}`, 0));
  const app = await createApp({ config, logger: createLogger('silent') });
  const url = await app.listen();
  const headers = { authorization: `Bearer ${values.key}` };
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${url}/v1/operations?limit=50&status=submitted`, { headers });
    if (res.status !== 200) throw new Error(`list: ${res.status}`);
    await res.arrayBuffer();
  }
  for (let i = 0; i < 2; i++) await (await fetch(`${url}/metrics`)).text();
  await sleep(3000); // scheduler ticks, maintenance timers armed
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  await sleep(100);
  gc();
  const m = process.memoryUsage();
  reply({ memory: m });
  await app.close();
  process.exit(0);
}

// ---- parent ----
const sizes = values.sizes!.split(',').map(Number);
log(`machine: ${machineLine()}`);
const results: Array<{ n: number; rss: number; heapUsed: number; external: number; seedSeconds: number }> = [];
for (const n of sizes) {
  const dir = tempDir();
  const dbPath = join(dir, 'orchestrator.db');
  const setup = await startBenchApp({ dbPath, listen: false });
  const agentId = await addAgent(setup, 'http://127.0.0.1:9/mcp');
  const { apiKey, tenantId } = setup;
  await setup.close();
  const now = Date.now();
  const seeded = seedOperations(dbPath, {
    n,
    tenantId,
    agentId,
    status: 'submitted',
    checkKind: 'poll',
    webhookMode: 'none',
    nextCheckAt: (i) => now + 600_000 + ((i * 7919) % 86_400_000),
  });
  log(`seeded ${fmt(n)} pending operations in ${seeded.seconds.toFixed(1)} s`);
  const child = spawnTs('bench/memory.ts', ['--child', '--db', dbPath, '--key', apiKey], { nodeArgs: ['--expose-gc'] });
  const { memory } = await nextMessage<{ memory: NodeJS.MemoryUsage }>(child, (m) => 'memory' in m, 120_000);
  await new Promise((r) => child.once('exit', r));
  log(`${fmt(n)} pending: rss ${fmt(memory.rss / 2 ** 20, 1)} MiB, heapUsed ${fmt(memory.heapUsed / 2 ** 20, 1)} MiB, external ${fmt(memory.external / 2 ** 20, 1)} MiB`);
  results.push({ n, rss: memory.rss, heapUsed: memory.heapUsed, external: memory.external, seedSeconds: seeded.seconds });
}

const rows: ResultRow[] = results.map((r) => ({
  figure: `RSS after GC, ${fmt(r.n)} pending (heapUsed / external)`,
  value: `${fmt(r.rss / 2 ** 20, 1)} MiB (${fmt(r.heapUsed / 2 ** 20, 1)} / ${fmt(r.external / 2 ** 20, 1)})`,
}));
if (results.length >= 2) {
  const ratio = results[results.length - 1].rss / results[0].rss;
  rows.push({
    figure: `ratio RSS ${fmt(results[results.length - 1].n)} / ${fmt(results[0].n)}`,
    value: `${ratio.toFixed(3)}×`,
    target: '≤ 1.5×',
    pass: ratio <= 1.5,
  });
}
printResults(`memory (${machineLine()}; fresh child process per size, running orchestrator, SQLite)`, rows);
process.exit(0);
