/**
 * A PostgreSQL server that stops answering without closing anything (a hung host, a
 * network black hole: here every process of a private cluster frozen with SIGSTOP).
 * Nothing tells the pool its connections are dead, so without bounds a request would wait
 * for TCP to give up, minutes later. With them (src/store/pg-pool.ts: a bounded wait for a
 * connection, and a statement unanswered for a while cut once a fresh connection cannot
 * reach the server either) every request is answered within ten seconds, 503
 * `database_unavailable`; the process stays up; once the server goes on, every operation
 * ends, each bought once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/orchestrator.js';
import { OutageRig } from '../helpers/outage-rig.js';
import { privatePostgresEnabled } from '../helpers/private-postgres.js';

describe.skipIf(!privatePostgresEnabled)('PostgreSQL that stops answering', () => {
  let rig: OutageRig;

  beforeAll(async () => {
    rig = await OutageRig.start();
  }, 90_000);
  afterAll(async () => rig?.close(), 60_000);

  it('frozen for twelve seconds: every request answered within ten, 503 meanwhile; everything ends once after it goes on', async () => {
    const { cluster, serve, apiKey } = rig;
    const client = rig.dashboard();
    expect((await client.signIn(apiKey)).status).toBe(303);
    const load = rig.newLoad(client);
    load.start();
    await eventually(async () => (load.samples.filter((s) => s.kind === 'create' && s.status === 202).length >= 4 ? true : undefined), 20_000);

    await cluster.freeze();
    const frozenAt = Date.now();
    // Longer than the longest a request may wait on a frozen server, so that every bound is reached.
    await new Promise((r) => setTimeout(r, 12_000));
    expect(serve.child.exitCode).toBeNull();
    const thawBeganAt = Date.now();
    await cluster.thaw();
    const thawedAt = Date.now();
    await new Promise((r) => setTimeout(r, 1_000));
    await load.stop();

    // No request waited ten seconds, not even those caught on a connection when the server froze.
    rig.expectPromptAndNeverBroken(load.samples);
    const during = load.within(frozenAt, thawBeganAt);
    console.log(`around the freeze: ${load.samples.filter((s) => s.endedAt > frozenAt && s.startedAt < thawBeganAt).map((s) => `${s.kind} +${s.startedAt - frozenAt} ${s.status} ${s.endedAt - s.startedAt} ms`).join(', ')}`);
    expect(during.filter((s) => s.kind === 'create' || s.kind === 'list' || s.kind === 'get').length).toBeGreaterThan(0);
    for (const s of during) {
      const where = `${s.kind} at +${s.startedAt - frozenAt} ms, ${s.endedAt - s.startedAt} ms`;
      if (s.kind === 'healthz') expect(s.status, where).toBe(200);
      else expect(s.status, where).toBe(503);
      if (s.kind !== 'healthz' && s.kind !== 'readyz' && s.kind !== 'dashboard') expect(s.code, where).toBe('database_unavailable');
    }

    await rig.resend503s(load, 8);
    const endedAfter = await rig.allEnded(thawedAt);
    console.log(`server frozen ${((thawBeganAt - frozenAt) / 1000).toFixed(1)} s; every operation ended ${(endedAfter / 1000).toFixed(2)} s after it went on`);
    expect(endedAfter).toBeLessThan(10_000);
    await rig.expectEachBoughtOnce();
    await rig.expectPresenceBack();
    expect(serve.child.exitCode).toBeNull();
    expect(rig.logLines().filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
  }, 90_000);
});
