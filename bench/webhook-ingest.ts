/**
 * Webhook ingest (DESIGN.md §11): verified + deduplicated + durably applied on
 * SQLite, ≥ 5,000/s and ≥ 0.5× a bare Fastify endpoint that only checks the HMAC,
 * measured in the same run.
 *
 * The orchestrator is the real one (createApp, temp SQLite file, WAL +
 * synchronous=FULL as shipped). Operations are seeded `submitted` with webhook
 * mode hmac (sealed secrets, known tokens) or rfc9421 (inline JWKS). Every
 * delivery is a distinct, validly signed envelope with a unique idempotency_key:
 * 80 % non-terminal progress (working/submitted), 20 % terminal (completed).
 * Load comes from a separate process (bench/lib/loadgen.ts, undici Pool).
 *
 *   npx tsx bench/webhook-ingest.ts [--seconds 15]
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { fmt, log, machineLine, nextMessage, printResults, send, spawnTs, tempDir, type ResultRow } from './lib/common.js';
import type { LoadJob, LoadResult } from './lib/loadgen.js';
import { addAgent, opId, seedOperations, startBenchApp } from './lib/orchestrator.js';
import { enableSqlTiming, resetSqlTiming, sqlTimingReport } from './lib/sql-timing.js';
import { envelope, hmacHeaders, mintRfc9421Identity, plan, rfc9421Headers, ROUNDS, type SeededOp } from './lib/webhooks.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '15' }, ops: { type: 'string', default: '16000' } } });
const SECONDS = Number(values.seconds);
const OPS = Number(values.ops);
const LOAD = { connections: 32, pipelining: 2, inFlight: 64 };

log(`machine: ${machineLine()}`);
const SQL_TIMING = process.env.BENCH_SQL_TIMING === '1';
if (SQL_TIMING) enableSqlTiming();
const dir = tempDir();
const bench = await startBenchApp({ dbPath: join(dir, 'orchestrator.db') });
const origin = bench.url;
const identity = mintRfc9421Identity();
const agentId = await addAgent(bench, 'http://127.0.0.1:9/mcp', { webhookSigning: { jwks: identity.publicJwks } });

/** Seeds `n` submitted operations for one webhook mode and returns what a sender knows about them. */
function seed(prefix: string, n: number, mode: 'hmac' | 'rfc9421'): SeededOp[] {
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

function writeRequests(name: string, ops: SeededOp[], mode: 'hmac' | 'rfc9421'): { file: string; count: number } {
  const deliveries = plan(ops);
  const lines: string[] = [];
  for (const d of deliveries) {
    const body = envelope(d);
    const path = `/webhooks/adcp/${d.op.token}`;
    const headers = mode === 'hmac' ? hmacHeaders(d.op.secret!, body) : rfc9421Headers(identity, `${origin}${path}`, body);
    lines.push(JSON.stringify({ path, headers, body }));
  }
  const file = join(dir, `${name}.ndjson`);
  writeFileSync(file, lines.join('\n'));
  return { file, count: deliveries.length };
}

const loadgen = spawnTs('bench/lib/loadgen.ts');
async function load(job: Omit<LoadJob, 'cmd' | 'connections' | 'pipelining' | 'inFlight'>): Promise<LoadResult> {
  if (SQL_TIMING) resetSqlTiming();
  const reply = nextMessage(loadgen, (m) => 'result' in m || 'error' in m, (job.durationMs + 120_000));
  send(loadgen, { cmd: 'run', ...LOAD, ...job });
  const m = await reply;
  if (m.error) throw new Error(m.error);
  const r = m.result as LoadResult;
  if (SQL_TIMING) log(`${r.label}, ${r.ok} deliveries:\n${sqlTimingReport(8)}`);
  log(`${r.label}: ${fmt(r.perSecond)}/s ok, sent ${r.sent}, statuses ${JSON.stringify(r.statuses)}, errors ${r.errors}, p50 ${r.p50ms.toFixed(1)} ms, p99 ${r.p99ms.toFixed(1)} ms${r.firstErrorBody ? `, first non-2xx: ${r.firstErrorBody}` : ''}`);
  return r;
}

async function appliedCounts(prefix: string) {
  const db = bench.app.store.db.kysely;
  const { rows } = await sql<{ applied: number; received: number; completed: number }>`
    SELECT
      (SELECT count(*) FROM webhook_deliveries WHERE state = 'applied' AND operation_id LIKE ${prefix + '%'}) AS applied,
      (SELECT count(*) FROM webhook_deliveries WHERE state = 'received' AND operation_id LIKE ${prefix + '%'}) AS received,
      (SELECT count(*) FROM operations WHERE status = 'completed' AND id LIKE ${prefix + '%'}) AS completed`.execute(db);
  return rows[0];
}

// --- 1. The orchestrator, HMAC, as shipped (synchronous=FULL). ---
const hmacOps = seed('wh-hmac-', OPS, 'hmac');
const hmacReq = writeRequests('hmac', hmacOps, 'hmac');
// Warm-up on a separate small set (JIT, connections, SQLite caches), not counted.
const warmOps = seed('wh-warm-', 400, 'hmac');
const warmReq = writeRequests('warm', warmOps, 'hmac');
await load({ origin, file: warmReq.file, durationMs: 5_000, label: 'warm-up (orchestrator)' });
const orchHmac = await load({ origin, file: hmacReq.file, durationMs: SECONDS * 1000, label: 'orchestrator HMAC, synchronous=FULL' });
const hmacCounts = await appliedCounts('wh-hmac-');

// --- 2. The orchestrator, RFC 9421 (Ed25519 verify + durable nonce insert). ---
const rfcOps = seed('wh-rfc-', Math.min(OPS, 8000), 'rfc9421');
const rfcReq = writeRequests('rfc9421', rfcOps, 'rfc9421');
const orchRfc = await load({ origin, file: rfcReq.file, durationMs: SECONDS * 1000, label: 'orchestrator RFC 9421, synchronous=FULL' });
const rfcCounts = await appliedCounts('wh-rfc-');

// --- 3. Diagnostic only: the same pipeline without an fsync per commit (NOT durable; not the target figure). ---
const normOps = seed('wh-norm-', OPS, 'hmac');
const normReq = writeRequests('hmac-normal', normOps, 'hmac');
await sql`PRAGMA synchronous = NORMAL`.execute(bench.app.store.db.kysely);
const orchNormal = await load({ origin, file: normReq.file, durationMs: SECONDS * 1000, label: 'orchestrator HMAC, synchronous=NORMAL (diagnostic)' });
await sql`PRAGMA synchronous = FULL`.execute(bench.app.store.db.kysely);
await bench.close();

// --- 4. Baseline: bare Fastify, raw body, verifies the same HMAC, answers 200. ---
const secretByToken = new Map(hmacOps.map((o) => [o.token, o.secret!]));
const bare = Fastify({ logger: false });
bare.removeAllContentTypeParsers();
bare.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 2 * 1024 * 1024 }, (_req, body, done) => done(null, body));
bare.post<{ Params: { token: string } }>('/webhooks/adcp/:token', async (req, reply) => {
  const secret = secretByToken.get(req.params.token);
  const sig = req.headers['x-adcp-signature'];
  const ts = req.headers['x-adcp-timestamp'];
  if (!secret || typeof sig !== 'string' || typeof ts !== 'string' || !sig.startsWith('sha256=')) return reply.code(401).send({ error: 'unauthenticated' });
  const expected = createHmac('sha256', secret).update(`${ts}.`, 'utf8').update(req.body as Buffer).digest();
  const presented = Buffer.from(sig.slice(7), 'hex');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return reply.code(401).send({ error: 'bad signature' });
  return reply.code(200).send({ status: 'accepted' });
});
const bareOrigin = await bare.listen({ port: 0, host: '127.0.0.1' });
await load({ origin: bareOrigin, file: hmacReq.file, durationMs: 3_000, cycle: true, label: 'warm-up (bare)' });
const baseline = await load({ origin: bareOrigin, file: hmacReq.file, durationMs: SECONDS * 1000, cycle: true, label: 'bare Fastify HMAC-only baseline' });
await bare.close();
loadgen.stdin!.end();

const ratio = orchHmac.perSecond / baseline.perSecond;
const rows: ResultRow[] = [
  { figure: 'webhook ingest, HMAC, verified+deduped+applied (SQLite FULL)', value: `${fmt(orchHmac.perSecond)}/s`, target: '≥ 5,000/s', pass: orchHmac.perSecond >= 5000 },
  { figure: 'bare Fastify HMAC-only baseline (same run)', value: `${fmt(baseline.perSecond)}/s` },
  { figure: 'ratio orchestrator / baseline', value: `${ratio.toFixed(3)}×`, target: '≥ 0.5×', pass: ratio >= 0.5 },
  { figure: 'orchestrator HMAC latency p50 / p99', value: `${orchHmac.p50ms.toFixed(1)} / ${orchHmac.p99ms.toFixed(1)} ms` },
  { figure: 'webhook ingest, RFC 9421 (Ed25519 + nonce), SQLite FULL', value: `${fmt(orchRfc.perSecond)}/s`, target: '≥ 5,000/s', pass: orchRfc.perSecond >= 5000 },
  { figure: 'diagnostic: HMAC with synchronous=NORMAL (not durable)', value: `${fmt(orchNormal.perSecond)}/s` },
  { figure: 'check: HMAC deliveries applied in DB / 200s', value: `${hmacCounts.applied} / ${orchHmac.ok} (unapplied ${hmacCounts.received}, ops completed ${hmacCounts.completed})` },
  { figure: 'check: RFC 9421 deliveries applied in DB / 200s', value: `${rfcCounts.applied} / ${orchRfc.ok}` },
];
printResults(`webhook-ingest (${machineLine()}; load: separate process, undici ${LOAD.connections} conns × pipelining ${LOAD.pipelining}, ${LOAD.inFlight} in flight, ${SECONDS} s; ${ROUNDS.length} deliveries/op: ${ROUNDS.join(',')})`, rows);
process.exit(0);
