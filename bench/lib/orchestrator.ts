/**
 * The real orchestrator (createApp from src/app.ts) on a temp SQLite file, with a
 * tenant, an API key and (optionally) a seller agent, plus fast bulk seeding of
 * operations straight into the database with better-sqlite3.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { warmResultSchemas } from '../../src/adcp/task-result.js';
import { createApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import type { OperationRow } from '../../src/store/index.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { BENCH_SECRET_KEY, tempDir } from './common.js';

export interface BenchApp {
  app: App;
  url: string;
  apiKey: string;
  tenantId: string;
  dbPath: string;
  dbUrl: string;
  config: Config;
  close(): Promise<void>;
}

export function benchEnv(dbUrl: string, port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ADCP_ORCH_DATABASE_URL: dbUrl,
    PORT: String(port),
    ADCP_ORCH_SECRET_KEY: BENCH_SECRET_KEY,
    ADCP_ORCH_ALLOW_PRIVATE_NETWORK: 'true',
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

/** createApp + listen on a random loopback port. `publicUrl: true` sets ADCP_ORCH_PUBLIC_URL to the listening address. */
export async function startBenchApp(
  opts: { dbPath?: string; env?: Record<string, string>; concurrency?: number; listen?: boolean; port?: number } = {},
): Promise<BenchApp> {
  const dbPath = opts.dbPath ?? join(tempDir(), 'orchestrator.db');
  const dbUrl = `sqlite:${dbPath}`;
  const port = opts.port ?? 0;
  const config = loadConfig(benchEnv(dbUrl, port, opts.env));
  const app = await createApp({ config, logger: createLogger(config.LOG_LEVEL), concurrency: opts.concurrency });
  const tenant = await app.store.tenants.ensureTenant('bench');
  const apiKey = await app.store.tenants.createApiKey(tenant.id);
  const url = opts.listen === false ? '' : await app.listen();
  // A server that has been up for two seconds has loaded the SDK's response schemas
  // (`serve` does it then, src/cli/commands/serve.ts); the benches measure that steady
  // state, not the one-off load landing in their first second.
  warmResultSchemas();
  return {
    app,
    url,
    apiKey,
    tenantId: tenant.id,
    dbPath,
    dbUrl,
    config,
    close: () => app.close(),
  };
}

export interface SeedSpec {
  n: number;
  tenantId: string;
  agentId: string;
  status?: string;
  /** next_check_at for row i (null: no timer). */
  nextCheckAt: (i: number) => number | null;
  checkKind?: string | null;
  webhookMode?: 'rfc9421' | 'hmac' | 'bearer' | 'none';
  /** Per-row extras (token, sealed secret, task id...). */
  row?: (i: number) => Partial<OperationRow>;
  /** Prefix of the row ids: `${idPrefix}${i}` zero-padded (sequential ids keep the primary key an append). */
  idPrefix?: string;
  /** Rows per INSERT statement. */
  chunk?: number;
}

/** The operation columns a seed writes, in the order of seedRow's values. */
export const SEED_COLUMNS: Array<keyof OperationRow> = [
  'id', 'tenant_id', 'agent_id', 'type', 'status', 'task_id', 'context_id', 'idempotency_key', 'request_body', 'result', 'error',
  'needs_input', 'input_message', 'stalled', 'stalled_reason', 'deadline_at', 'next_check_at', 'check_kind', 'poll_count', 'attempt',
  'lease_owner', 'lease_until', 'lease_epoch', 'webhook_mode', 'webhook_token', 'webhook_secret_enc', 'last_observed_at', 'created_at',
  'updated_at', 'completed_at', 'parent_id',
];

/** A create_media_buy request body of realistic size (~600 bytes). */
export function sampleRequestBody(id: string, key: string): string {
  return JSON.stringify({
    account: { account_id: 'acc_bench' },
    brand: { domain: 'example-brand.com' },
    start_time: 'asap',
    end_time: '2027-12-31T23:59:59Z',
    po_number: `PO-${id.slice(-8)}`,
    packages: [
      { product_id: 'sandbox_submitted', pricing_option_id: 'cpm_std', budget: 40000, targeting_overlay: { geo_country_any_of: ['US', 'CA'] } },
      { product_id: 'sandbox_submitted', pricing_option_id: 'cpm_std', budget: 10000 },
    ],
    idempotency_key: key,
    context: { orchestrator_operation_id: id },
  });
}

export function opId(prefix: string, i: number): string {
  return `${prefix}${String(i).padStart(8, '0')}`;
}

/** The `created` event of a seeded operation, in this column order. */
export const SEED_EVENT_COLUMNS = ['operation_id', 'tenant_id', 'at', 'source', 'kind', 'from_status', 'to_status', 'detail'];

/**
 * Row `i` of a seed: the operation's values in SEED_COLUMNS order and its `created`
 * event's in SEED_EVENT_COLUMNS order (shared by the SQLite seeder below and the
 * PostgreSQL one, bench/lib/pg-seed.ts). `seedRun` keeps idempotency keys unique across
 * seeds; they stay sequential within one, so the unique (agent_id, idempotency_key)
 * index is an append (fast bulk seeding).
 */
export function seedRow(spec: SeedSpec, i: number, now: number, seedRun: string): { id: string; op: unknown[]; event: unknown[] } {
  const id = opId(spec.idPrefix ?? 'op-bench-', i);
  const key = `${id}-${seedRun}`;
  const created = now - 60_000;
  const row = newOperationRow(
    { id, tenant_id: spec.tenantId, agent_id: spec.agentId, type: 'create_media_buy', idempotency_key: key, request_body: sampleRequestBody(id, key), created_at: created },
    {
      status: spec.status ?? 'submitted',
      task_id: `task-${id}`,
      deadline_at: created + 24 * 3_600_000,
      next_check_at: spec.nextCheckAt(i),
      check_kind: spec.checkKind === undefined ? 'poll' : spec.checkKind,
      webhook_mode: spec.webhookMode ?? 'none',
      ...spec.row?.(i),
    },
  );
  return {
    id,
    op: SEED_COLUMNS.map((c) => (row as unknown as Record<string, unknown>)[c as string]),
    event: [id, spec.tenantId, created, 'user', 'created', null, 'requested', null],
  };
}

/**
 * Inserts `n` operations (and one `created` event each) with multi-row INSERTs in
 * one transaction per 50k rows, through a separate better-sqlite3 connection
 * (the orchestrator must not be writing meanwhile). Returns rows/s.
 */
export function seedOperations(dbPath: string, spec: SeedSpec): { ids: string[]; seconds: number } {
  const started = performance.now();
  const db = new SQLite(dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 10000');
  const chunk = spec.chunk ?? 500;
  const now = Date.now();
  const placeholders = `(${SEED_COLUMNS.map(() => '?').join(',')})`;
  const evPlaceholders = `(${SEED_EVENT_COLUMNS.map(() => '?').join(',')})`;
  const stmtFor = new Map<number, { ops: SQLite.Statement; evs: SQLite.Statement }>();
  const stmts = (k: number) => {
    let s = stmtFor.get(k);
    if (!s) {
      s = {
        ops: db.prepare(`INSERT INTO operations (${SEED_COLUMNS.join(',')}) VALUES ${Array(k).fill(placeholders).join(',')}`),
        evs: db.prepare(`INSERT INTO operation_events (${SEED_EVENT_COLUMNS.join(',')}) VALUES ${Array(k).fill(evPlaceholders).join(',')}`),
      };
      stmtFor.set(k, s);
    }
    return s;
  };
  const ids: string[] = [];
  const seedRun = randomUUID();
  const insertRange = db.transaction((from: number, to: number) => {
    for (let start = from; start < to; start += chunk) {
      const k = Math.min(chunk, to - start);
      const opVals: unknown[] = [];
      const evVals: unknown[] = [];
      for (let i = start; i < start + k; i++) {
        const r = seedRow(spec, i, now, seedRun);
        ids.push(r.id);
        opVals.push(...r.op);
        evVals.push(...r.event);
      }
      const s = stmts(k);
      s.ops.run(opVals);
      s.evs.run(evVals);
    }
  });
  for (let from = 0; from < spec.n; from += 50_000) insertRange(from, Math.min(spec.n, from + 50_000));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { ids, seconds: (performance.now() - started) / 1000 };
}

/** Registers an MCP seller agent for the tenant directly in the store. */
export async function addAgent(b: BenchApp, url: string, extra: { webhookSigning?: unknown; name?: string } = {}): Promise<string> {
  const agent = await b.app.store.agents.insert({
    tenantId: b.tenantId,
    name: extra.name ?? 'bench-seller',
    role: 'seller',
    url,
    protocol: 'mcp',
    webhookSigning: extra.webhookSigning,
  });
  return agent.id;
}
