/**
 * What a test of the database going away stands on: a private PostgreSQL cluster (that the
 * test may stop, start, freeze), the sandbox seller (webhooks tried once, so one refused
 * stays refused and its operation must end by polling), `serve` as a child process, a
 * tenant's key, the seller registered, and an SSE stream opened before anything happens;
 * and the checks every such test makes afterwards.
 */
import pg from 'pg';
import { expect } from 'vitest';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { openStore } from '../../src/store/index.js';
import { INSTANCE_LOCK_NAMESPACE } from '../../src/store/instance-lock.js';
import { ApiLoad, type Sample } from './api-load.js';
import { DashboardClient } from './dashboard-client.js';
import { eventually } from './orchestrator.js';
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';
import { startServeProcess, type ServeProcess } from './serve-process.js';
import { openSse, type SseClient } from './sse-client.js';

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
/** The rig's own connections are named so, and never killed. */
export const WATCHER = 'outage-test watcher';

export class OutageRig {
  private constructor(
    readonly cluster: PrivatePostgres,
    readonly seller: SandboxSeller,
    readonly serve: ServeProcess,
    readonly apiKey: string,
    readonly agentId: string,
    readonly sse: SseClient,
  ) {}

  static async start(): Promise<OutageRig> {
    const cluster = await startPrivatePostgres();
    const seller = await startSandboxSeller({ submittedDelayMs: 1000, webhookRetry: { maxAttempts: 1 } });
    const serve = await startServeProcess({ databaseUrl: cluster.url, env: ENV });
    const store = await openStore(cluster.url, { poolSize: 1 });
    const apiKey = await store.tenants.createApiKey((await store.tenants.ensureTenant('outage')).id);
    await store.close();
    const res = await fetch(`${serve.url}/v1/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'seller', role: 'seller', protocol: 'mcp', url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } }),
    });
    expect(res.status).toBe(201);
    const agentId = ((await res.json()) as { id: string }).id;
    const sse = await openSse(`${serve.url}/v1/events`, { authorization: `Bearer ${apiKey}` });
    expect(sse.status).toBe(200);
    return new OutageRig(cluster, seller, serve, apiKey, agentId, sse);
  }

  async close(): Promise<void> {
    this.sse.close();
    await this.serve.stop();
    await this.seller.close();
    await this.cluster.destroy();
  }

  dashboard(): DashboardClient {
    return new DashboardClient(this.serve.url);
  }

  /** The process's log lines (JSON). */
  logLines(): string[] {
    return this.serve.output().split('\n').filter((l) => l.startsWith('{'));
  }

  /** A query on a connection of our own, opened for it (the cluster comes and goes). */
  async query<R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.cluster.url, application_name: WATCHER });
    await client.connect();
    try {
      return (await client.query<R>(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  newLoad(client?: DashboardClient): ApiLoad {
    return new ApiLoad({ url: this.serve.url, apiKey: this.apiKey, agentId: this.agentId, products: ['sandbox_submitted', 'sandbox_instant'], workers: 3, pauseMs: 150, ...(client ? { dashboard: client } : {}) });
  }

  /** Every answer came within ten seconds, and none was a 500 or no answer at all. */
  expectPromptAndNeverBroken(samples: Sample[]): void {
    const slow = samples.filter((s) => s.endedAt - s.startedAt >= 10_000 || s.status === 0 || s.status >= 500 && s.status !== 503);
    expect(slow.map((s) => `${s.kind} ${s.status} ${s.endedAt - s.startedAt} ms ${s.text?.slice(0, 200)}`)).toEqual([]);
  }

  /** Creates refused with 503 (`most` of them, spread over the run) are sent again, as a client would: each must now be taken. */
  async resend503s(load: ApiLoad, most = Number.POSITIVE_INFINITY): Promise<number> {
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
  async allEnded(since: number): Promise<number> {
    await eventually(async () => {
      const [row] = await this.query<{ n: number }>('SELECT count(*)::int AS n FROM operations WHERE status <> ALL($1)', [TERMINAL]);
      return row!.n === 0 ? true : undefined;
    }, 30_000, 100);
    const slowest = await this.query<{ id: string; ended_ms: number; timeline: string }>(
      `SELECT o.id, o.completed_at - $1 AS ended_ms,
              (SELECT string_agg(e.source || ':' || e.kind || ':' || coalesce(e.to_status, '') || '@' || (e.at - $1), ' ' ORDER BY e.id)
                 FROM operation_events e WHERE e.operation_id = o.id) AS timeline
         FROM operations o WHERE o.created_at < $1 ORDER BY o.completed_at DESC LIMIT 3`,
      [since],
    );
    if (Number(slowest[0]?.ended_ms) >= 10_000) console.log('slowest to end after the return:', slowest);
    return Math.max(0, Number(slowest[0]?.ended_ms ?? 0));
  }

  /** Every buy completed and was bought exactly once; the seller booked nothing else; the live feed told every completion. */
  async expectEachBoughtOnce(): Promise<void> {
    const ops = await this.query<{ id: string; idempotency_key: string; status: string }>("SELECT id, idempotency_key, status FROM operations WHERE type = 'create_media_buy'");
    expect(ops.filter((o) => o.status !== 'completed')).toEqual([]);
    const stats = this.seller.stats();
    expect(ops.filter((o) => stats.mediaBuysCreatedByKey[o.idempotency_key] !== 1).map((o) => [o.idempotency_key, stats.mediaBuysCreatedByKey[o.idempotency_key]])).toEqual([]);
    expect(stats.mediaBuysCreated).toBe(ops.length);
    // At least once: every completion reached the stream opened before it all.
    const untold = () => {
      const told = new Set(this.sse.messages.filter((m) => m.event === 'operation.completed').map((m) => m.data.data.operation.id));
      return ops.filter((o) => !told.has(o.id)).map((o) => o.id);
    };
    await eventually(async () => (untold().length === 0 ? true : undefined), 15_000).catch(() => undefined);
    expect(untold()).toEqual([]);
  }

  /** Our instance holds its advisory lock again, LISTENs again, and says it is alive. */
  async expectPresenceBack(): Promise<void> {
    await eventually(async () => {
      const [row] = await this.query<{ locked: boolean; listening: number }>(
        `SELECT EXISTS (SELECT 1 FROM instances i JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted
                          AND l.classid = $1::int::oid AND l.objid = i.lock_key::oid) AS locked,
                (SELECT count(*)::int FROM pg_stat_activity WHERE query LIKE 'LISTEN %') AS listening`,
        [INSTANCE_LOCK_NAMESPACE],
      );
      return row!.locked && row!.listening === 1 ? true : undefined;
    }, 10_000);
    // /readyz lists instances whose heartbeat is younger than the dead-after limit (10 s here): after
    // a freeze longer than that, ours is listed again from its next heartbeat, up to an interval
    // (a quarter of the limit) after the lock and LISTEN are back, plus a statement stuck in the freeze.
    let last: unknown;
    await eventually(async () => {
      const ready = await fetch(`${this.serve.url}/readyz`);
      last = { status: ready.status, body: await ready.json() };
      const { instances } = (last as { body: { instances?: Array<{ pid: number }> } }).body;
      return ready.status === 200 && instances?.length === 1 && instances[0]!.pid === this.serve.child.pid ? true : undefined;
    }, 10_000).catch(() => undefined);
    expect(last).toMatchObject({ status: 200, body: { instances: [{ pid: this.serve.child.pid }] } });
  }

}
