/**
 * Instances on one PostgreSQL know each other (heartbeat rows, and an advisory
 * lock each holds on its own connection): one that dies is declared dead by the
 * others and its work is handed on at once, not when its leases (call timeout +
 * 15 s = 45 s here) run out. A kill drops the dead one's lock at once; a pause is
 * seen when its heartbeat is older than ADCP_ORCH_INSTANCE_DEAD_AFTER_MS.
 *
 * Three real `serve` processes. C is SIGKILLed while it holds leases on ambiguous
 * sends (the sandbox seller holds their replies): another instance resends them
 * within 15 s of the kill, same key and bytes, and never while C's request was
 * still open at the seller. B is then paused (SIGSTOP) mid-send: it is declared
 * dead, its send is resent and completed by another instance, and when B is woken
 * (SIGCONT) and its own call finally fails, its stale lease epoch keeps it from
 * writing anything; it notices its row was removed and registers again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxSeller, type CreateRequestRecord, type SandboxSeller } from '../../src/sandbox/seller.js';
import { openStore, type Store } from '../../src/store/index.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { eventually } from '../helpers/orchestrator.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';
import { withoutRpcId } from '../helpers/rpc-body.js';

const suite = postgresAdminUrl ? describe : describe.skip;

const HELD_ON_VICTIM = 4;
const ENV = {
  ADCP_ORCH_CALL_TIMEOUT_MS: '30000',
  ADCP_ORCH_SYNC_WAIT_MS: '300',
  ADCP_ORCH_RECONCILE_INTERVAL_MS: '0',
  // The default limit: a heartbeat older than 10 s is a dead instance.
  ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: '10000',
  LOG_LEVEL: 'info',
};

suite('instances on one PostgreSQL', () => {
  let database: TestDatabase | undefined;
  let seller: SandboxSeller | undefined;
  let store: Store | undefined;
  const instances: ServeProcess[] = [];
  let apiKey = '';
  let agentId = '';

  beforeAll(async () => {
    database = await tempPostgres();
    seller = await startSandboxSeller();
    // One after another: three processes compiling TypeScript at once on a busy machine are slow to be ready.
    for (let i = 0; i < 3; i++) instances.push(await startServeProcess({ databaseUrl: database.url, env: ENV }));
    store = await openStore(database.url, { poolSize: 2 });
    apiKey = await store.tenants.createApiKey((await store.tenants.ensureTenant('recovery')).id);
    const agent = await api(0, 'POST', '/v1/agents', { name: 'seller', role: 'seller', protocol: 'mcp', url: seller.url });
    expect(agent.status).toBe(201);
    agentId = agent.body.id;
  }, 120_000);

  afterAll(async () => {
    // A stopped process must be continued to die of anything but SIGKILL; SIGKILL it all the same.
    for (const p of instances) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGCONT');
    await Promise.allSettled(instances.map((p) => p.stop('SIGKILL')));
    await seller?.close().catch(() => undefined);
    await store?.close().catch(() => undefined);
    await database?.drop();
  }, 60_000);

  async function api(i: number, method: string, path: string, body?: unknown) {
    const res = await fetch(`${instances[i]!.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  const requestsFor = (key: string): CreateRequestRecord[] => seller!.stats().createRequests.filter((r) => r.idempotency_key === key);

  /** Held buys sent by instance i: in flight at the seller, leased by i. */
  async function heldBuysOn(i: number, count: number): Promise<Array<{ id: string; key: string }>> {
    const made: Array<{ id: string; key: string }> = [];
    for (let n = 0; n < count; n++) {
      const res = await api(i, 'POST', '/v1/media-buys', { agent_id: agentId, request: mediaBuyRequest('sandbox_held_reply'), webhook: 'none' });
      expect(res.status).toBe(202);
      made.push({ id: res.body.id, key: res.body.idempotency_key });
    }
    await eventually(async () => (made.every((m) => requestsFor(m.key).length === 1) ? true : undefined));
    const pid = instances[i]!.child.pid;
    for (const m of made) expect((await store!.operations.get(m.id))!.lease_owner).toContain(`:${pid}:`);
    return made;
  }

  const readyz = async (i: number) => (await (await fetch(`${instances[i]!.url}/readyz`)).json()) as { instances: Array<{ id: string; pid: number; heartbeat_age_ms: number }> };

  it('a killed instance: another resends its ambiguous sends within 15 s of the kill, never two at once', async () => {
    expect((await readyz(0)).instances.map((i) => i.pid).sort()).toEqual(instances.map((p) => p.child.pid).sort());
    const victim = instances[2]!;
    const held = await heldBuysOn(2, HELD_ON_VICTIM);

    const killedAt = Date.now();
    await victim.stop('SIGKILL');
    const resends = await eventually(async () => {
      const second = held.map((h) => requestsFor(h.key)[1]);
      return second.every(Boolean) ? (second as CreateRequestRecord[]) : undefined;
    }, 40_000, 20);
    const after = resends.map((r) => (r.started_at - killedAt) / 1000);
    console.log(`PostgreSQL: resent ${Math.min(...after).toFixed(2)}–${Math.max(...after).toFixed(2)} s after the kill (${held.length} sends; the dead leases had ~${(30 + 15 - Math.max(...after)).toFixed(0)} s left)`);
    expect(Math.max(...after)).toBeLessThan(15);

    for (const h of held) {
      const [original, again] = requestsFor(h.key);
      expect(again!.arguments).toBe(original!.arguments);
      expect(withoutRpcId(again!.body)).toBe(withoutRpcId(original!.body));
      // The kill closed C's connection before anyone resent: never two requests for one key open at once.
      expect(original!.ended_at, `first request of ${h.key} never ended`).toBeDefined();
      expect(original!.ended_at!).toBeLessThanOrEqual(again!.started_at);
      expect(requestsFor(h.key)).toHaveLength(2);
    }
    await eventually(async () => {
      const statuses = await Promise.all(held.map(async (h) => (await api(0, 'GET', `/v1/operations/${h.id}`)).body.status));
      return statuses.every((s) => s === 'completed') ? true : undefined;
    });
    const stats = seller!.stats();
    for (const h of held) expect(stats.mediaBuysCreatedByKey[h.key]).toBe(1);

    // The survivors see each other only, and say so on /readyz and /metrics.
    const live = (await readyz(1)).instances;
    expect(live.map((i) => i.pid).sort()).toEqual([instances[0]!.child.pid, instances[1]!.child.pid].sort());
    for (const i of live) expect(i.heartbeat_age_ms).toBeLessThan(10_000);
    expect(await (await fetch(`${instances[0]!.url}/metrics`)).text()).toMatch(/^adcp_orch_instances_live 2$/m);
  }, 120_000);

  it('a paused instance is declared dead, its work done by another; woken, its stale epoch writes nothing', async () => {
    const sleeper = instances[1]!;
    const [op] = await heldBuysOn(1, 1);
    const { id, key } = op!;
    const pausedAt = Date.now();
    sleeper.child.kill('SIGSTOP');

    // A declares it dead, resends (the seller replays the buy) and completes the operation.
    const done = await eventually(async () => {
      const res = await api(0, 'GET', `/v1/operations/${id}`);
      return res.body.status === 'completed' ? res.body : undefined;
    }, 40_000);
    expect(done.events.filter((e: any) => e.kind === 'resend')).toHaveLength(1);
    // A paused process keeps its connection (and lock): only its heartbeat going stale gives it away.
    const resentAfter = (requestsFor(key)[1]!.started_at - pausedAt) / 1000;
    console.log(`PostgreSQL: a paused instance's send resent ${resentAfter.toFixed(2)} s after SIGSTOP (limit 10 s)`);
    expect(resentAfter).toBeGreaterThan(10 * 0.75 - 1);
    const settled = (await store!.operations.get(id))!;
    expect(settled.lease_owner).toBeNull();
    const eventsBefore = (await store!.operations.events(id)).map((e) => e.id);
    expect((await readyz(0)).instances.map((i) => i.pid)).not.toContain(sleeper.child.pid);

    // B's own request is still open; it now fails, and B wakes up to that failure.
    expect(seller!.releaseHeldReplies('error')).toBe(1);
    sleeper.child.kill('SIGCONT');
    // Its call fails, it tries to record that, and its stale lease refuses the write.
    const refused = (line: string) => line.includes('lease lost before writing') && line.includes(id);
    await eventually(async () => (sleeper.output().split('\n').some(refused) ? true : undefined), 30_000);
    expect(sleeper.output().split('\n').some((l) => l.includes('send failed; will retry') && l.includes(id))).toBe(true);
    await eventually(async () => (/our instance row was gone/.test(sleeper.output()) ? true : undefined), 30_000);

    // It wrote nothing: the operation is as A left it, without B's send_failed.
    const now = (await store!.operations.get(id))!;
    expect(now).toMatchObject({ status: 'completed', lease_epoch: settled.lease_epoch, updated_at: settled.updated_at, result: settled.result, next_check_at: null });
    expect((await store!.operations.events(id)).map((e) => e.id)).toEqual(eventsBefore);
    expect(seller!.stats().mediaBuysCreatedByKey[key]).toBe(1);

    // And it is back among the living, under the same id.
    await eventually(async () => ((await readyz(0)).instances.some((i) => i.pid === sleeper.child.pid) ? true : undefined), 20_000);
  }, 120_000);
});
