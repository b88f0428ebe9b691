/**
 * The crash test: a `serve` process is killed with SIGKILL at random moments
 * while a few hundred operations are in flight against the sandbox seller, and
 * restarted each time. At the end every operation has reached its right
 * terminal state, none is lost or doubled, and the seller executed exactly one
 * media buy per idempotency_key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { startSandboxSeller, type SandboxSeller } from '../../src/sandbox/seller.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { mediaBuyRequest } from '../helpers/media-buy.js';
import { freePort } from '../helpers/ports.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';

const OPERATIONS = 240;
const KILLS = 5;

/** What each product must end as. */
const EXPECTED: Record<string, string> = {
  sandbox_instant: 'completed',
  sandbox_submitted: 'completed',
  sandbox_working: 'completed',
  sandbox_lost_reply: 'completed',
  sandbox_rejected: 'rejected',
  sandbox_failed: 'failed',
};
const PRODUCTS = Object.keys(EXPECTED);

// Deterministic pseudo-randomness so a failure can be replayed (seed printed on failure).
const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 100000);
let state = seed;
const rand = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);

describe(`crash test (seed ${seed})`, () => {
  let seller: SandboxSeller;
  let database: TestDatabase;
  let serve: ServeProcess | undefined;
  let port: number;
  let apiKey: string;

  const env = {
    ADCP_ORCH_BACKUP_POLL_AFTER_MS: '2000',
    ADCP_ORCH_POLL_INTERVAL_MS: '300',
    ADCP_ORCH_WORKING_TIMEOUT_MS: '1000',
    ADCP_ORCH_CALL_TIMEOUT_MS: '5000',
    ADCP_ORCH_WARMUP_MS: '1000',
    ADCP_ORCH_RETRY_ATTEMPTS: '8',
  };

  beforeAll(async () => {
    seller = await startSandboxSeller({ submittedDelayMs: 700, workingDelayMs: 400, webhookRetry: { maxAttempts: 3, initialDelayMs: 200, maxDelayMs: 1000 } });
    database = tempSqlite();
    port = await freePort();
    const store = await openStore(database.url);
    apiKey = await store.tenants.createApiKey((await store.tenants.ensureTenant('chaos')).id);
    await store.close();
  });
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await seller?.close();
    await database?.drop();
  });

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  /** A client that keeps trying through our crashes, with its own Idempotency-Key. */
  const until = async <T>(fn: () => Promise<T | undefined>): Promise<T> => {
    for (let i = 0; ; i++) {
      try {
        const v = await fn();
        if (v !== undefined) return v;
      } catch {
        /* the server is down or restarting */
      }
      if (i > 2000) throw new Error('gave up');
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it(`${OPERATIONS} operations survive ${KILLS} SIGKILLs`, async () => {
    serve = await startServeProcess({ databaseUrl: database.url, port, env });
    const agent = await call('POST', '/v1/agents', { name: 'seller', role: 'seller', protocol: 'mcp', url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
    expect(agent.status).toBe(201);

    // The chaos monkey: kill at random moments, restart each time.
    let chaosDone = false;
    const chaos = (async () => {
      for (let k = 0; k < KILLS; k++) {
        await new Promise((r) => setTimeout(r, 500 + rand() * 2500));
        await serve!.stop('SIGKILL');
        serve = await startServeProcess({ databaseUrl: database.url, port, env });
      }
      chaosDone = true;
    })();

    const planned = Array.from({ length: OPERATIONS }, (_, i) => ({ i, product: PRODUCTS[i % PRODUCTS.length], webhook: i % 2 ? 'rfc9421' : 'none' }));
    const created = new Map<number, { id: string; product: string }>();
    const workers = Array.from({ length: 6 }, async (_, w) => {
      for (let n = w; n < planned.length; n += 6) {
        const p = planned[n];
        const res = await until(async () => {
          const r = await call('POST', '/v1/media-buys', { agent_id: agent.body.id, request: mediaBuyRequest(p.product), webhook: p.webhook }, { 'idempotency-key': `chaos-${p.i}` });
          return r.status === 202 ? r : undefined;
        });
        created.set(p.i, { id: res.body.id, product: p.product });
        await new Promise((r) => setTimeout(r, rand() * 60));
      }
    });
    await Promise.all(workers);
    console.log(`${new Date().toISOString()} created ${created.size} operations; waiting for the chaos to finish`);
    await chaos;
    console.log(`${new Date().toISOString()} chaos done; waiting for terminal states`);
    expect(chaosDone).toBe(true);

    // Every operation reaches its right terminal state.
    const finals = new Map<string, any>();
    await until(async () => {
      for (const { id } of created.values()) {
        if (finals.has(id)) continue;
        const r = await call('GET', `/v1/operations/${id}`);
        if (['completed', 'failed', 'rejected', 'canceled'].includes(r.body.status)) finals.set(id, r.body);
      }
      return finals.size === created.size ? true : undefined;
    });

    expect(created.size).toBe(OPERATIONS);
    const wrong: string[] = [];
    for (const { id, product } of created.values()) {
      const op = finals.get(id);
      if (op.status !== EXPECTED[product]) wrong.push(`${id} ${product}: ${op.status} ${JSON.stringify(op.error)}`);
    }
    expect(wrong).toEqual([]);

    // None lost, none doubled: exactly one operation per client request.
    const store = await openStore(database.url);
    const rows = await store.db.kysely.selectFrom('operations').select(['id', 'idempotency_key', 'status', 'lease_owner']).execute();
    await store.close();
    expect(rows).toHaveLength(OPERATIONS);
    expect(new Set(rows.map((r) => r.idempotency_key)).size).toBe(OPERATIONS);

    // The seller executed exactly one media buy per key that completed, and none for the others.
    const stats = seller.stats();
    for (const op of finals.values()) {
      const executed = stats.mediaBuysCreatedByKey[op.idempotency_key] ?? 0;
      expect(executed, `${op.id} (${op.status})`).toBe(op.status === 'completed' ? 1 : 0);
    }
    expect(Object.values(stats.mediaBuysCreatedByKey).every((n) => n === 1)).toBe(true);
  }, 300_000);
});
