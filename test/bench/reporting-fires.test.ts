/**
 * The reporting-ingest bench's setup and checks (bench/lib/reporting-fires.ts), on the
 * real orchestrator over loopback: the seeded buys are buys our receiver takes fires
 * for, every planned fire is accepted and applied, and the checks that make a figure
 * count see what is right as right, and a wrong buy, a lost fire's figures or a
 * duplicate as wrong.
 */
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../../bench/lib/common.js';
import { addAgent, startBenchApp, type BenchApp } from '../../bench/lib/orchestrator.js';
import { checkFires, fireRequests, FIRES_PER_BUY, seedBuys } from '../../bench/lib/reporting-fires.js';

let bench: BenchApp;
let requests: Array<{ path: string; headers: Record<string, string>; body: string }>;
const BUYS = 12;
const PREFIX = 'buy_rf-test-';

beforeAll(async () => {
  bench = await startBenchApp({ dbPath: join(tempDir(), 'orchestrator.db') });
  const agentId = await addAgent(bench, 'http://127.0.0.1:9/mcp');
  requests = fireRequests(seedBuys(bench, agentId, PREFIX, BUYS))
    .split('\n')
    .map((l) => JSON.parse(l));
}, 60_000);
afterAll(async () => {
  await bench?.close();
});

const post = (r: (typeof requests)[number]) => fetch(`${bench.url}${r.path}`, { method: 'POST', headers: r.headers, body: r.body });

it('every planned fire is taken and applied; the checks find each buy holding what its fires said', async () => {
  expect(requests).toHaveLength(BUYS * FIRES_PER_BUY);
  // In plan order, a few at a time, as the load generator sends them (a buy's fires are a block apart).
  for (let i = 0; i < requests.length; i += 6) {
    const answers = await Promise.all(requests.slice(i, i + 6).map(post));
    for (const a of answers) expect(a.status, await a.text()).toBe(200);
  }
  const c = checkFires(bench.dbPath, PREFIX);
  expect(c).toMatchObject({ applied: BUYS * FIRES_PER_BUY, received: 0, rows: BUYS * FIRES_PER_BUY, keys: BUYS * FIRES_PER_BUY, reports: BUYS * FIRES_PER_BUY, wrongBuys: 0 });
  expect(c.buySpend).toBeCloseTo(c.fireSpend, 2);
  const sent = requests.reduce((n, r) => n + JSON.parse(r.body).media_buy_deliveries[0].totals.spend, 0);
  expect(c.fireSpend).toBeCloseTo(sent, 2);

  // A fire sent again is a duplicate: answered 200, stored and counted once.
  const again = await post(requests[0]!);
  expect(again.status).toBe(200);
  expect(await again.json()).toEqual({ status: 'duplicate' });
  expect(checkFires(bench.dbPath, PREFIX)).toMatchObject({ rows: BUYS * FIRES_PER_BUY, keys: BUYS * FIRES_PER_BUY, wrongBuys: 0 });
}, 60_000);

it('a buy whose figures differ from its fires, or a fire stored without its report, fails the checks', () => {
  const db = new SQLite(bench.dbPath);
  try {
    db.prepare('UPDATE media_buys SET spend = spend + 1 WHERE id = ?').run(`${PREFIX}00000003`);
    expect(checkFires(bench.dbPath, PREFIX).wrongBuys).toBe(1);
    db.prepare('UPDATE media_buys SET spend = spend - 1 WHERE id = ?').run(`${PREFIX}00000003`);
    // A fire whose figures never reached its buy (stored, its report and the buy's sum missing it).
    const fire = db.prepare('SELECT id FROM reporting_fires WHERE buy_id = ? LIMIT 1').pluck().get(`${PREFIX}00000005`) as string;
    db.prepare("UPDATE reporting_fires SET state = 'received' WHERE id = ?").run(fire);
    db.prepare('DELETE FROM media_buy_reports WHERE fire_id = ?').run(fire);
    const c = checkFires(bench.dbPath, PREFIX);
    expect(c.received).toBe(1);
    expect(c.reports).toBe(BUYS * FIRES_PER_BUY - 1);
  } finally {
    db.close();
  }
});
