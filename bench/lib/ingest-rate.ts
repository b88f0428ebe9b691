/**
 * The orchestrator's HMAC webhook ingest rate, measured on the running bench app, for a
 * bench whose target is stated at a share of it (webhook → SSE: half the ingest rate
 * measured in the same run). The same load as bench/webhook-ingest.ts: the load
 * generator in its own process (64 in flight), fresh `submitted` operations, the same
 * mix of deliveries (80 % progress, 20 % terminal), one short warm-up round first; the
 * rate counts deliveries acknowledged AND applied (the round ends when its last
 * acknowledged delivery is applied).
 *
 * `mix: 'completions'` measures instead the deliveries the SSE bench sends: one per
 * operation, each moving it from `submitted` to `completed` with a create's result (so
 * each also makes a buy). A rate meant to be halved for a latency target is measured on
 * the same deliveries as that target's phase.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { nextMessage, send, spawnTs, tempDir, waitForCount } from './common.js';
import type { LoadResult } from './loadgen.js';
import { opId, seedOperations, type BenchApp } from './orchestrator.js';
import { envelope, hmacHeaders, plan, type SeededOp } from './webhooks.js';

export interface IngestRate {
  /** Acknowledged and applied per second. */
  perSecond: number;
  acknowledged: number;
  applied: number;
  /** Load time plus the wait for the last acknowledged delivery to be applied. */
  seconds: number;
  p99ms: number;
}

const LOAD = { connections: 32, pipelining: 2, inFlight: 64 };

export type IngestMix = 'plan' | 'completions';

/**
 * `n` fresh `submitted` operations (ids `${prefix}…`, HMAC webhooks) and the file of their
 * signed deliveries: the plan of bench/lib/webhooks.ts (5 each, 80 % progress, 20 %
 * terminal), or with `completions` one `completed` delivery each.
 */
export function seedHmacRequests(b: BenchApp, agentId: string, prefix: string, n: number, mix: IngestMix = 'plan'): string {
  const ops: SeededOp[] = Array.from({ length: n }, (_, i) => {
    const id = opId(prefix, i);
    return { id, token: randomBytes(24).toString('base64url'), taskId: `task-${id}`, secret: randomBytes(32).toString('base64url') };
  });
  seedOperations(b.dbPath, {
    n,
    tenantId: b.tenantId,
    agentId,
    idPrefix: prefix,
    status: 'submitted',
    webhookMode: 'hmac',
    nextCheckAt: () => Date.now() + 3_600_000,
    row: (i) => ({ webhook_token: ops[i].token, webhook_secret_enc: b.app.secrets.seal(ops[i].secret!) }),
  });
  const at = Date.now() - 30_000;
  const deliveries = mix === 'plan' ? plan(ops) : ops.map((op) => ({ op, status: 'completed', at, key: `done-${op.id}-${randomBytes(4).toString('hex')}` }));
  const lines = deliveries.map((d) => {
    const body = envelope(d);
    return JSON.stringify({ path: `/webhooks/adcp/${d.op.token}`, headers: hmacHeaders(d.op.secret!, body), body });
  });
  const file = join(tempDir(), `${prefix}requests.ndjson`);
  writeFileSync(file, lines.join('\n'));
  return file;
}

/** `ops` operations × their deliveries (5 each, or 1 with `completions`) must outlast `seconds` of load (else the rate is capped by the file). */
export async function measureHmacIngestRate(b: BenchApp, agentId: string, opts: { seconds: number; ops: number; mix?: IngestMix }): Promise<IngestRate> {
  const mix = opts.mix ?? 'plan';
  // Prefixes per mix: a bench may measure both on one app.
  const warmFile = seedHmacRequests(b, agentId, `rate-${mix}-warm-`, mix === 'plan' ? 200 : 1_000, mix);
  const file = seedHmacRequests(b, agentId, `rate-${mix}-measured-`, opts.ops, mix);
  const loadgen = spawnTs('bench/lib/loadgen.ts');
  const run = async (f: string, durationMs: number): Promise<LoadResult> => {
    const reply = nextMessage(loadgen, (m) => 'result' in m || 'error' in m, durationMs + 120_000);
    send(loadgen, { cmd: 'run', origin: b.url, file: f, durationMs, ...LOAD });
    const m = await reply;
    if (m.error) throw new Error(m.error);
    return m.result as LoadResult;
  };
  try {
    await run(warmFile, 1_000);
    const r = await run(file, opts.seconds * 1000);
    const applied = await waitForCount(async () => {
      const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'applied' AND operation_id LIKE ${`rate-${mix}-measured-%`}`.execute(b.app.store.db.kysely);
      return Number(rows[0]!.n);
    }, r.ok);
    const seconds = r.seconds + applied.seconds;
    return { perSecond: r.ok / seconds, acknowledged: r.ok, applied: applied.count, seconds, p99ms: r.p99ms };
  } finally {
    loadgen.stdin!.end();
  }
}
