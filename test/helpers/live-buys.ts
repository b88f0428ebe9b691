/**
 * Live media buys against a real sandbox seller over loopback: the seller with
 * its flight clock stopped (tests drive each period with its hooks, so nothing
 * moves by itself), an orchestrator whose clock allows the sandbox's compressed
 * flights, and a buy bought through POST /v1/media-buys, awaited until its record
 * exists. Polls of the API, never sleeps.
 */
import { createHmac } from 'node:crypto';
import { startSandboxSeller, type SandboxSeller, type SandboxSellerOptions } from '../../src/sandbox/seller.js';
import { eventually, startOrchestrator, waitForStatus, type TestOrchestrator } from './orchestrator.js';
import type { TestDatabase } from './databases.js';

const HOUR = 3_600_000;

export interface LiveBuyStack {
  seller: SandboxSeller;
  orch: TestOrchestrator;
  agentId: string;
  close(): Promise<void>;
}

export const LIVE_BUY_ENV: Record<string, string> = {
  // The sandbox's periods run ahead of the wall clock (a compressed flight).
  ADCP_ORCH_REPORT_CLOCK_SKEW_MS: String(366 * 86_400_000),
  // Long enough that no timer fires by itself in a test that does not ask for it.
  ADCP_ORCH_REPORT_GRACE_MS: String(HOUR),
  ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: String(HOUR),
};

export async function startLiveBuyStack(opts: { seller?: SandboxSellerOptions; env?: Record<string, string>; database?: TestDatabase } = {}): Promise<LiveBuyStack> {
  // Hourly periods over a flight of four hours and a little: five periods, the last a short one.
  const seller = await startSandboxSeller({ reportClock: false, statusStepMs: 0, flightPeriods: 8, ...opts.seller });
  let orch: TestOrchestrator;
  try {
    orch = await startOrchestrator({ env: { ...LIVE_BUY_ENV, ...opts.env }, ...(opts.database ? { database: opts.database } : {}) });
  } catch (err) {
    await seller.close();
    throw err;
  }
  const agentId = await orch.registerAgent({ url: seller.url, webhook_signing: { jwks_uri: seller.jwksUrl } });
  return {
    seller,
    orch,
    agentId,
    close: async () => {
      await orch.close();
      await seller.close();
    },
  };
}

/** A create_media_buy over a 4-hour flight from now, one package per product. */
export function liveBuyRequest(products: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    account: { account_id: 'acc_live' },
    brand: { domain: 'brand.example' },
    start_time: 'asap',
    end_time: new Date(Date.now() + 4 * HOUR).toISOString(),
    packages: products.map((product_id) => ({ product_id, pricing_option_id: 'cpm_usd_fixed', budget: 4000 })),
    ...extra,
  };
}

/** Buys through the API and waits for the buy's record; returns the buy as GET /v1/media-buys/:id shows it. */
export async function buyLive(orch: TestOrchestrator, agentId: string, body: Record<string, unknown> = {}, products = ['sandbox_instant']): Promise<any> {
  const created = await orch.api('POST', '/v1/media-buys', { agent_id: agentId, request: liveBuyRequest(products), reporting: { frequency: 'hourly' }, ...body });
  if (created.status !== 202) throw new Error(`buy refused: ${created.status} ${JSON.stringify(created.body)}`);
  await waitForStatus(orch, created.body.id, ['completed']);
  return buyOf(orch, created.body.id);
}

/** The buy a create_media_buy operation made, once it exists. */
export async function buyOf(orch: TestOrchestrator, operationId: string): Promise<any> {
  return eventually(async () => {
    const list = await orch.api('GET', '/v1/media-buys?limit=500');
    const found = list.body.media_buys.find((b: any) => b.operation_id === operationId);
    return found ? (await orch.api('GET', `/v1/media-buys/${found.id}`)).body : undefined;
  });
}

/** GET /v1/media-buys/:id once `check` holds for it. */
export async function buyWhen(orch: TestOrchestrator, id: string, check: (buy: any) => boolean, timeoutMs = 20_000): Promise<any> {
  return eventually(async () => {
    const buy = (await orch.api('GET', `/v1/media-buys/${id}`)).body;
    return check(buy) ? buy : undefined;
  }, timeoutMs);
}

/**
 * The buy once nothing of it is due soon (its status read after a report or its creation
 * has been made): a state that stays put until the test moves it. `headers` reads as another key.
 */
export async function settledBuy(orch: TestOrchestrator, id: string, headers: Record<string, string> = {}): Promise<any> {
  return eventually(async () => {
    const buy = (await orch.api('GET', `/v1/media-buys/${id}`, undefined, headers)).body;
    return buy.next_check_at === null || Date.parse(buy.next_check_at) > Date.now() + 60_000 ? buy : undefined;
  });
}

/** A Prometheus counter's value (0 when absent). */
export async function metric(orch: TestOrchestrator, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${orch.url}/metrics`)).text();
  const want = Object.entries(labels);
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`adcp_orch_${name}`)) continue;
    const m = /^(\w+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (!m || m[1] !== `adcp_orch_${name}`) continue;
    if (want.every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`))) total += Number(m[3]);
  }
  return total;
}

/** The `media_buy.*` notifications of type `type` written for this buy (from the outbox itself). */
export async function buyNotifications(orch: TestOrchestrator, buyId: string, type: string): Promise<any[]> {
  const rows = await orch.app.store.db.kysely.selectFrom('notifications').select(['type', 'body']).where('type', '=', type).orderBy('seq').execute();
  return rows.map((r) => JSON.parse(r.body)).filter((b) => b.data?.media_buy?.id === buyId);
}

/** The seller's calls of one tool naming this buy. */
export function sellerCalls(seller: SandboxSeller, tool: string, mediaBuyId: string): Array<Record<string, unknown>> {
  return seller
    .stats()
    .calls.filter((c) => c.tool === tool && (c.args.media_buy_id === mediaBuyId || (Array.isArray(c.args.media_buy_ids) && c.args.media_buy_ids.includes(mediaBuyId))))
    .map((c) => c.args);
}

/** What a seller needs to fire at a buy by hand: its reporting URL and HMAC secret (opened from the store). */
export async function reportingChannel(orch: TestOrchestrator, buyId: string): Promise<{ url: string; secret: string }> {
  const row = (await orch.app.store.mediaBuys.get(buyId))!;
  return { url: `${orch.url}/webhooks/adcp/reporting/${row.reporting_token}`, secret: JSON.parse(orch.app.secrets.open(row.reporting_secret_enc!)) as string };
}

/** POSTs `body` (a string, sent as is) HMAC-signed with `secret`, as a seller's fire. */
export async function postSigned(url: string, secret: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const ts = String(Math.floor(Date.now() / 1000));
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-adcp-timestamp': ts,
      'x-adcp-signature': `sha256=${createHmac('sha256', secret).update(`${ts}.`).update(body).digest('hex')}`,
      ...headers,
    },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** A 3.0 bare report body for one buy (`fields` over the defaults: one period ending now, spend 10). */
export function bareFire(mediaBuyId: string, fields: Record<string, unknown> = {}, row: Record<string, unknown> = {}): Record<string, unknown> {
  const end = Date.now();
  return {
    notification_type: 'scheduled',
    sequence_number: 1,
    reporting_period: { start: new Date(end - 60_000).toISOString(), end: new Date(end).toISOString() },
    currency: 'USD',
    media_buy_deliveries: [{ media_buy_id: mediaBuyId, status: 'active', totals: { impressions: 1000, spend: 10 }, by_package: [], ...row }],
    ...fields,
  };
}
