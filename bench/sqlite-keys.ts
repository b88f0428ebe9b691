/**
 * Why new rows get time-ordered ids (UUIDv7): the cost of a group commit on this
 * disk with random (UUIDv4) against time-ordered primary keys, same run, same
 * table (the webhook_deliveries schema of the migrations), SQLite WAL +
 * synchronous=FULL as shipped. A random key puts each new row on a random page of
 * the primary-key index, so a commit of 20 rows writes ~20 more pages to the WAL;
 * a time-ordered key appends to one. Rounds alternate between the two.
 *
 *   npx tsx bench/sqlite-keys.ts [--rows 100000] [--group 20] [--commits 500] [--rounds 2]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import { v7 as uuidv7 } from 'uuid';
import { openDb } from '../src/store/db.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { fmt, log, machineLine, percentile, printResults, tempDir } from './lib/common.js';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '100000' }, group: { type: 'string', default: '20' }, commits: { type: 'string', default: '500' }, rounds: { type: 'string', default: '2' } },
});
const ROWS = Number(values.rows);
const GROUP = Number(values.group);
const COMMITS = Number(values.commits);
const ROUNDS = Number(values.rounds);

type IdKind = 'random' | 'time-ordered';
const newId: Record<IdKind, () => string> = { random: randomUUID, 'time-ordered': uuidv7 };

/** A database with the shipped schema and `ROWS` deliveries whose ids are of `kind`. */
async function prepared(kind: IdKind): Promise<SQLite.Database> {
  const path = join(tempDir(), `${kind}.db`);
  const db = openDb(`sqlite:${path}`);
  await migrateToLatest(db);
  await db.close();
  const s = new SQLite(path);
  s.pragma('journal_mode = WAL');
  s.pragma('synchronous = FULL');
  const fill = s.transaction(() => {
    for (let i = 0; i < ROWS; i++) insert(s, kind);
  });
  fill();
  s.pragma('wal_checkpoint(TRUNCATE)');
  return s;
}

const statements = new WeakMap<SQLite.Database, SQLite.Statement>();
const payload = JSON.stringify({ status: 'working', message: 'x'.repeat(240) });
function insert(s: SQLite.Database, kind: IdKind): void {
  let stmt = statements.get(s);
  if (!stmt) {
    stmt = s.prepare(
      `INSERT INTO webhook_deliveries (id, sender, idempotency_key, fingerprint, operation_id, state, outcome, payload, received_at, applied_at)
       VALUES (?, ?, ?, ?, ?, 'applied', 'applied', ?, ?, ?) ON CONFLICT DO NOTHING`,
    );
    statements.set(s, stmt);
  }
  const now = Date.now();
  stmt.run(newId[kind](), 'agent_bench', `key_${randomBytes(12).toString('hex')}`, randomBytes(32).toString('hex'), randomUUID(), payload, now, now);
}

/** COMMIT times (ms) and statement time per row (µs) of `COMMITS` groups of `GROUP` inserts. */
function round(s: SQLite.Database, kind: IdKind): { commits: number[]; insertUs: number } {
  const begin = s.prepare('BEGIN IMMEDIATE');
  const commit = s.prepare('COMMIT');
  const commits: number[] = [];
  let insertMs = 0;
  for (let c = 0; c < COMMITS; c++) {
    begin.run();
    const t0 = performance.now();
    for (let i = 0; i < GROUP; i++) insert(s, kind);
    const t1 = performance.now();
    commit.run();
    commits.push(performance.now() - t1);
    insertMs += t1 - t0;
  }
  return { commits, insertUs: (insertMs * 1000) / (COMMITS * GROUP) };
}

log(`machine: ${machineLine()}`);
const dbs = { random: await prepared('random'), 'time-ordered': await prepared('time-ordered') };
const seen: Record<IdKind, { commits: number[]; insertUs: number[] }> = { random: { commits: [], insertUs: [] }, 'time-ordered': { commits: [], insertUs: [] } };
for (let r = 0; r < ROUNDS; r++) {
  const order: IdKind[] = r % 2 === 0 ? ['random', 'time-ordered'] : ['time-ordered', 'random'];
  for (const kind of order) {
    const res = round(dbs[kind], kind);
    seen[kind].commits.push(...res.commits);
    seen[kind].insertUs.push(res.insertUs);
    log(`round ${r + 1} ${kind}: COMMIT p50 ${percentile(res.commits, 50).toFixed(3)} ms, insert ${res.insertUs.toFixed(1)} µs/row`);
  }
}
for (const s of Object.values(dbs)) s.close();
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const p50 = { random: percentile(seen.random.commits, 50), ordered: percentile(seen['time-ordered'].commits, 50) };
printResults(`sqlite-keys (${machineLine()}; ${fmt(ROWS)} rows, ${ROUNDS} alternating rounds of ${COMMITS} commits × ${GROUP} inserts, WAL + FULL)`, [
  { figure: 'COMMIT of a group, random ids: p50 / mean', value: `${p50.random.toFixed(3)} / ${mean(seen.random.commits).toFixed(3)} ms` },
  { figure: 'COMMIT of a group, time-ordered ids: p50 / mean', value: `${p50.ordered.toFixed(3)} / ${mean(seen['time-ordered'].commits).toFixed(3)} ms` },
  { figure: 'ratio time-ordered / random (COMMIT p50)', value: `${(p50.ordered / p50.random).toFixed(2)}×` },
  { figure: 'insert per row, random / time-ordered', value: `${mean(seen.random.insertUs).toFixed(1)} / ${mean(seen['time-ordered'].insertUs).toFixed(1)} µs` },
]);
process.exit(0);
