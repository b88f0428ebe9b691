/**
 * Several instances on one PostgreSQL (BENCHMARKS.md, Targets): 2 and 4 `serve`
 * instances together keep ≥ 0.9× one instance's poll and ingest rate on the same cores,
 * with 0 overlapping leases; the curve printed, and where it bottlenecks.
 *
 * Set-up: a throw-away database on the PostgreSQL at --pg (default TEST_DATABASE_URL,
 * else postgres://postgres@127.0.0.1:5432/postgres), dropped at the end; the fast local
 * seller (bench/lib/fast-seller.ts) in its own process; the load generator
 * (bench/lib/loadgen.ts) in its own; `serve` instances as child processes
 * (bin/adcp-orchestrator.js, bench/lib/serve-instances.ts). All phases' operations are
 * seeded before the first instance starts. Rounds run the instance counts up (1, 2, 4),
 * then down (4, 2, 1), and so on; each count's ratio is the median over rounds of its
 * rate ÷ one instance's rate in the same round. A count that starts instances first
 * waits past their start-up (`serve` loads the SDK's schemas 2 s after ready) and runs
 * a small poll and ingest round of its own, not counted, so every count is measured warm.
 *
 * Each count, two phases on fresh operations:
 * - polls: `--poll-ops` seeded `submitted` operations with no timer are made due at once
 *   (one UPDATE); the instances' schedulers claim, poll the seller and apply them (each
 *   polled once: the re-poll interval is 10 minutes). Rate = operations ÷ (last release
 *   − first claim), both from the lease log below.
 * - ingest: HMAC webhooks (same mix as webhook-ingest.ts, 64 in flight) spread
 *   round-robin over the instances for `--ingest-seconds`. Rate = deliveries
 *   acknowledged AND applied ÷ (load time + wait for the last acknowledged one applied).
 *
 * Overlapping leases, the method: a trigger installed in the throw-away database (never
 * by the orchestrator) logs every change of an operation's lease owner or epoch with
 * PostgreSQL's clock_timestamp() (bench/lib/lease-audit.ts). A claim made while the
 * previous claim of that operation was neither released nor expired is an overlap (two
 * holders at once); must be 0. Cross-check: the seller counts task ids polled twice
 * (each is due once here, so a repeat is a second worker on one operation).
 *
 * Where it bottlenecks, per phase: CPU seconds of each process from /proc (each
 * instance, PostgreSQL's backends for this database, PostgreSQL's other processes,
 * seller, load generator, this process) as cores used, the machine's busy share, and
 * pg_stat_activity sampled every 100 ms (busy backends, what they wait on, the share
 * waiting on locks). The machine is shared: other processes' load is in "machine busy".
 *
 * Correctness: every operation of a poll phase applied, no lease left; every
 * acknowledged webhook applied once (none left unapplied, none stored twice).
 *
 *   npx tsx bench/instances.ts [--pg URL] [--counts 1,2,4] [--rounds 2] [--poll-ops 3000] [--ingest-ops 1500] [--ingest-seconds 4]
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openStore } from '../src/store/index.js';
import { SecretBox } from '../src/store/secret-box.js';
import { BENCH_SECRET_KEY, fmt, log, machineLine, nextMessage, printResults, send, sleep, spawnTs, tempDir, waitForCount, type ResultRow } from './lib/common.js';
import { perSecond, roundRatios } from './lib/floor-report.js';
import { installLeaseAudit, leaseReport } from './lib/lease-audit.js';
import type { LoadResult } from './lib/loadgen.js';
import { opId } from './lib/orchestrator.js';
import { PgActivitySampler } from './lib/pg-activity.js';
import { createThrowAwayDatabase, DEFAULT_PG_ADMIN_URL, postgresReachable, seedOperationsPg } from './lib/pg-database.js';
import { describePhase, measurePhase, type PhaseLoad } from './lib/phase-load.js';
import { startServe, type ServeInstance } from './lib/serve-instances.js';
import { envelope, hmacHeaders, plan, type SeededOp } from './lib/webhooks.js';

const { values } = parseArgs({
  options: {
    pg: { type: 'string' },
    counts: { type: 'string', default: '1,2,4' },
    rounds: { type: 'string', default: '2' },
    'poll-ops': { type: 'string', default: '3000' },
    'ingest-ops': { type: 'string', default: '1500' },
    'ingest-seconds': { type: 'string', default: '4' },
  },
});
const ADMIN_URL = values.pg ?? process.env.TEST_DATABASE_URL ?? DEFAULT_PG_ADMIN_URL;
const COUNTS = values.counts!.split(',').map(Number);
const ROUNDS = Number(values.rounds);
const POLL_OPS = Number(values['poll-ops']);
const INGEST_OPS = Number(values['ingest-ops']);
const INGEST_SECONDS = Number(values['ingest-seconds']);
const LOAD = { connections: 32, pipelining: 2, inFlight: 64 };
/** The instances' settings: every operation polled once, nothing else running on a timer. */
const SERVE_ENV = {
  ADCP_ORCH_POLL_INTERVAL_MS: '600000',
  ADCP_ORCH_BACKUP_POLL_AFTER_MS: '3600000',
  ADCP_ORCH_SCHEDULER_TICK_MS: '100',
  ADCP_ORCH_WARMUP_MS: '0',
  ADCP_ORCH_RECONCILE_INTERVAL_MS: '0',
  ADCP_ORCH_CALL_TIMEOUT_MS: '10000',
};

if (!(await postgresReachable(ADMIN_URL))) {
  process.stdout.write(`\n## instances\n\nnot measurable: no PostgreSQL answers at ${new URL(ADMIN_URL).host} (--pg or TEST_DATABASE_URL)\n\n`);
  process.exit(0);
}
const machineAtStart = machineLine();
log(`machine: ${machineAtStart}`);
const database = await createThrowAwayDatabase(ADMIN_URL);
const client = new pg.Client({ connectionString: database.url });
const instances: ServeInstance[] = [];
let exitCode = 0;
try {
  // ---- set-up: schema, tenant, seller agent, lease log, every phase's operations ----
  const seller = spawnTs('bench/lib/fast-seller.ts');
  const { url: sellerUrl } = await nextMessage<{ url: string }>(seller, (m) => 'url' in m);
  const store = await openStore(database.url);
  const tenant = await store.tenants.ensureTenant('bench');
  const agent = await store.agents.insert({ tenantId: tenant.id, name: 'bench-seller', role: 'seller', url: sellerUrl, protocol: 'mcp' });
  await store.close();
  await client.connect();
  await installLeaseAudit(client);

  const secrets = new SecretBox(BENCH_SECRET_KEY);
  const dir = tempDir();
  /** `n` submitted operations with no timer (due only when a phase makes them due). */
  const seedPolls = (prefix: string, n: number) =>
    seedOperationsPg(client, { n, tenantId: tenant.id, agentId: agent.id, idPrefix: prefix, status: 'submitted', checkKind: 'poll', nextCheckAt: () => null });
  /** `n` submitted HMAC operations and a file of their signed deliveries (5 each). */
  const seedWebhooks = async (prefix: string, n: number): Promise<string> => {
    const ops: SeededOp[] = Array.from({ length: n }, (_, i) => {
      const id = opId(prefix, i);
      return { id, token: randomBytes(24).toString('base64url'), taskId: `task-${id}`, secret: randomBytes(32).toString('base64url') };
    });
    const farAway = Date.now() + 3_600_000;
    await seedOperationsPg(client, {
      n,
      tenantId: tenant.id,
      agentId: agent.id,
      idPrefix: prefix,
      status: 'submitted',
      webhookMode: 'hmac',
      nextCheckAt: () => farAway,
      row: (i) => ({ webhook_token: ops[i]!.token, webhook_secret_enc: secrets.seal(ops[i]!.secret!) }),
    });
    const file = join(dir, `${prefix}requests.ndjson`);
    const lines = plan(ops).map((d) => {
      const body = envelope(d);
      return JSON.stringify({ path: `/webhooks/adcp/${d.op.token}`, headers: hmacHeaders(d.op.secret!, body), body });
    });
    writeFileSync(file, lines.join('\n'));
    return file;
  };

  interface Phase {
    round: number;
    count: number;
    pollPrefix: string;
    ingestPrefix: string;
    ingestFile: string;
    /** When the phase starts instances: a small poll and ingest round first, not counted, so they are measured warm. */
    warmUp?: { pollPrefix: string; pollOps: number; ingestPrefix: string; ingestFile: string };
  }
  const phases: Phase[] = [];
  let previousCount = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const count of round % 2 === 0 ? COUNTS : [...COUNTS].reverse()) {
      const t0 = performance.now();
      const phase: Phase = { round, count, pollPrefix: `p${round}k${count}-`, ingestPrefix: `w${round}k${count}-`, ingestFile: '' };
      await seedPolls(phase.pollPrefix, POLL_OPS);
      phase.ingestFile = await seedWebhooks(phase.ingestPrefix, INGEST_OPS);
      if (count > previousCount) {
        const warm = { pollPrefix: `xp${round}k${count}-`, pollOps: 200 * count, ingestPrefix: `xw${round}k${count}-`, ingestFile: '' };
        await seedPolls(warm.pollPrefix, warm.pollOps);
        warm.ingestFile = await seedWebhooks(warm.ingestPrefix, 100 * count);
        phase.warmUp = warm;
      }
      previousCount = count;
      log(`round ${round + 1}, ${count} instance(s): seeded ${POLL_OPS} poll + ${INGEST_OPS} webhook operations${phase.warmUp ? ' (and a warm-up set)' : ''} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      phases.push(phase);
    }
  }
  // Every phase's rows are seeded up front, so the first phase measured would pay for the
  // seeding's aftermath (autovacuum visiting the fresh rows, a checkpoint writing them out):
  // done here, before any phase, so that no phase is charged with it.
  await client.query('VACUUM ANALYZE');
  await client.query('CHECKPOINT');
  const loadgen = spawnTs('bench/lib/loadgen.ts');
  const sampler = await PgActivitySampler.open(database.url);
  const helperPids = { seller: seller.pid!, 'load generator': loadgen.pid!, 'this bench': process.pid };

  const scaleTo = async (count: number) => {
    while (instances.length > count) await instances.pop()!.stop();
    const started = await Promise.all(Array.from({ length: count - instances.length }, () => startServe(database.url, SERVE_ENV)));
    instances.push(...started);
  };
  const sellerStats = async () => {
    const reply = nextMessage<{ stats: { polls: number; repeatPolls: number } }>(seller, (m) => 'stats' in m);
    send(seller, { cmd: 'stats' });
    return (await reply).stats;
  };
  /**
   * Makes `n` seeded poll operations due at once and waits until the instances have applied
   * them all and hold no lease on any. (Not a count of releases: a poll retried after a
   * failure, e.g. its deadline passing on a starved machine, releases its row twice.)
   */
  const runPolls = async (prefix: string, n: number) => {
    await client.query('UPDATE operations SET next_check_at = $1 WHERE id LIKE $2', [Date.now(), `${prefix}%`]);
    const doneSoFar = async () =>
      Number(
        (
          await client.query(
            `SELECT count(*) FILTER (WHERE (poll_count > 0 OR status <> 'submitted') AND lease_owner IS NULL) AS n FROM operations WHERE id LIKE $1`,
            [`${prefix}%`],
          )
        ).rows[0].n,
      );
    await waitForCount(doneSoFar, n, 180_000, 50);
  };
  /** Sends a file of webhooks round-robin over the instances; then waits until every acknowledged one is applied. */
  const runIngest = async (file: string, prefix: string, seconds: number): Promise<{ load: LoadResult; applyWait: number }> => {
    const reply = nextMessage(loadgen, (m) => 'result' in m || 'error' in m, seconds * 1000 + 120_000);
    send(loadgen, { cmd: 'run', origin: instances[0]!.url, origins: instances.map((x) => x.url), file, durationMs: seconds * 1000, ...LOAD });
    const m = await reply;
    if (m.error) throw new Error(m.error);
    const load = m.result as LoadResult;
    const appliedOf = async () =>
      Number((await client.query(`SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'applied' AND operation_id LIKE $1`, [`${prefix}%`])).rows[0].n);
    return { load, applyWait: (await waitForCount(appliedOf, load.ok, 60_000, 20)).seconds };
  };

  interface PhaseResult {
    phase: Phase;
    polls: { rate: number; load: PhaseLoad; overlapping: number; overlappingOther: number; expired: number; repeats: number; shares: string; checks: ResultRow[] };
    ingest: { rate: number; load: PhaseLoad; checks: ResultRow[] };
  }
  const results: PhaseResult[] = [];
  for (const phase of phases) {
    await scaleTo(phase.count);
    const label = `round ${phase.round + 1}, ${phase.count} instance(s)`;
    if (phase.warmUp) {
      // `serve` loads the SDK's response schemas 2 s after ready, blocking its loop once: not in a measured phase.
      await sleep(Math.max(0, Math.max(...instances.map((x) => x.readyAt)) + 3_000 - Date.now()));
      await runPolls(phase.warmUp.pollPrefix, phase.warmUp.pollOps);
      await runIngest(phase.warmUp.ingestFile, phase.warmUp.ingestPrefix, 1);
      log(`${label}: warm-up done`);
    }
    const pids = () => ({ ...Object.fromEntries(instances.map((x, i) => [`instance ${i + 1}`, x.pid])), ...helperPids });

    // ---- polls ----
    const before = await sellerStats();
    const pollLoad = await measurePhase(sampler, pids(), () => runPolls(phase.pollPrefix, POLL_OPS));
    const after = await sellerStats();
    const lease = await leaseReport(client, phase.pollPrefix);
    const { rows: pr } = await client.query(
      `SELECT count(*) FILTER (WHERE poll_count > 0 OR status <> 'submitted') AS applied, count(*) FILTER (WHERE lease_owner IS NOT NULL) AS leased
       FROM operations WHERE id LIKE $1`,
      [`${phase.pollPrefix}%`],
    );
    const applied = Number(pr[0].applied);
    const leased = Number(pr[0].leased);
    const pollRate = applied / lease.windowSeconds;
    const pidOf = (owner: string) => Number(owner.split(':').at(-2));
    const shares = instances.map((x) => Object.entries(lease.byOwner).filter(([o]) => pidOf(o) === x.pid).reduce((a, [, n]) => a + n, 0));
    log(`${label}, polls: ${fmt(pollRate)}/s (${applied} in ${lease.windowSeconds.toFixed(2)} s), claims per instance ${shares.join('/')}, overlapping ${lease.overlapping}; ${describePhase(pollLoad)}`);

    // ---- ingest ----
    let ingest: { load: LoadResult; applyWait: number } | undefined;
    const ingestLoad = await measurePhase(sampler, pids(), async () => {
      ingest = await runIngest(phase.ingestFile, phase.ingestPrefix, INGEST_SECONDS);
    });
    const r = ingest!.load;
    const applyWait = ingest!.applyWait;
    const ingestRate = r.ok / (r.seconds + applyWait);
    const { rows: wr } = await client.query(
      `SELECT count(*) FILTER (WHERE state = 'applied') AS applied, count(*) FILTER (WHERE state = 'received') AS received,
              count(*) AS rows, count(DISTINCT sender || ' ' || idempotency_key) AS keys
       FROM webhook_deliveries WHERE operation_id LIKE $1`,
      [`${phase.ingestPrefix}%`],
    );
    const w = { applied: Number(wr[0].applied), received: Number(wr[0].received), rows: Number(wr[0].rows), keys: Number(wr[0].keys) };
    log(`${label}, ingest: ${fmt(ingestRate)}/s (${r.ok} of ${r.sent} answered 200, applied ${w.applied}, wait ${(applyWait * 1000).toFixed(0)} ms); ${describePhase(ingestLoad)}`);

    results.push({
      phase,
      polls: {
        rate: pollRate,
        load: pollLoad,
        overlapping: lease.overlapping,
        overlappingOther: lease.overlappingOtherOwner,
        expired: lease.expiredTakeovers,
        repeats: after.repeatPolls - before.repeatPolls,
        shares: shares.join(' / '),
        checks: [
          { figure: `check, round ${phase.round + 1}, ${phase.count} instance(s), polls: applied / seeded; leases left`, value: `${applied} / ${POLL_OPS}; ${leased}`, target: 'equal; 0', pass: applied === POLL_OPS && leased === 0 && lease.stillHeld === 0 },
        ],
      },
      ingest: {
        rate: ingestRate,
        load: ingestLoad,
        checks: [
          {
            figure: `check, round ${phase.round + 1}, ${phase.count} instance(s), ingest: 200s / sent; applied / 200s; unapplied; rows / distinct keys`,
            value: `${r.ok} / ${r.sent}; ${w.applied} / ${r.ok}; ${w.received}; ${w.rows} / ${w.keys}`,
            target: 'equal; equal; 0; equal',
            pass: r.ok === r.sent && w.applied === r.ok && w.received === 0 && w.rows === w.keys,
          },
        ],
      },
    });
  }
  await scaleTo(0);
  loadgen.stdin!.end();
  send(seller, { cmd: 'stop' });
  await sampler.close();

  // ---- the curve ----
  const rows: ResultRow[] = [];
  const ofCount = (c: number) => results.filter((x) => x.phase.count === c).sort((a, b) => a.phase.round - b.phase.round);
  const base = COUNTS[0]!;
  for (const kind of ['polls', 'ingest'] as const) {
    for (const c of COUNTS) {
      const rs = ofCount(c);
      const rates = rs.map((x) => x[kind].rate);
      const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
      const row: ResultRow = { figure: `${kind}, ${c} instance(s): rate per round`, value: rates.map(perSecond).join(' / ') };
      if (c === base) rows.push(row);
      else {
        const { ratio, how } = roundRatios(ofCount(base).map((x) => x[kind].rate), rates);
        rows.push(row, { figure: `  ratio to ${base} instance, ${how}`, value: `${ratio.toFixed(3)}× (mean ${perSecond(mean)})`, target: '≥ 0.9×', pass: ratio >= 0.9 });
      }
    }
  }
  const overlapping = results.reduce((a, x) => a + x.polls.overlapping, 0);
  const repeats = results.reduce((a, x) => a + x.polls.repeats, 0);
  rows.push({
    figure: 'overlapping leases, all phases (claims while another claim was held; of them by another instance)',
    value: `${overlapping}; ${results.reduce((a, x) => a + x.polls.overlappingOther, 0)}`,
    target: '0',
    pass: overlapping === 0,
  });
  rows.push({ figure: '  cross-check: task ids the seller was polled for twice; expired leases taken over (legal)', value: `${repeats}; ${results.reduce((a, x) => a + x.polls.expired, 0)}` });
  for (const x of results) rows.push(...x.polls.checks, ...x.ingest.checks);
  printResults(
    `instances (${machineAtStart}; one PostgreSQL, ${ROUNDS} round(s) of ${COUNTS.join(', ')} instances; polls: ${POLL_OPS} due per phase, concurrency 64 per instance; ingest: HMAC, ${LOAD.inFlight} in flight round-robin, ${INGEST_SECONDS} s per phase)`,
    rows,
  );
  // Where each phase spent the machine: too long for a table cell, so a list after it.
  process.stdout.write('## instances: where each phase spent the machine\n\n');
  for (const x of results) {
    const at = `round ${x.phase.round + 1}, ${x.phase.count} instance(s)`;
    process.stdout.write(`- ${at}, polls ${perSecond(x.polls.rate)} (claims per instance ${x.polls.shares}): ${describePhase(x.polls.load)}\n`);
    process.stdout.write(`- ${at}, ingest ${perSecond(x.ingest.rate)}: ${describePhase(x.ingest.load)}\n`);
  }
  process.stdout.write('\n');
} catch (err) {
  exitCode = 1;
  process.stderr.write(`instances bench failed: ${(err as Error).stack ?? err}\n`);
  for (const [i, s] of instances.entries()) process.stderr.write(`--- instance ${i + 1} output (tail) ---\n${s.output()}\n`);
} finally {
  for (const s of instances.splice(0)) await s.stop().catch(() => undefined);
  await client.end().catch(() => undefined);
  await database.drop();
}
process.exit(exitCode);
