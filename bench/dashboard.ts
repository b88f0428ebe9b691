/**
 * Dashboard page loads with 100,000 operations in the database (issue 10: the
 * operations page answers in under 100 ms, p95, server time).
 *
 * Seeds a fresh SQLite file with a realistic mix (statuses, types, three agents,
 * a month of creation times), starts the real orchestrator (createApp + listen),
 * signs in through the login form like a browser, then requests each page
 * sequentially and reads the server's own time from the `Server-Timing` header the
 * dashboard sets (request received → response handed to the socket), beside the
 * round trip seen by the client on loopback. 500 campaigns of four buys each (buys
 * taken from the seeded operations) give the campaigns pages and GET /v1/campaigns
 * something to read; a page of campaigns' buys read in one query is compared, in
 * the same run, with the one-query-per-campaign read it replaced.
 *
 *   npx tsx bench/dashboard.ts [--n 100000] [--requests 200]
 */
import SQLite from 'better-sqlite3';
import { parseArgs } from 'node:util';
import { fmt, log, machineLine, percentile, printResults, type ResultRow } from './lib/common.js';
import { serverTimeRows, signIn, timedPage } from './lib/dashboard-pages.js';
import { addAgent, seedOperations, startBenchApp } from './lib/orchestrator.js';
import { buysOf, buysOfMany } from '../src/engine/governance/campaigns.js';

const { values } = parseArgs({ options: { n: { type: 'string', default: '100000' }, requests: { type: 'string', default: '200' } } });
const N = Number(values.n);
const REQUESTS = Number(values.requests);
const TARGET_MS = 100;
const BENCH_ENV = { ADCP_ORCH_RECONCILE_INTERVAL_MS: '0' };

log(`machine: ${machineLine()}`);

// ---- seed ----
const setup = await startBenchApp({ listen: false, env: BENCH_ENV });
const agents = [
  await addAgent(setup, 'http://127.0.0.1:9/mcp', { name: 'premium-news-seller' }),
  await addAgent(setup, 'http://127.0.0.1:9/mcp', { name: 'ctv-seller' }),
  await addAgent(setup, 'http://127.0.0.1:9/mcp', { name: 'retail-media-seller' }),
];
const { dbPath, tenantId } = setup;
await setup.close();

const now = Date.now();
const spacing = Math.floor((30 * 86_400_000) / N);
/** A month of history: mostly completed, some waiting, failed, rejected, canceled, stalled. */
function mix(i: number) {
  const created = now - (N - i) * spacing;
  const bucket = (i * 7919) % 100;
  const type = i % 10 < 8 ? 'create_media_buy' : i % 10 === 8 ? 'get_products' : 'update_media_buy';
  const base = { agent_id: agents[i % 3]!, type, created_at: created, updated_at: created + 2_000, next_check_at: null, check_kind: null };
  if (bucket < 72) return { ...base, status: 'completed', completed_at: created + 180_000, updated_at: created + 180_000, result: JSON.stringify({ media_buy_id: `mb_${i}`, status: 'active' }) };
  if (bucket < 80) return { ...base, status: 'submitted', next_check_at: now + 7 * 86_400_000, check_kind: 'poll' };
  if (bucket < 84) return { ...base, status: 'input-required', needs_input: 1, input_message: 'The seller needs the insertion order approved.' };
  if (bucket < 90) return { ...base, status: 'failed', completed_at: created + 5_000, error: JSON.stringify({ code: 'INVALID_REQUEST', message: 'budget below minimum' }) };
  if (bucket < 93) return { ...base, status: 'rejected', completed_at: created + 5_000 };
  if (bucket < 97) return { ...base, status: 'canceled', completed_at: created + 60_000 };
  if (bucket < 99) return { ...base, status: 'working' };
  return { ...base, status: 'submitted', stalled: 1, stalled_reason: 'deadline passed' };
}
const seeded = seedOperations(dbPath, { n: N, tenantId, agentId: agents[0]!, nextCheckAt: () => null, checkKind: null, row: mix });
log(`seeded ${fmt(N)} operations in ${seeded.seconds.toFixed(1)} s`);

// A page deep in the list: the keyset cursor of the row 95% of the way down.
const raw = new SQLite(dbPath, { readonly: true });
const deep = raw
  .prepare('SELECT created_at, id FROM operations WHERE tenant_id = ? ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?')
  .get(tenantId, Math.floor(N * 0.95)) as { created_at: number; id: string };
const someTask = raw.prepare("SELECT task_id FROM operations WHERE tenant_id = ? AND task_id IS NOT NULL LIMIT 1 OFFSET ?").get(tenantId, Math.floor(N / 2)) as { task_id: string };
raw.close();

// Campaigns: the newest 2,000 create_media_buy operations become the buys of 500 campaigns.
const CAMPAIGNS = Math.min(500, Math.floor(N / 40));
const rw = new SQLite(dbPath);
const buyRows = rw.prepare("SELECT id, created_at FROM operations WHERE tenant_id = ? AND type = 'create_media_buy' ORDER BY created_at DESC LIMIT ?").all(tenantId, CAMPAIGNS * 4) as Array<{ id: string; created_at: number }>;
const insertCampaign = rw.prepare('INSERT INTO campaigns (id, tenant_id, name, governance_agent_id, plan_id, status, buy_ids, created_at, updated_at, completed_at, created_by) VALUES (?,?,?,?,?,?,?,?,?,?,?)');
const setParent = rw.prepare('UPDATE operations SET parent_id = ? WHERE id = ?');
rw.transaction(() => {
  for (let c = 0; c < CAMPAIGNS; c++) {
    const buys = buyRows.slice(c * 4, c * 4 + 4);
    const id = `cmp_bench_${String(c).padStart(4, '0')}`;
    insertCampaign.run(id, tenantId, `Bench campaign ${c}`, agents[2], `plan_${c % 7}`, 'running', JSON.stringify(buys.map((b) => b.id)), buys[0]!.created_at, buys[0]!.created_at, null, 'bench');
    for (const b of buys) setParent.run(id, b.id);
  }
})();
rw.close();
const someCampaign = 'cmp_bench_0007';
const deepCursor = Buffer.from(JSON.stringify([deep.created_at, deep.id])).toString('base64url');

// ---- serve and sign in ----
const bench = await startBenchApp({ dbPath, env: BENCH_ENV });
const session = await signIn(bench.url, bench.apiKey);

interface Sample {
  server: number[];
  wall: number[];
  bytes: number;
  rows: number;
}

async function measure(path: string, headers: Record<string, string> = {}): Promise<Sample> {
  const s: Sample = { server: [], wall: [], bytes: 0, rows: 0 };
  for (let i = 0; i < REQUESTS + 10; i++) {
    const t = await timedPage(bench.url, session, path, headers);
    if (i < 10) continue; // warm-up
    s.server.push(t.server);
    s.wall.push(t.wall);
    s.bytes = t.body.length;
    s.rows = (t.body.match(/<tr data-(?:operation|campaign)-id=/g) ?? []).length;
  }
  return s;
}

const pages: Array<{ name: string; path: string; headers?: Record<string, string>; target: boolean }> = [
  { name: 'GET /operations (first page)', path: '/operations', target: true },
  { name: 'GET /operations?status=failed&type=create_media_buy&agent=…', path: `/operations?status=failed&type=create_media_buy&agent=${agents[1]}`, target: true },
  { name: 'GET /operations?cursor=… (95% deep)', path: `/operations?cursor=${deepCursor}`, target: true },
  { name: 'GET /operations?needs_input=true', path: '/operations?needs_input=true', target: false },
  { name: 'GET /operations?stalled=true', path: '/operations?stalled=true', target: false },
  { name: 'GET /operations?q=<task id>', path: `/operations?q=${encodeURIComponent(someTask.task_id)}`, target: false },
  { name: 'GET /operations (live refresh, htmx)', path: '/operations', headers: { 'hx-request': 'true' }, target: false },
  { name: 'GET /operations/:id', path: `/operations/${deep.id}`, target: false },
  { name: 'GET /inbox', path: '/inbox', target: false },
  { name: `GET /campaigns (50 of ${CAMPAIGNS}, 4 buys each)`, path: '/campaigns', target: false },
  { name: 'GET /campaigns (live refresh, htmx)', path: '/campaigns', headers: { 'hx-request': 'true' }, target: false },
  { name: 'GET /campaigns/:id', path: `/campaigns/${someCampaign}`, target: false },
];

const rows: ResultRow[] = [];
for (const p of pages) {
  const s = await measure(p.path, p.headers);
  rows.push(...serverTimeRows(p.name, s, p.target ? TARGET_MS : undefined));
  rows.push({ figure: `${p.name}: round trip p95`, value: `${percentile(s.wall, 95).toFixed(1)} ms` });
}

// GET /v1/campaigns (not the dashboard: no Server-Timing header), round trip only.
const apiWall: number[] = [];
for (let i = 0; i < REQUESTS + 10; i++) {
  const started = performance.now();
  const res = await fetch(`${bench.url}/v1/campaigns?limit=50`, { headers: { authorization: `Bearer ${bench.apiKey}` } });
  const body = (await res.json()) as { campaigns: unknown[] };
  if (res.status !== 200 || body.campaigns.length !== 50) throw new Error(`/v1/campaigns: ${res.status}`);
  if (i >= 10) apiWall.push(performance.now() - started);
}
log(`GET /v1/campaigns?limit=50: round trip p50 ${percentile(apiWall, 50).toFixed(1)} ms p95 ${percentile(apiWall, 95).toFixed(1)} ms`);
rows.push({ figure: 'GET /v1/campaigns?limit=50: round trip p50', value: `${percentile(apiWall, 50).toFixed(1)} ms` });

// A page of 50 campaigns' buys: one query per campaign (before) vs one for the page (now), same store, same run.
const page50 = await bench.app.store.campaigns.list(tenantId, 50);
const perCampaign: number[] = [];
const onePerPage: number[] = [];
for (let i = 0; i < REQUESTS + 10; i++) {
  let t = performance.now();
  for (const c of page50) await buysOf(bench.app.store, c);
  const a = performance.now() - t;
  t = performance.now();
  await buysOfMany(bench.app.store, page50);
  const b = performance.now() - t;
  if (i >= 10) {
    perCampaign.push(a);
    onePerPage.push(b);
  }
}
const before = percentile(perCampaign, 50);
const after = percentile(onePerPage, 50);
log(`buys of 50 campaigns: one query each p50 ${before.toFixed(2)} ms, one query for the page p50 ${after.toFixed(2)} ms (${(before / after).toFixed(1)}x)`);
rows.push({ figure: 'buys of 50 campaigns, one query per campaign (before): p50', value: `${before.toFixed(2)} ms` });
rows.push({ figure: 'buys of 50 campaigns, one query for the page (now): p50', value: `${after.toFixed(2)} ms (${(before / after).toFixed(1)}x faster)` });
await bench.close();

printResults(`Dashboard page loads, ${fmt(N)} operations in SQLite, ${REQUESTS} sequential requests each`, rows);
process.stdout.write(`${machineLine()}\n`);
