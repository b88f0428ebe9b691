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
import { eventually } from '../helpers/orchestrator.js';
import { OutageRig, WATCHER } from '../helpers/outage-rig.js';
import { privatePostgresEnabled } from '../helpers/private-postgres.js';

describe.skipIf(!privatePostgresEnabled)('PostgreSQL going away under load', () => {
  let rig: OutageRig;

  beforeAll(async () => {
    rig = await OutageRig.start();
  }, 90_000);
  afterAll(async () => rig?.close(), 60_000);

  it('stopped for ten seconds: 503 within ten seconds meanwhile, the process stays up, everything ends once within ten seconds of the return', async () => {
    const { cluster, seller, serve, apiKey } = rig;
    const client = rig.dashboard();
    expect((await client.signIn(apiKey)).status).toBe(303);
    const load = rig.newLoad(client);
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
    rig.expectPromptAndNeverBroken(load.samples);
    // No webhook was acknowledged while the database was away (and some were tried).
    const webhooksDuring = seller.stats().webhooks.filter((w) => Date.parse(w.at) > stoppedAt && Date.parse(w.at) < restartBeganAt);
    expect(webhooksDuring.length).toBeGreaterThan(0);
    expect(webhooksDuring.filter((w) => w.delivered || w.final_status !== 503)).toEqual([]);

    // Back: what was refused goes through when sent again; everything ends within ten seconds of the return.
    // A create refused while the database was away left nothing behind: no operation, nothing at the seller.
    const refusedKeys = during.filter((s) => s.kind === 'create').map((s) => s.key!);
    expect(await rig.query('SELECT id FROM operations WHERE idempotency_key = ANY($1)', [refusedKeys])).toEqual([]);
    expect(refusedKeys.filter((k) => seller.stats().createCallsByKey[k] !== undefined)).toEqual([]);
    expect(await rig.resend503s(load, 12)).toBe(12);
    const endedAfter = await rig.allEnded(backAt);
    console.log(`database stopped ${((restartBeganAt - stoppedAt) / 1000).toFixed(1)} s; every operation ended ${(endedAfter / 1000).toFixed(2)} s after its return`);
    expect(endedAfter).toBeLessThan(10_000);
    await rig.expectEachBoughtOnce();
    await rig.expectPresenceBack();
    expect(serve.child.exitCode).toBeNull();

    // Said once, not once per attempt; counted per place.
    const lines = rig.logLines();
    expect(lines.filter((l) => l.includes('"database unavailable: ')).length).toBe(1);
    expect(lines.filter((l) => l.includes('database available again')).length).toBe(1);
    expect(lines.filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    for (const where of ['api', 'dashboard', 'webhook', 'scheduler']) expect(metrics, where).toMatch(new RegExp(`^adcp_orch_database_unavailable_total\\{where="${where}"\\} [1-9]`, 'm'));
  }, 90_000);

  it('connections killed with pg_terminate_backend mid-transaction: answered, never crashed, everything ends once', async () => {
    const { cluster, serve } = rig;
    const load = rig.newLoad();
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
          const [row] = await rig.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name <> $1 AND wait_event_type = 'Lock' AND xact_start IS NOT NULL",
            [WATCHER],
          );
          return row!.n > 0 ? true : undefined;
        }, 10_000, 20);
        const rows = await rig.query<{ in_transaction: boolean }>(
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
    rig.expectPromptAndNeverBroken(load.samples);
    for (const s of load.samples.filter((x) => x.status === 503)) expect(s.code ?? 'dashboard').toBe('database_unavailable');

    await rig.resend503s(load);
    const endedAfter = await rig.allEnded(lastKillAt);
    console.log(`${killedInTransaction} connections killed mid-transaction; every operation ended ${(endedAfter / 1000).toFixed(2)} s after the last kill`);
    expect(endedAfter).toBeLessThan(10_000);
    await rig.expectEachBoughtOnce();
    await rig.expectPresenceBack();
    expect(rig.logLines().filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
  }, 90_000);
});
