/**
 * Starts a real orchestrator in this process on a loopback port, on a fresh
 * SQLite file (or the database given), with a tenant and API key ready.
 */
import { createApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import type { Clock } from '../../src/engine/clock.js';
import { tempSqlite, type TestDatabase } from './databases.js';
import { freePort } from './ports.js';

export interface TestOrchestrator {
  app: App;
  url: string;
  apiKey: string;
  tenantId: string;
  database: TestDatabase;
  config: Config;
  /** fetch against the API with the tenant's key. */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  registerAgent(agent: { name?: string; url: string; protocol?: 'mcp' | 'a2a'; webhook_signing?: unknown; role?: string }): Promise<string>;
  close(): Promise<void>;
}

export async function startOrchestrator(
  opts: { env?: Record<string, string>; database?: TestDatabase; keepDatabase?: boolean; clock?: Clock } = {},
): Promise<TestOrchestrator> {
  const database = opts.database ?? tempSqlite();
  const port = await freePort();
  const config = loadConfig({
    ADCP_ORCH_DATABASE_URL: database.url,
    PORT: String(port),
    ADCP_ORCH_PUBLIC_URL: `http://127.0.0.1:${port}`,
    ADCP_ORCH_SECRET_KEY: 'test-secret-key-0123456789abcdef',
    ADCP_ORCH_ALLOW_PRIVATE_NETWORK: 'true',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ADCP_ORCH_POLL_INTERVAL_MS: '200',
    ADCP_ORCH_BACKUP_POLL_AFTER_MS: '60000',
    ADCP_ORCH_WORKING_TIMEOUT_MS: '1000',
    ADCP_ORCH_SCHEDULER_TICK_MS: '100',
    ADCP_ORCH_CALL_TIMEOUT_MS: '5000',
    ADCP_ORCH_SYNC_WAIT_MS: '5000',
    ADCP_ORCH_WARMUP_MS: '0',
    // Reconciliation runs at a random moment after start and may (rightly) poll early; tests
    // that assert exact timing must not depend on it, so tests that want it turn it on.
    ADCP_ORCH_RECONCILE_INTERVAL_MS: '0',
    ...opts.env,
  });
  const app = await createApp({ config, logger: createLogger(config.LOG_LEVEL), clock: opts.clock });
  const url = await app.listen();
  const tenant = await app.store.tenants.ensureTenant('test-tenant');
  const apiKey = await app.store.tenants.createApiKey(tenant.id);

  const api: TestOrchestrator['api'] = async (method, path, body, headers = {}) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };

  return {
    app,
    url,
    apiKey,
    tenantId: tenant.id,
    database,
    config,
    api,
    async registerAgent(agent) {
      const res = await api('POST', '/v1/agents', { name: agent.name ?? 'seller', role: agent.role ?? 'seller', protocol: agent.protocol ?? 'mcp', url: agent.url, ...(agent.webhook_signing ? { webhook_signing: agent.webhook_signing } : {}) });
      if (res.status !== 201) throw new Error(`agent registration failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    },
    async close() {
      await app.close();
      if (!opts.keepDatabase) await database.drop();
    },
  };
}

/** Waits until `check` returns a value (not undefined), polling the API rather than sleeping a fixed time. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Polls GET /v1/operations/:id until the status is one of `statuses`. */
export async function waitForStatus(orch: TestOrchestrator, id: string, statuses: string[], timeoutMs = 20_000): Promise<any> {
  return eventually(async () => {
    const res = await orch.api('GET', `/v1/operations/${id}`);
    return statuses.includes(res.body?.status) ? res.body : undefined;
  }, timeoutMs);
}
