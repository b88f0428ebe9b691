/**
 * Webhook ingest (BENCHMARKS.md, Targets), each figure a ratio to a baseline measured in
 * the same run, in alternating rounds, with the same load generator and the same
 * requests:
 *
 * - HMAC: the orchestrator (verified + deduplicated + durably applied on SQLite,
 *   WAL + synchronous=FULL as shipped) against a bare Fastify endpoint that only
 *   checks the HMAC. Target ≥ 0.5× (and ≥ 5,000/s where the baseline reaches 10,000/s).
 * - RFC 9421: the orchestrator against a bare Fastify endpoint that only verifies
 *   the same signature with the same verifier (src/webhooks/rfc9421.ts) and an
 *   in-memory nonce set. Target ≥ 0.5×.
 *
 * Operations are seeded `submitted` (sealed HMAC secrets or an agent with an
 * inline JWKS). Every delivery is a distinct, validly signed envelope with a
 * unique idempotency_key: 80 % non-terminal progress, 20 % terminal. Round k of
 * a mode sends chunk k of the deliveries to the baseline, then to the
 * orchestrator (order swapped every other round); both sides verify their own
 * nonces, so the same signed bytes are fresh for each. Load comes from a separate
 * process (bench/lib/loadgen.ts, undici Pool).
 *
 * Also, HMAC only, informational: the ceiling of the engine + store alone, called in
 * this process with no HTTP and no signature check (see ceilingRound): what no HTTP
 * layer can beat on this machine.
 *
 * Correctness (PASS/MISS): every delivery the orchestrator acknowledged with 200
 * is applied in the database, none is left unapplied, no delivery is stored
 * twice, and no operation completed twice.
 *
 * --profile DIR writes a CPU profile of the orchestrator's first round of each mode
 * (V8 inspector in this process, as `node --cpu-prof`) and prints its top self
 * time; profiled rounds are slower, so such a run is not a run of record.
 *
 *   npx tsx bench/webhook-ingest.ts [--seconds 5] [--rounds 3] [--profile DIR]
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { keySourceFromConfig, type WebhookSigningConfig } from '../src/adcp/webhook-signature.js';
import { authenticateRfc9421 } from '../src/webhooks/rfc9421.js';
import { InMemoryNonceReplayStore } from '../src/webhooks/memory-replay-store.js';
import { parseDelivery } from '../src/webhooks/parse-delivery.js';
import { fmt, log, machineLine, nextMessage, printResults, REPO_ROOT, send, spawnTs, tempDir, type ResultRow } from './lib/common.js';
import { Profiler, topSelf, topSelfTable } from './lib/cpu-profile.js';
import type { LoadJob, LoadResult } from './lib/loadgen.js';
import { addAgent, opId, seedOperations, startBenchApp } from './lib/orchestrator.js';
import { enableSqlTiming, resetSqlTiming, sqlTimingReport } from './lib/sql-timing.js';
import { envelope, hmacHeaders, mintRfc9421Identity, plan, rfc9421Headers, ROUNDS, type SeededOp } from './lib/webhooks.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    'hmac-ops': { type: 'string', default: '5000' },
    'rfc-ops': { type: 'string', default: '1500' },
    profile: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const N_ROUNDS = Number(values.rounds);
const HMAC_OPS = Number(values['hmac-ops']); // per round: 5 deliveries each
const RFC_OPS = Number(values['rfc-ops']);
const PROFILE_DIR = values.profile;
const LOAD = { connections: 32, pipelining: 2, inFlight: 64 };

log(`machine: ${machineLine()}`);
const SQL_TIMING = process.env.BENCH_SQL_TIMING === '1';
if (SQL_TIMING) enableSqlTiming();
const dir = tempDir();
const bench = await startBenchApp({ dbPath: join(dir, 'orchestrator.db') });
const origin = bench.url;
const identity = mintRfc9421Identity();
const signing = { jwks: identity.publicJwks };
const agentId = await addAgent(bench, 'http://127.0.0.1:9/mcp', { webhookSigning: signing });

type Mode = 'hmac' | 'rfc9421';

/** Seeds `n` submitted operations for one webhook mode and returns what a sender knows about them. */
function seed(prefix: string, n: number, mode: Mode): SeededOp[] {
  const ops: SeededOp[] = [];
  for (let i = 0; i < n; i++) {
    const id = opId(prefix, i);
    ops.push({ id, token: randomBytes(24).toString('base64url'), taskId: `task-${id}`, ...(mode === 'hmac' ? { secret: randomBytes(32).toString('base64url') } : {}) });
  }
  const { seconds } = seedOperations(bench.dbPath, {
    n,
    tenantId: bench.tenantId,
    agentId,
    idPrefix: prefix,
    status: 'submitted',
    webhookMode: mode,
    nextCheckAt: () => Date.now() + 3_600_000, // backup poll far away: only webhooks move them
    row: (i) => ({
      webhook_token: ops[i].token,
      webhook_secret_enc: ops[i].secret ? bench.app.secrets.seal(ops[i].secret!) : null,
    }),
  });
  log(`seeded ${n} ${mode} operations in ${seconds.toFixed(1)} s`);
  return ops;
}

/** Signed requests for `ops`, signed for the orchestrator's URL (the RFC 9421 baseline verifies against that same URL). */
function writeRequests(name: string, ops: SeededOp[], mode: Mode): string {
  const lines: string[] = [];
  for (const d of plan(ops)) {
    const body = envelope(d);
    const path = `/webhooks/adcp/${d.op.token}`;
    const headers = mode === 'hmac' ? hmacHeaders(d.op.secret!, body) : rfc9421Headers(identity, `${origin}${path}`, body);
    lines.push(JSON.stringify({ path, headers, body }));
  }
  const file = join(dir, `${name}.ndjson`);
  writeFileSync(file, lines.join('\n'));
  return file;
}

const loadgen = spawnTs('bench/lib/loadgen.ts');
async function load(job: Omit<LoadJob, 'cmd' | 'connections' | 'pipelining' | 'inFlight'>): Promise<LoadResult> {
  if (SQL_TIMING) resetSqlTiming();
  const reply = nextMessage(loadgen, (m) => 'result' in m || 'error' in m, job.durationMs + 120_000);
  send(loadgen, { cmd: 'run', ...LOAD, ...job });
  const m = await reply;
  if (m.error) throw new Error(m.error);
  const r = m.result as LoadResult;
  if (SQL_TIMING) log(`${r.label}, ${r.ok} deliveries:\n${sqlTimingReport(8)}`);
  log(`${r.label}: ${fmt(r.perSecond)}/s ok, sent ${r.sent}, statuses ${JSON.stringify(r.statuses)}, errors ${r.errors}, p50 ${r.p50ms.toFixed(1)} ms, p99 ${r.p99ms.toFixed(1)} ms${r.firstErrorBody ? `, first non-2xx: ${r.firstErrorBody}` : ''}`);
  return r;
}

// --- Baselines: bare Fastify, raw body, one job each. ---
function bareApp(): FastifyInstance {
  const bare = Fastify({ logger: false });
  bare.removeAllContentTypeParsers();
  bare.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 2 * 1024 * 1024 }, (_req, body, done) => done(null, body));
  return bare;
}
const secretByToken = new Map<string, string>();
const bareHmac = bareApp();
bareHmac.post<{ Params: { token: string } }>('/webhooks/adcp/:token', async (req, reply) => {
  const secret = secretByToken.get(req.params.token);
  const sig = req.headers['x-adcp-signature'];
  const ts = req.headers['x-adcp-timestamp'];
  if (!secret || typeof sig !== 'string' || typeof ts !== 'string' || !sig.startsWith('sha256=')) return reply.code(401).send({ error: 'unauthenticated' });
  const expected = createHmac('sha256', secret).update(`${ts}.`, 'utf8').update(req.body as Buffer).digest();
  const presented = Buffer.from(sig.slice(7), 'hex');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return reply.code(401).send({ error: 'bad signature' });
  return reply.code(200).send({ status: 'accepted' });
});
const bareRfc = bareApp();
const bareKeys = keySourceFromConfig(signing as WebhookSigningConfig, { allowPrivateNetwork: true, agentType: 'sales' })!;
const bareNonces = new InMemoryNonceReplayStore();
bareRfc.post<{ Params: { token: string } }>('/webhooks/adcp/:token', async (req, reply) => {
  // The URL the sender signed: the orchestrator's, as its route computes it.
  const url = `${origin}/webhooks/adcp/${encodeURIComponent(req.params.token)}`;
  const auth = await authenticateRfc9421({ method: req.method, url, headers: req.headers, rawBody: req.body as Buffer }, { keys: bareKeys, replayStore: bareNonces });
  if (!auth.ok) return reply.code(401).send({ error: auth.code });
  return reply.code(200).send({ status: 'accepted' });
});
const bareOrigin = { hmac: await bareHmac.listen({ port: 0, host: '127.0.0.1' }), rfc9421: await bareRfc.listen({ port: 0, host: '127.0.0.1' }) };

// --- Requests: one chunk of fresh operations per round and mode. ---
const chunks: Record<Mode, string[]> = { hmac: [], rfc9421: [] };
const sentDeliveries: Record<Mode, number> = { hmac: 0, rfc9421: 0 };
for (let k = 0; k < N_ROUNDS; k++) {
  const h = seed(`wh-hmac-${k}-`, HMAC_OPS, 'hmac');
  for (const o of h) secretByToken.set(o.token, o.secret!);
  chunks.hmac.push(writeRequests(`hmac-${k}`, h, 'hmac'));
  chunks.rfc9421.push(writeRequests(`rfc-${k}`, seed(`wh-rfc-${k}-`, RFC_OPS, 'rfc9421'), 'rfc9421'));
}
// Warm-up on a separate small set (JIT, connections, SQLite caches), not counted.
const warm = seed('wh-warm-', 400, 'hmac');
for (const o of warm) secretByToken.set(o.token, o.secret!);
const warmFile = writeRequests('warm', warm, 'hmac');
await load({ origin, file: warmFile, durationMs: 3_000, label: 'warm-up (orchestrator)' });
await load({ origin: bareOrigin.hmac, file: warmFile, durationMs: 2_000, label: 'warm-up (bare)' });

interface Side {
  ok: number;
  seconds: number;
  p99: number[];
  statuses: Record<string, number>;
}
const empty = (): Side => ({ ok: 0, seconds: 0, p99: [], statuses: {} });
const totals: Record<Mode, { base: Side; orch: Side }> = { hmac: { base: empty(), orch: empty() }, rfc9421: { base: empty(), orch: empty() } };
const add = (s: Side, r: LoadResult) => {
  s.ok += r.ok;
  s.seconds += r.seconds;
  s.p99.push(r.p99ms);
  for (const [k, v] of Object.entries(r.statuses)) s.statuses[k] = (s.statuses[k] ?? 0) + v;
};
const profiles: string[] = [];
const profiler = new Profiler();
if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });

for (let k = 0; k < N_ROUNDS; k++) {
  for (const mode of ['hmac', 'rfc9421'] as const) {
    const file = chunks[mode][k]!;
    const runBase = async () => add(totals[mode].base, await load({ origin: bareOrigin[mode], file, durationMs: SECONDS * 1000, label: `round ${k + 1} bare ${mode}` }));
    const runOrch = async () => {
      const profiling = PROFILE_DIR !== undefined && k === 0;
      if (profiling) await profiler.start();
      const r = await load({ origin, file, durationMs: SECONDS * 1000, label: `round ${k + 1} orchestrator ${mode}${profiling ? ' (profiled)' : ''}` });
      if (profiling) {
        const out = join(PROFILE_DIR!, `webhook-ingest-${mode}.cpuprofile`);
        const p = await profiler.stop(out);
        profiles.push(`\n### ${mode} (${out})\n\n${topSelfTable(topSelf(p, 15, REPO_ROOT))}\n`);
      }
      add(totals[mode].orch, r);
      sentDeliveries[mode] += r.sent;
    };
    if (k % 2 === 0) {
      await runBase();
      await runOrch();
    } else {
      await runOrch();
      await runBase();
    }
  }
}
await bareHmac.close();
await bareRfc.close();
loadgen.stdin!.end();

/**
 * The ceiling of our durable path on this machine: the engine + store alone, in this
 * process, with no HTTP and no signature check (the receiver's work after
 * authentication: target read, parse, one `ingest` call), 64 in flight like the load
 * generator, same mix. No HTTP layer on top can be faster than this; when this is
 * under half the baseline, the ratio target cannot be met by anything but a faster
 * store.
 */
async function ceilingRound(file: string, ms: number): Promise<{ applied: number; other: number; seconds: number }> {
  const deliveries = readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => JSON.parse(line) as { path: string; body: string })
    .map((r) => ({ token: r.path.slice('/webhooks/adcp/'.length), body: Buffer.from(r.body) }));
  const ingest = bench.app.webhookIngest;
  let next = 0;
  let applied = 0;
  let other = 0;
  const t0 = performance.now();
  const until = t0 + ms;
  const worker = async () => {
    while (next < deliveries.length && performance.now() < until) {
      const d = deliveries[next++]!;
      const operation = await ingest.target(d.token);
      const parsed = parseDelivery(d.body);
      if (!operation || !parsed.ok) throw new Error('ceiling: a seeded delivery did not resolve or parse');
      const outcome = await ingest.ingest({ operation, claims: parsed.payload, fingerprint: parsed.fingerprint, text: parsed.text });
      if (outcome.kind === 'applied') applied++;
      else other++;
    }
  };
  await Promise.all(Array.from({ length: LOAD.inFlight }, worker));
  return { applied, other, seconds: (performance.now() - t0) / 1000 };
}
const ceilingOps = seed('wh-ceil-', HMAC_OPS, 'hmac');
if (SQL_TIMING) resetSqlTiming();
const ceiling = await ceilingRound(writeRequests('ceiling', ceilingOps, 'hmac'), SECONDS * 1000);
if (SQL_TIMING) log(`ceiling, ${ceiling.applied} deliveries:\n${sqlTimingReport(8)}`);
log(`ceiling (engine + store alone, HMAC mix): ${fmt(ceiling.applied / ceiling.seconds)}/s applied, ${ceiling.other} other outcomes`);

/** What the database says about one mode's deliveries. */
async function checks(prefix: string) {
  const db = bench.app.store.db.kysely;
  const like = `${prefix}%`;
  const { rows } = await sql<{ applied: number; received: number; rows: number; keys: number; twice: number }>`
    SELECT
      (SELECT count(*) FROM webhook_deliveries WHERE state = 'applied' AND operation_id LIKE ${like}) AS applied,
      (SELECT count(*) FROM webhook_deliveries WHERE state = 'received' AND operation_id LIKE ${like}) AS received,
      (SELECT count(*) FROM webhook_deliveries WHERE operation_id LIKE ${like}) AS rows,
      (SELECT count(DISTINCT sender || ' ' || idempotency_key) FROM webhook_deliveries WHERE operation_id LIKE ${like}) AS keys,
      (SELECT count(*) FROM (SELECT operation_id FROM operation_events
         WHERE operation_id LIKE ${like} AND kind = 'transition' AND to_status = 'completed'
         GROUP BY operation_id HAVING count(*) > 1)) AS twice`.execute(db);
  return rows[0]!;
}
const rows: ResultRow[] = [];
for (const [mode, label, prefix] of [
  ['hmac', 'HMAC, verified+deduped+applied (SQLite FULL)', 'wh-hmac-'],
  ['rfc9421', 'RFC 9421 (Ed25519 + durable nonce), SQLite FULL', 'wh-rfc-'],
] as const) {
  const t = totals[mode];
  const base = t.base.ok / t.base.seconds;
  const ours = t.orch.ok / t.orch.seconds;
  const ratio = ours / base;
  const c = await checks(prefix);
  rows.push({ figure: `webhook ingest ${label}: baseline / ours`, value: `${fmt(base)}/s / ${fmt(ours)}/s` });
  rows.push({ figure: `  ratio ours / baseline (${N_ROUNDS} alternating rounds × ${SECONDS} s)`, value: `${ratio.toFixed(3)}×`, target: '≥ 0.5×', pass: ratio >= 0.5 });
  if (mode === 'hmac') {
    rows.push({ figure: '  absolute, where the baseline reaches 10,000/s', value: `${fmt(ours)}/s`, target: '≥ 5,000/s', pass: base < 10_000 ? undefined : ours >= 5000 });
    const rate = ceiling.applied / ceiling.seconds;
    rows.push({ figure: '  ceiling: engine + store alone, no HTTP, no signature (this process, 64 in flight)', value: `${fmt(rate)}/s = ${(rate / base).toFixed(3)}× baseline` });
    const cc = await checks('wh-ceil-');
    rows.push({ figure: '  check, ceiling: every applied outcome stored applied, none other', value: `${cc.applied} / ${ceiling.applied}, ${ceiling.other}`, target: 'equal, 0', pass: cc.applied === ceiling.applied && ceiling.other === 0 && cc.received === 0 });
  }
  rows.push({ figure: '  ours p99 per round', value: `${t.orch.p99.map((p) => p.toFixed(1)).join(' / ')} ms` });
  rows.push({ figure: '  ours: statuses / baseline statuses', value: `${JSON.stringify(t.orch.statuses)} / ${JSON.stringify(t.base.statuses)}` });
  rows.push({ figure: '  check: every 200 applied (applied rows / 200s)', value: `${c.applied} / ${t.orch.ok}`, target: 'equal', pass: c.applied === t.orch.ok });
  rows.push({ figure: '  check: none left unapplied', value: String(c.received), target: '0', pass: c.received === 0 });
  rows.push({ figure: '  check: no duplicate (rows / distinct keys / ops completed twice)', value: `${c.rows} / ${c.keys} / ${c.twice}`, target: 'rows = keys, 0', pass: c.rows === c.keys && c.twice === 0 });
  rows.push({ figure: '  check: every request answered 200', value: `${t.orch.ok} / ${sentDeliveries[mode]}`, target: 'equal', pass: t.orch.ok === sentDeliveries[mode] });
}
await bench.close();
printResults(
  `webhook-ingest (${machineLine()}; load: separate process, undici ${LOAD.connections} conns × pipelining ${LOAD.pipelining}, ${LOAD.inFlight} in flight; ${ROUNDS.length} deliveries/op: ${ROUNDS.join(',')})`,
  rows,
);
if (profiles.length > 0) process.stdout.write(`## CPU profiles of the orchestrator, first round (top self time)\n${profiles.join('')}\n`);
process.exit(0);
