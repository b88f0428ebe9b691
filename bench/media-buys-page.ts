/**
 * The Media buys pages with 100,000 live buys in the database (issue 17): the list
 * (first page, filtered, a page deep down, a live refresh) and one buy's page (a
 * month of hourly reports: 720 bars), server time p50/p95 from the dashboard's
 * `Server-Timing` header, beside a baseline measured in the same run, in alternating
 * rounds: GET /agents, a page with the same session check, layout and inbox count
 * but no list. The difference is what reading and drawing the buys costs.
 *
 * Seeds through the store (multi-row INSERTs in one transaction), starts the real
 * orchestrator (createApp + listen), signs in through the form like a browser.
 *
 *   npx tsx bench/media-buys-page.ts [--n 100000] [--requests 40] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { fmt, log, machineLine, percentile, printResults, type ResultRow } from './lib/common.js';
import { serverTimeRows, signIn, timedPage } from './lib/dashboard-pages.js';
import { addAgent, startBenchApp } from './lib/orchestrator.js';
import { seedMediaBuys } from './lib/seed-media-buys.js';
import { encodeCursor } from '../src/engine/page-cursor.js';

const { values } = parseArgs({ options: { n: { type: 'string', default: '100000' }, requests: { type: 'string', default: '40' }, rounds: { type: 'string', default: '3' } } });
const N = Number(values.n);
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);
const TARGET_MS = 100;

log(`machine: ${machineLine()}`);
const bench = await startBenchApp({ env: { ADCP_ORCH_RECONCILE_INTERVAL_MS: '0' } });
const agents = [
  await addAgent(bench, 'http://127.0.0.1:9/mcp', { name: 'premium-news-seller' }),
  await addAgent(bench, 'http://127.0.0.1:9/mcp', { name: 'ctv-seller' }),
  await addAgent(bench, 'http://127.0.0.1:9/mcp', { name: 'retail-media-seller' }),
];
const seeded = await seedMediaBuys(bench.app.store, { tenantId: bench.tenantId, agentIds: agents, n: N, campaigns: 500, reports: 720 });
log(`seeded ${fmt(N)} media buys (500 campaigns, one buy with 720 hourly reports) in ${seeded.seconds.toFixed(1)} s`);

// A page 95 % of the way down: the keyset cursor of that row.
const deepRow = await bench.app.store.db.kysely
  .selectFrom('media_buys')
  .select(['created_at', 'id'])
  .where('tenant_id', '=', bench.tenantId)
  .orderBy('created_at', 'desc')
  .orderBy('id', 'desc')
  .limit(1)
  .offset(Math.floor(N * 0.95))
  .executeTakeFirstOrThrow();
const deepCursor = encodeCursor({ createdAt: deepRow.created_at, id: deepRow.id });

const session = await signIn(bench.url, bench.apiKey);

interface Page {
  name: string;
  path: string;
  headers?: Record<string, string>;
  /** What the body must hold, or the figure does not count. */
  check: (body: string) => boolean;
  target?: boolean;
  server: number[];
  wall: number[];
  bytes: number;
}
const rowsIn = (body: string) => (body.match(/<tr data-buy-id=/g) ?? []).length;
const page = (name: string, path: string, check: Page['check'], extra: Partial<Page> = {}): Page => ({ name, path, check, server: [], wall: [], bytes: 0, ...extra });
const pages: Page[] = [
  page('baseline: GET /agents (same session, layout, inbox count; no list)', '/agents', (b) => b.includes('retail-media-seller')),
  page('GET /media-buys (first page)', '/media-buys', (b) => rowsIn(b) === 50, { target: true }),
  page('GET /media-buys (live refresh, htmx)', '/media-buys', (b) => rowsIn(b) === 50, { headers: { 'hx-request': 'true' } }),
  page('GET /media-buys?status=paused', '/media-buys?status=paused', (b) => rowsIn(b) === 50, { target: true }),
  page('GET /media-buys?agent=…', `/media-buys?agent=${agents[1]}`, (b) => rowsIn(b) === 50, { target: true }),
  page('GET /media-buys?pacing=over (3 % of buys)', '/media-buys?pacing=over', (b) => rowsIn(b) === 50, { target: true }),
  page('GET /media-buys?pacing=under&agent=…', `/media-buys?pacing=under&agent=${agents[2]}`, (b) => rowsIn(b) === 50, { target: true }),
  page('GET /media-buys?campaign=…', `/media-buys?campaign=${seeded.campaignIds[7]}`, (b) => rowsIn(b) === 4),
  page('GET /media-buys?cursor=… (95 % deep)', `/media-buys?cursor=${deepCursor}`, (b) => rowsIn(b) === 50, { target: true }),
  page('GET /media-buys/:id (720 hourly reports)', `/media-buys/${seeded.deepBuyId}`, (b) => (b.match(/<rect class="bar/g) ?? []).length === 720),
];

async function hit(p: Page, keep: boolean): Promise<void> {
  const t = await timedPage(bench.url, session, p.path, p.headers, p.check);
  if (!keep) return;
  p.server.push(t.server);
  p.wall.push(t.wall);
  p.bytes = t.body.length;
}

for (const p of pages) for (let i = 0; i < 5; i++) await hit(p, false); // warm-up
const perRound = Math.ceil(REQUESTS / ROUNDS);
const startedLoad = performance.now();
for (let r = 0; r < ROUNDS; r++) for (const p of pages) for (let i = 0; i < perRound; i++) await hit(p, true);
log(`load: ${((performance.now() - startedLoad) / 1000).toFixed(1)} s, ${ROUNDS} alternating rounds of ${perRound} requests per page`);

// Ratios are of medians: on a shared machine a p95 of a 1 ms page is whatever else ran then.
const baseline = pages[0]!;
const baseP50 = percentile(baseline.server, 50);
const rows: ResultRow[] = [];
for (const p of pages) rows.push(...serverTimeRows(p.name, p, p.target ? TARGET_MS : undefined, p === baseline ? '' : ` (${(percentile(p.server, 50) / baseP50).toFixed(1)}× baseline)`));
await bench.close();

printResults(`Media buys pages, ${fmt(N)} buys in SQLite, ${ROUNDS * perRound} sequential requests each`, rows);
process.stdout.write(`${machineLine()}\n`);
