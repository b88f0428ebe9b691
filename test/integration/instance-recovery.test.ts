/**
 * One `serve` per SQLite file, and a killed one's work resent at once by the next.
 *
 * Real processes: a second `serve` on a file a live one serves is refused with a
 * message naming the holder (two started at once: exactly one serves), while CLI
 * commands other than `serve` still work. One that was stopped (SIGSTOP) until its
 * heartbeat went stale is taken over, and exits when woken. A `serve` SIGKILLed while a
 * `create_media_buy` is in flight (the sandbox seller holds its reply) leaves an
 * ambiguous send behind; the next `serve` on the file takes it over and resends it
 * within 5 s of starting, not when the dead process's lease (call timeout + 15 s =
 * 45 s here) runs out, with the same idempotency_key and the same bytes, and never
 * while the first request was still open at the seller.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type CreateRequestRecord, type SandboxSeller } from '../../src/sandbox/seller.js';
import { openStore } from '../../src/store/index.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { RequestSealer } from '../../src/engine/sealed-request.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { eventually } from '../helpers/orchestrator.js';
import { withoutRpcId } from '../helpers/rpc-body.js';
import { startServeProcess, TEST_SECRET_KEY, type ServeProcess } from '../helpers/serve-process.js';

const BIN = fileURLToPath(new URL('../../bin/adcp-orchestrator.js', import.meta.url));
const run = promisify(execFile);

/** The default call timeout, so that the dead process's lease would hold the work for 45 s. */
const ENV = {
  ADCP_ORCH_CALL_TIMEOUT_MS: '30000',
  ADCP_ORCH_SYNC_WAIT_MS: '300',
  ADCP_ORCH_RECONCILE_INTERVAL_MS: '0',
};

describe('one serve per SQLite file', () => {
  let seller: SandboxSeller;
  const databases: TestDatabase[] = [];
  const processes: ServeProcess[] = [];

  beforeAll(async () => {
    seller = await startSandboxSeller();
  });
  afterEach(async () => {
    await Promise.allSettled(processes.splice(0).map((p) => p.stop('SIGKILL')));
  });
  afterAll(async () => {
    await seller?.close();
    for (const d of databases) await d.drop();
  });

  const cli = (args: string[]) =>
    run(process.execPath, [BIN, ...args], { env: { ...process.env, ADCP_ORCH_SECRET_KEY: TEST_SECRET_KEY, LOG_LEVEL: 'warn' } });

  it('refuses a second serve on the file, naming the one that holds it; other commands still work', async () => {
    const database = tempSqlite();
    databases.push(database);
    // Two started at once: the check and the claim are one step under the write lock, so one wins.
    const started = await Promise.allSettled([0, 1].map(() => startServeProcess({ databaseUrl: database.url, env: ENV })));
    for (const s of started) if (s.status === 'fulfilled') processes.push(s.value);
    const winners = started.filter((s): s is PromiseFulfilledResult<ServeProcess> => s.status === 'fulfilled').map((s) => s.value);
    const losers = started.filter((s): s is PromiseRejectedResult => s.status === 'rejected').map((s) => String(s.reason));
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    const holder = winners[0]!;
    const ready = (await (await fetch(`${holder.url}/readyz`)).json()) as any;
    expect(ready.instances).toHaveLength(1);
    expect(ready.instances[0]).toMatchObject({ pid: holder.child.pid, url: holder.url });

    // Refused with exit code 1 and a message that names the holder: pid, host, since when, address.
    const message = losers[0]!;
    expect(message).toMatch(/exited early \(1\)/);
    expect(message).toContain(`is already served by process ${holder.child.pid} on ${ready.instances[0].hostname}`);
    expect(message).toContain(`since ${new Date(ready.instances[0].started_at).toISOString()}`);
    // The two raced: the loser may have looked before the winner was listening.
    expect(message.includes(`at ${holder.url}`) || message.includes('still starting (no address yet)')).toBe(true);

    // Refused again later too, while the holder runs, now naming its address.
    const later = await startServeProcess({ databaseUrl: database.url, env: ENV }).then(
      (p) => (processes.push(p), 'started'),
      (err) => String(err),
    );
    expect(later).toContain(`already served by process ${holder.child.pid}`);
    expect(later).toContain(`at ${holder.url}`);

    // Commands that are not `serve` work while it runs.
    const migrated = await cli(['migrate', '--db', database.url]);
    expect(migrated.stdout).toContain('is up to date');
    const keys = await cli(['keys', 'create', '--tenant', 'while-serving', '--db', database.url]);
    const key = keys.stdout.trim().split('\n').at(-1)!;
    const agents = await fetch(`${holder.url}/v1/agents`, { headers: { authorization: `Bearer ${key}` } });
    expect(agents.status).toBe(200);

    const metrics = await (await fetch(`${holder.url}/metrics`)).text();
    expect(metrics).toMatch(/^adcp_orch_instances_live 1$/m);

    // Once the holder is gone (cleanly: its row is removed), the file is free.
    await holder.stop('SIGTERM');
    processes.splice(processes.indexOf(holder), 1);
    const next = await startServeProcess({ databaseUrl: database.url, env: ENV });
    processes.push(next);
    const after = (await (await fetch(`${next.url}/readyz`)).json()) as any;
    expect(after.instances.map((i: { pid: number }) => i.pid)).toEqual([next.child.pid]);
  }, 180_000);

  it('a serve stopped long enough is taken over; woken, it finds the file taken and exits', async () => {
    const database = tempSqlite();
    databases.push(database);
    const env = { ...ENV, ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: '2000' };
    const sleeper = await startServeProcess({ databaseUrl: database.url, env });
    processes.push(sleeper);
    const exited = new Promise<number | null>((resolve) => sleeper.child.once('exit', (code) => resolve(code)));
    sleeper.child.kill('SIGSTOP');
    // Its process is alive, but its heartbeat goes stale.
    const store = await openStore(database.url);
    try {
      await eventually(async () => ((await store.instances.list()).every((r) => r.age_ms > 2_000) ? true : undefined), 20_000, 100);
    } finally {
      await store.close();
    }
    const next = await startServeProcess({ databaseUrl: database.url, env });
    processes.push(next);
    sleeper.child.kill('SIGCONT');
    expect(await exited).toBe(1);
    expect(sleeper.output()).toContain('another serve process took this database file over');
    const ready = (await (await fetch(`${next.url}/readyz`)).json()) as any;
    expect(ready.instances.map((i: { pid: number }) => i.pid)).toEqual([next.child.pid]);
  }, 120_000);

  it('a serve killed mid-send: the next serve on the file resends it within 5 s, same key and bytes', async () => {
    const database = tempSqlite();
    databases.push(database);
    const store = await openStore(database.url);
    const apiKey = await store.tenants.createApiKey((await store.tenants.ensureTenant('recovery')).id);
    const call = async (url: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    try {
      const first = await startServeProcess({ databaseUrl: database.url, env: ENV });
      processes.push(first);
      const agent = await call(first.url, 'POST', '/v1/agents', { name: 'seller', role: 'seller', protocol: 'mcp', url: seller.url });
      expect(agent.status).toBe(201);
      const created = await call(first.url, 'POST', '/v1/media-buys', { agent_id: agent.body.id, request: mediaBuyRequest('sandbox_held_reply'), webhook: 'none' });
      expect(created.status).toBe(202);
      const { id: opId, idempotency_key: key } = created.body;
      const requests = () => seller.stats().createRequests.filter((r) => r.idempotency_key === key);

      // In flight: the seller has it (and made the buy) and holds the reply; the lease is the first process's.
      await eventually(async () => (requests().length === 1 ? true : undefined));
      const leased = (await store.operations.get(opId))!;
      expect(leased.status).toBe('calling_adcp');
      expect(leased.lease_owner).toContain(`:${first.child.pid}:`);
      expect(leased.lease_until! - Date.now()).toBeGreaterThan(30_000);

      await first.stop('SIGKILL');
      // The kill closed its connection: the seller's record of the first request has ended.
      await eventually(async () => (requests()[0]!.ended_at !== undefined ? true : undefined));

      const spawnedAt = Date.now();
      const second = await startServeProcess({ databaseUrl: database.url, env: ENV });
      processes.push(second);
      const readyAt = Date.now();
      const resend = await eventually<CreateRequestRecord>(async () => requests()[1], 20_000, 20);
      const sinceReady = resend.started_at - readyAt;
      const sinceSpawn = resend.started_at - spawnedAt;
      console.log(`SQLite: resent ${(sinceSpawn / 1000).toFixed(2)} s after the restart's spawn, ${(sinceReady / 1000).toFixed(2)} s after it was ready (the dead lease had ${((leased.lease_until! - resend.started_at) / 1000).toFixed(1)} s left)`);
      expect(sinceReady).toBeLessThan(5_000);
      // Long before the dead process's lease would have run out.
      expect(resend.started_at).toBeLessThan(leased.lease_until! - 20_000);

      const [original, again] = requests();
      expect(again!.idempotency_key).toBe(original!.idempotency_key);
      expect(again!.arguments).toBe(original!.arguments);
      // What was stored, credentials opened (our reporting webhook's secret is sealed at rest): the bytes sent.
      expect(again!.arguments).toBe(JSON.stringify(new RequestSealer(new SecretBox(TEST_SECRET_KEY)).open(leased.request_body)));
      expect(withoutRpcId(again!.body)).toBe(withoutRpcId(original!.body));
      // Never worked twice at once: the first request had ended before the resend began.
      expect(original!.ended_at!).toBeLessThanOrEqual(again!.started_at);

      const done = await eventually(async () => {
        const res = await call(second.url, 'GET', `/v1/operations/${opId}`);
        return res.body.status === 'completed' ? res.body : undefined;
      });
      expect(done.events.filter((e: any) => e.kind === 'resend')).toHaveLength(1);
      expect(done.result.media_buy_id).toMatch(/^mb_/);
      // The resend was answered with the buy the first request had made: bought once.
      expect(seller.stats().mediaBuysCreatedByKey[key]).toBe(1);
      expect(seller.stats().replaysByKey[key]).toBe(1);
    } finally {
      await store.close();
    }
  }, 180_000);
});
