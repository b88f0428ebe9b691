/**
 * Live media buys and their reporting fires, for the reporting-ingest bench
 * (bench/reporting-ingest.ts): buys seeded straight into the database as a
 * completed create_media_buy records them (the row is built by the recorder's own
 * `buyFromOperation`, from a request carrying our HMAC reporting webhook with its
 * secret sealed in place), then fires for them as a 3.0 seller sends them (the
 * bare `get_media_buy_delivery` body with notification_type, sequence_number,
 * next_expected_at and an idempotency_key), HMAC-signed; and what the database
 * must say afterwards (every fire stored once, each buy's figures the sum of what
 * its acknowledged fires reported).
 */
import { randomBytes } from 'node:crypto';
import SQLite from 'better-sqlite3';
import { buyFromOperation } from '../../src/engine/media-buys/buy-recorder.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import type { MediaBuyRow } from '../../src/store/index.js';
import type { BenchApp } from './orchestrator.js';
import { hmacHeaders } from './webhooks.js';

const DAY = 86_400_000;
/** Fires per buy in a plan: daily periods 1..FIRES_PER_BUY of a 30-day flight that began FIRES_PER_BUY + 1 days ago. */
export const FIRES_PER_BUY = 5;
const BUDGET = 3000;

export interface SeededBuy {
  id: string;
  mediaBuyId: string;
  token: string;
  /** The HMAC secret in clear: what the seller signs with. */
  secret: string;
  flightStart: number;
}

export interface FireSpec {
  buy: SeededBuy;
  sequence: number;
  key: string;
  spend: number;
  impressions: number;
}

export const buyId = (prefix: string, i: number) => `${prefix}${String(i).padStart(8, '0')}`;

/**
 * `n` active buys of one seller, ids `${prefix}00000000…`, each with its own reporting
 * token and sealed HMAC secret, written with multi-row INSERTs through a separate
 * connection (the orchestrator must not be writing meanwhile).
 */
export function seedBuys(b: BenchApp, agentId: string, prefix: string, n: number): SeededBuy[] {
  const now = Date.now();
  const flightStart = now - (FIRES_PER_BUY + 1) * DAY;
  const tracking = { graceMs: 7_200_000, statusIntervalMs: 900_000 };
  const buys: SeededBuy[] = [];
  const rows: MediaBuyRow[] = [];
  for (let i = 0; i < n; i++) {
    const id = buyId(prefix, i);
    const buy: SeededBuy = { id, mediaBuyId: `mb_${id}`, token: randomBytes(24).toString('base64url'), secret: randomBytes(32).toString('base64url'), flightStart };
    const request = {
      account: { account_id: 'acc_bench' },
      brand: { domain: 'example-brand.com' },
      start_time: new Date(flightStart).toISOString(),
      end_time: new Date(flightStart + 30 * DAY).toISOString(),
      packages: [{ product_id: 'bench_product', pricing_option_id: 'cpm_std', budget: BUDGET }],
      reporting_webhook: {
        url: `${b.url}/webhooks/adcp/reporting/${buy.token}`,
        reporting_frequency: 'daily',
        // Sealed in place as the operation builder stores it: a seal of the secret's JSON text.
        authentication: { schemes: ['HMAC-SHA256'], credentials: { $sealed: b.app.secrets.seal(JSON.stringify(buy.secret)) } },
      },
      idempotency_key: `create-${id}`,
    };
    const op = newOperationRow(
      { id: `op-${id}`, tenant_id: b.tenantId, agent_id: agentId, type: 'create_media_buy', idempotency_key: `create-${id}`, request_body: JSON.stringify(request), created_at: now - 60_000 },
      { status: 'completed', reporting_token: buy.token },
    );
    const result = { media_buy_id: buy.mediaBuyId, status: 'active', packages: [{ package_id: 'pkg_1', product_id: 'bench_product', budget: BUDGET }] };
    const { row } = buyFromOperation(op, result, buy.mediaBuyId, tracking, now, Math.random);
    rows.push({ ...row, id });
    buys.push(buy);
  }
  insertRows(b.dbPath, 'media_buys', rows as unknown as Record<string, unknown>[]);
  return buys;
}

function insertRows(dbPath: string, table: string, rows: Record<string, unknown>[], chunk = 200): void {
  if (rows.length === 0) return;
  const db = new SQLite(dbPath);
  db.pragma('busy_timeout = 10000');
  const columns = Object.keys(rows[0]!);
  const one = `(${columns.map(() => '?').join(',')})`;
  const statements = new Map<number, SQLite.Statement>();
  const stmt = (k: number) => {
    let s = statements.get(k);
    if (!s) statements.set(k, (s = db.prepare(`INSERT INTO ${table} (${columns.join(',')}) VALUES ${Array(k).fill(one).join(',')}`)));
    return s;
  };
  db.transaction(() => {
    for (let i = 0; i < rows.length; i += chunk) {
      const part = rows.slice(i, i + chunk);
      stmt(part.length).run(part.flatMap((r) => columns.map((c) => r[c])));
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/**
 * The fires of a plan: buys in blocks of `block`; within a block each sequence goes to
 * every buy before the next, so two fires for one buy are `block` requests apart (never
 * in flight together, and in sequence order) and any prefix has the same mix.
 * Spend per period: the budget over 30 days, with a deterministic wobble.
 */
export function firePlan(buys: SeededBuy[], block = 200): FireSpec[] {
  const out: FireSpec[] = [];
  for (let b = 0; b < buys.length; b += block) {
    const group = buys.slice(b, b + block);
    for (let sequence = 1; sequence <= FIRES_PER_BUY; sequence++) {
      for (const [j, buy] of group.entries()) {
        const spend = Math.round((BUDGET / 30) * (0.95 + ((j * 7 + sequence * 13) % 11) / 100) * 100) / 100;
        out.push({ buy, sequence, key: `fire-${buy.id}-${sequence}-${randomBytes(4).toString('hex')}`, spend, impressions: Math.round(spend * 100) });
      }
    }
  }
  return out;
}

/** The body a 3.0 seller sends for one daily period of one buy. */
export function fireBody(f: FireSpec): string {
  const start = f.buy.flightStart + (f.sequence - 1) * DAY;
  return JSON.stringify({
    idempotency_key: f.key,
    notification_type: 'scheduled',
    sequence_number: f.sequence,
    next_expected_at: new Date(Date.now() + DAY).toISOString(),
    reporting_period: { start: new Date(start).toISOString(), end: new Date(start + DAY).toISOString() },
    currency: 'USD',
    media_buy_deliveries: [
      {
        media_buy_id: f.buy.mediaBuyId,
        status: 'active',
        pricing_model: 'cpm',
        totals: { impressions: f.impressions, spend: f.spend, clicks: Math.round(f.impressions / 500) },
        by_package: [{ package_id: 'pkg_1', spend: f.spend, impressions: f.impressions, pricing_model: 'cpm', rate: 10, currency: 'USD', pacing_index: 1, delivery_status: 'delivering' }],
      },
    ],
  });
}

export interface FireChecks {
  /** Fires stored applied / still only received. */
  applied: number;
  received: number;
  /** Stored fires and their distinct (sender, idempotency_key). */
  rows: number;
  keys: number;
  /** Period reports stored for the buys, and those not superseded. */
  reports: number;
  /** Buys whose spend, impressions, report count or last sequence differ from what their stored fires said. */
  wrongBuys: number;
  /** Σ buys' spend, and Σ spend of the stored fires' rows. */
  buySpend: number;
  fireSpend: number;
}

/**
 * What the database says about the fires to buys under `prefix`: each stored fire is
 * read back from its stored payload, and each buy must hold exactly what its fires
 * reported (spend and impressions summed, one report per fire, the last sequence).
 */
export function checkFires(dbPath: string, prefix: string): FireChecks {
  const db = new SQLite(dbPath, { readonly: true });
  try {
    const like = `${prefix}%`;
    const count = (q: string) => db.prepare(q).pluck().get(like) as number;
    const fires = db.prepare(`SELECT buy_id, payload FROM reporting_fires WHERE buy_id LIKE ?`).all(like) as Array<{ buy_id: string; payload: string }>;
    const expected = new Map<string, { spend: number; impressions: number; n: number; last: number }>();
    let fireSpend = 0;
    for (const f of fires) {
      const body = JSON.parse(f.payload) as { sequence_number: number; media_buy_deliveries: Array<{ totals: { spend: number; impressions: number } }> };
      const t = body.media_buy_deliveries[0]!.totals;
      const e = expected.get(f.buy_id) ?? { spend: 0, impressions: 0, n: 0, last: 0 };
      expected.set(f.buy_id, { spend: e.spend + t.spend, impressions: e.impressions + t.impressions, n: e.n + 1, last: Math.max(e.last, body.sequence_number) });
      fireSpend += t.spend;
    }
    const buys = db.prepare(`SELECT id, spend, impressions, reports_received, last_sequence FROM media_buys WHERE id LIKE ?`).all(like) as Array<{
      id: string;
      spend: number;
      impressions: number;
      reports_received: number;
      last_sequence: number | null;
    }>;
    let wrongBuys = 0;
    let buySpend = 0;
    for (const b of buys) {
      buySpend += b.spend;
      const e = expected.get(b.id) ?? { spend: 0, impressions: 0, n: 0, last: 0 };
      const right = Math.round(b.spend * 100) === Math.round(e.spend * 100) && b.impressions === e.impressions && b.reports_received === e.n && (b.last_sequence ?? 0) === e.last;
      if (!right) wrongBuys++;
    }
    return {
      applied: count(`SELECT count(*) FROM reporting_fires WHERE state = 'applied' AND buy_id LIKE ?`),
      received: count(`SELECT count(*) FROM reporting_fires WHERE state = 'received' AND buy_id LIKE ?`),
      rows: fires.length,
      keys: count(`SELECT count(DISTINCT sender || ' ' || idempotency_key) FROM reporting_fires WHERE buy_id LIKE ?`),
      reports: count(`SELECT count(*) FROM media_buy_reports WHERE kind = 'period' AND superseded_by IS NULL AND buy_id LIKE ?`),
      wrongBuys,
      buySpend,
      fireSpend,
    };
  } finally {
    db.close();
  }
}

/** The plan's fires as load-generator requests (one JSON line each), HMAC-signed as the seller signs them. */
export function fireRequests(buys: SeededBuy[]): string {
  return firePlan(buys)
    .map((f) => {
      const body = fireBody(f);
      return JSON.stringify({ path: `/webhooks/adcp/reporting/${f.buy.token}`, headers: hmacHeaders(f.buy.secret, body), body });
    })
    .join('\n');
}
