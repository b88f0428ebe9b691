/**
 * PostgreSQL going away under load, on a private cluster this suite starts and stops
 * itself (never the shared server other tests use), against `serve` as a real child
 * process and the sandbox seller:
 *
 * - the server stopped for ten seconds and started again: the process stays up; while it
 *   is away every request is answered within ten seconds, 503 `database_unavailable`
 *   with Retry-After (the dashboard with a page saying so), /healthz 200 and /readyz 503,
 *   and no webhook is acknowledged; within ten seconds of its return every operation
 *   has ended, each bought once, creates that got a 503 go through when sent again,
 *   the live feed has missed nothing, the instance lock and LISTEN are back;
 * - connections killed with pg_terminate_backend in the middle of transactions (held on
 *   a table lock so that there are some to kill): the same, without a restart.
 *
 * The seller tries each webhook once, so one refused during the outage stays refused and
 * its operation ends by the backup poll, as it must.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { openStore } from '../../src/store/index.js';
import { INSTANCE_LOCK_NAMESPACE } from '../../src/store/instance-lock.js';
import { ApiLoad, type Sample } from '../helpers/api-load.js';
import { DashboardClient } from '../helpers/dashboard-client.js';
import { eventually } from '../helpers/orchestrator.js';
import { privatePostgresBinDir, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';
import { openSse, type SseClient } from '../helpers/sse-client.js';

const ENV = {
  ADCP_ORCH_CALL_TIMEOUT_MS: '5000',
  ADCP_ORCH_SYNC_WAIT_MS: '1000',
  ADCP_ORCH_BACKUP_POLL_AFTER_MS: '2000',
  ADCP_ORCH_RECONCILE_INTERVAL_MS: '0',
  ADCP_ORCH_WARMUP_MS: '0',
  ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: '10000',
  LOG_LEVEL: 'info',
};
const TERMINAL = ['completed', 'failed', 'canceled', 'rejected'];
/** Our own connections are named so, and never killed. */
const WATCHER = 'outage-test watcher';

describe.skipIf(!privatePostgresBinDir)('PostgreSQL going away under load', () => {
  let cluster: PrivatePostgres;
  let seller: SandboxSeller;
  let serve: ServeProcess;
  let apiKey = '';
  let agentId = '';
  let sse: SseClient;
  const dashboard = () => new DashboardClient(serve.url);

  /** A query on a connection of our own, opened for it (the cluster comes and goes). */
  async function query<R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: cluster.url, application_name: WATCHER });
    await client.connect();
    try {
      return (await client.query<R>(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${serve.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text(), headers: res.headers };
  };

  beforeAll(async () => {
    cluster = await startPrivatePostgres();
    seller = await startSandboxSeller({ submittedDelayMs: 1000, webhookRetry: { maxAttempts: 1 } });
    serve = await startServeProcess({ databaseUrl: cluster.url, env: ENV });
    const store = await openStore(cluster.url, { poolSize: 1 });
    apiKey = await store.tenants.createApiKey((await store.tenants.ensureTenant('outage')).id);
    await store.close();
    const agent = await api('POST', '/v1/agents', { name: 'seller', role: 'seller', protocol: 'mcp', url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
    expect(agent.status).toBe(201);
    agentId = JSON.parse(agent.text).id;
    sse = await openSse(`${serve.url}/v1/events`, { authorization: `Bearer ${apiKey}` });
    expect(sse.status).toBe(200);
  }, 90_000);

  afterAll(async () => {
    sse?.close();
    await serve?.stop();
    await seller?.close();
    await cluster?.destroy();
  }, 60_000);

  function newLoad(client?: DashboardClient): ApiLoad {
    return new ApiLoad({ url: serve.url, apiKey, agentId, products: ['sandbox_submitted', 'sandbox_instant'], workers: 3, pauseMs: 150, ...(client ? { dashboard: client } : {}) });
  }

  /** Every answer came within ten seconds, and none was a 500 or no answer at all. */
  function expectPromptAndNeverBroken(samples: Sample[]): void {
    const slow = samples.filter((s) => s.endedAt - s.startedAt >= 10_000 || s.status === 0 || s.status >= 500 && s.status !== 503);
    expect(slow.map((s) => `${s.kind} ${s.status} ${s.endedAt - s.startedAt} ms ${s.text?.slice(0, 200)}`)).toEqual([]);
  }

  /** Creates refused with 503 (`most` of them, spread over the run) are sent again, as a client would: each must now be taken. */
  async function resend503s(load: ApiLoad, most = Number.POSITIVE_INFINITY): Promise<number> {
    const all = load.samples.filter((s) => s.kind === 'create' && s.status === 503);
    const step = Math.max(1, all.length / most);
    const refused = all.filter((_, i) => i % step < 1).slice(0, most);
    const again: Sample[] = [];
    // A few at a time, as clients coming back would, not hundreds in one burst.
    for (let i = 0; i < refused.length; i += 4) again.push(...(await Promise.all(refused.slice(i, i + 4).map((s) => load.retry(s)))));
    expect(again.map((s) => s.status).filter((st) => st !== 202 && st !== 200)).toEqual([]);
    return refused.length;
  }

  /**
   * Waits until no operation is left unended; returns how long after `since` the last of those
   * that existed at `since` ended (the work a client sent again after that is not counted).
   */
  async function allEnded(since: number): Promise<number> {
    await eventually(async () => {
      const [row] = await query<{ n: number }>('SELECT count(*)::int AS n FROM operations WHERE status <> ALL($1)', [TERMINAL]);
      return row!.n === 0 ? true : undefined;
    }, 30_000, 100);
    const slowest = await query<{ id: string; ended_ms: number; timeline: string }>(
      `SELECT o.id, o.completed_at - $1 AS ended_ms,
              (SELECT string_agg(e.source || ':' || e.kind || ':' || coalesce(e.to_status, '') || '@' || (e.at - $1), ' ' ORDER BY e.id)
                 FROM operation_events e WHERE e.operation_id = o.id) AS timeline
         FROM operations o WHERE o.created_at < $1 ORDER BY o.completed_at DESC LIMIT 3`,
      [since],
    );
    if (Number(slowest[0]?.ended_ms) >= 10_000) console.log('slowest to end after the return:', slowest);
    return Number(slowest[0]?.ended_ms ?? 0);
  }

  /** Every buy completed and was bought exactly once; the seller booked nothing else; the live feed told every completion. */
  async function expectEachBoughtOnce(): Promise<void> {
    const ops = await query<{ id: string; idempotency_key: string; status: string }>("SELECT id, idempotency_key, status FROM operations WHERE type = 'create_media_buy'");
    expect(ops.filter((o) => o.status !== 'completed')).toEqual([]);
    const stats = seller.stats();
    expect(ops.filter((o) => stats.mediaBuysCreatedByKey[o.idempotency_key] !== 1).map((o) => [o.idempotency_key, stats.mediaBuysCreatedByKey[o.idempotency_key]])).toEqual([]);
    expect(stats.mediaBuysCreated).toBe(ops.length);
    // At least once: every completion reached the stream opened before it all.
    const untold = () => {
      const told = new Set(sse.messages.filter((m) => m.event === 'operation.completed').map((m) => m.data.data.operation.id));
      return ops.filter((o) => !told.has(o.id)).map((o) => o.id);
    };
    await eventually(async () => (untold().length === 0 ? true : undefined), 15_000).catch(() => undefined);
    expect(untold()).toEqual([]);
  }

  /** Our instance holds its advisory lock again, LISTENs again, and says it is alive. */
  async function expectPresenceBack(): Promise<void> {
    await eventually(async () => {
      const [row] = await query<{ locked: boolean; listening: number }>(
        `SELECT EXISTS (SELECT 1 FROM instances i JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted
                          AND l.classid = $1::int::oid AND l.objid = i.lock_key::oid) AS locked,
                (SELECT count(*)::int FROM pg_stat_activity WHERE query LIKE 'LISTEN %') AS listening`,
        [INSTANCE_LOCK_NAMESPACE],
      );
      return row!.locked && row!.listening === 1 ? true : undefined;
    }, 10_000);
    const ready = await fetch(`${serve.url}/readyz`);
    expect(ready.status).toBe(200);
    const { instances } = (await ready.json()) as { instances: Array<{ pid: number; heartbeat_age_ms: number }> };
    expect(instances.map((i) => i.pid)).toEqual([serve.child.pid]);
  }

  const logLines = () => serve.output().split('\n').filter((l) => l.startsWith('{'));

  it('stopped for ten seconds: 503 within ten seconds meanwhile, the process stays up, everything ends once within ten seconds of the return', async () => {
    const client = dashboard();
    expect((await client.signIn(apiKey)).status).toBe(303);
    const load = newLoad(client);
    load.start();
    await eventually(async () => (load.samples.filter((s) => s.kind === 'create' && s.status === 202).length >= 6 ? true : undefined), 20_000);

    await cluster.stop('fast');
    const stoppedAt = Date.now();
    // The outage lasts ten seconds; meanwhile the metrics still answer, and say so.
    await new Promise((r) => setTimeout(r, 4_000));
    // The seller tells us of some of its tasks again, while we cannot store what it says.
    const tasks = [...new Set(seller.stats().webhooks.map((w) => w.task_id))].slice(-3);
    for (const task of tasks) seller.sendWebhook(task, { status: 'completed' });
    await seller.webhooksSettled();
    const metricsMeanwhile = await fetch(`${serve.url}/metrics`);
    expect(metricsMeanwhile.status).toBe(200);
    expect(await metricsMeanwhile.text()).toMatch(/^adcp_orch_database_unavailable_total\{where="api"\} [1-9]/m);
    await new Promise((r) => setTimeout(r, Math.max(0, stoppedAt + 10_000 - Date.now())));
    expect(serve.child.exitCode).toBeNull();
    const restartBeganAt = Date.now();
    await cluster.start();
    const backAt = Date.now();
    await new Promise((r) => setTimeout(r, 1_000));
    await load.stop();

    // While it was away: every request answered 503 database_unavailable (the dashboard a page), the probes as they should.
    const during = load.within(stoppedAt, restartBeganAt);
    expect(during.filter((s) => s.kind === 'create').length).toBeGreaterThan(10);
    for (const s of during) {
      const where = `${s.kind} at +${s.startedAt - stoppedAt} ms`;
      if (s.kind === 'healthz') expect(s.status, where).toBe(200);
      else if (s.kind === 'readyz') expect(s.status, where).toBe(503);
      else {
        expect(s.status, where).toBe(503);
        expect(s.retryAfter, where).toBe('5');
        if (s.kind === 'dashboard') expect(s.text, where).toContain('Database unavailable');
        else expect(s.code, where).toBe('database_unavailable');
      }
    }
    expect(during.some((s) => s.kind === 'dashboard')).toBe(true);
    expectPromptAndNeverBroken(load.samples);
    // No webhook was acknowledged while the database was away (and some were tried).
    const webhooksDuring = seller.stats().webhooks.filter((w) => Date.parse(w.at) > stoppedAt && Date.parse(w.at) < restartBeganAt);
    expect(webhooksDuring.length).toBeGreaterThan(0);
    expect(webhooksDuring.filter((w) => w.delivered || w.final_status !== 503)).toEqual([]);

    // Back: what was refused goes through when sent again; everything ends within ten seconds of the return.
    // A create refused while the database was away left nothing behind: no operation, nothing at the seller.
    const refusedKeys = during.filter((s) => s.kind === 'create').map((s) => s.key!);
    expect(await query('SELECT id FROM operations WHERE idempotency_key = ANY($1)', [refusedKeys])).toEqual([]);
    expect(refusedKeys.filter((k) => seller.stats().createCallsByKey[k] !== undefined)).toEqual([]);
    expect(await resend503s(load, 12)).toBe(12);
    const endedAfter = await allEnded(backAt);
    console.log(`database stopped ${((restartBeganAt - stoppedAt) / 1000).toFixed(1)} s; every operation ended ${(endedAfter / 1000).toFixed(2)} s after its return`);
    expect(endedAfter).toBeLessThan(10_000);
    await expectEachBoughtOnce();
    await expectPresenceBack();
    expect(serve.child.exitCode).toBeNull();

    // Said once, not once per attempt; counted per place.
    const lines = logLines();
    expect(lines.filter((l) => l.includes('"database unavailable: ')).length).toBe(1);
    expect(lines.filter((l) => l.includes('database available again')).length).toBe(1);
    expect(lines.filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    for (const where of ['api', 'dashboard', 'webhook', 'scheduler']) expect(metrics, where).toMatch(new RegExp(`^adcp_orch_database_unavailable_total\\{where="${where}"\\} [1-9]`, 'm'));
  }, 90_000);

  it('connections killed with pg_terminate_backend mid-transaction: answered, never crashed, everything ends once', async () => {
    const load = newLoad();
    load.start();
    await eventually(async () => (load.samples.filter((s) => s.kind === 'create' && s.status === 202).length >= 4 ? true : undefined), 20_000);
    const admin = new pg.Client({ connectionString: cluster.url, application_name: WATCHER });
    await admin.connect();
    let killedInTransaction = 0;
    try {
      for (let round = 0; round < 3; round++) {
        // Writers queue behind a lock of ours, each inside its transaction: then every connection of the process goes.
        await admin.query('BEGIN');
        await admin.query('LOCK TABLE operations IN SHARE ROW EXCLUSIVE MODE');
        // Watched from outside the lock's transaction: pg_stat_activity is read once per transaction.
        await eventually(async () => {
          const [row] = await query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name <> $1 AND wait_event_type = 'Lock' AND xact_start IS NOT NULL",
            [WATCHER],
          );
          return row!.n > 0 ? true : undefined;
        }, 10_000, 20);
        const rows = await query<{ in_transaction: boolean }>(
          `SELECT xact_start IS NOT NULL AS in_transaction, pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE datname = current_database() AND application_name <> $1 AND backend_type = 'client backend'`,
          [WATCHER],
        );
        killedInTransaction += rows.filter((r) => r.in_transaction).length;
        await admin.query('COMMIT');
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      await admin.end();
    }
    const lastKillAt = Date.now();
    await load.stop();
    expect(killedInTransaction).toBeGreaterThanOrEqual(3);
    expect(serve.child.exitCode).toBeNull();
    expectPromptAndNeverBroken(load.samples);
    for (const s of load.samples.filter((x) => x.status === 503)) expect(s.code ?? 'dashboard').toBe('database_unavailable');

    await resend503s(load);
    const endedAfter = await allEnded(lastKillAt);
    console.log(`${killedInTransaction} connections killed mid-transaction; every operation ended ${(endedAfter / 1000).toFixed(2)} s after the last kill`);
    expect(endedAfter).toBeLessThan(10_000);
    await expectEachBoughtOnce();
    await expectPresenceBack();
    expect(logLines().filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
  }, 90_000);
});
