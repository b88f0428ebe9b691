/**
 * The mixed API load of bench/soak.ts, in its own process (so that it shares no
 * event loop with the server it measures):
 *
 *   - creates: POST /v1/media-buys with an Idempotency-Key, over a mix of sandbox
 *     products (each with a known final state) and webhook modes (RFC 9421, HMAC,
 *     none = polled); a create that meets a network error or a 5xx is sent again
 *     with the same key and body until it is answered, as a client should; a few
 *     are sent twice on purpose to check the replay;
 *   - reads: one operation by id, lists with and without a status filter;
 *   - SSE clients on /v1/events that stay for 2–20 s and drop, half of them
 *     resuming with Last-Event-ID;
 *   - POST /v1/reconcile now and then.
 *
 * stdin: {"cmd":"start", ...LoadPlan}, {"cmd":"stats"}, {"cmd":"stop"}.
 * stdout: {"stats": LoadStats} for stats, {"final": LoadStats & {accepted}} for stop.
 */
import { randomUUID } from 'node:crypto';
import { onStdinMessages, reply } from './common.js';

export interface LoadPlan {
  origin: string;
  apiKey: string;
  mcpAgentId: string;
  a2aAgentId: string;
  createsPerSecond: number;
  readsPerSecond: number;
  sseClients: number;
  reconcileEveryMs: number;
}

/** What each sandbox product ends as (src/sandbox/products.ts), and how often it is created. */
export const PRODUCT_MIX: ReadonlyArray<{ product: string; weight: number; final: string }> = [
  { product: 'sandbox_submitted', weight: 35, final: 'completed' },
  { product: 'sandbox_instant', weight: 20, final: 'completed' },
  { product: 'sandbox_working', weight: 15, final: 'completed' },
  { product: 'sandbox_input_required', weight: 5, final: 'input-required' },
  { product: 'sandbox_rejected', weight: 5, final: 'rejected' },
  { product: 'sandbox_failed', weight: 5, final: 'failed' },
  { product: 'sandbox_flaky_429', weight: 5, final: 'completed' },
  { product: 'sandbox_flaky_500', weight: 5, final: 'completed' },
  { product: 'sandbox_lost_reply', weight: 5, final: 'completed' },
];
const WEBHOOK_MIX = ['rfc9421', 'rfc9421', 'hmac', 'none'] as const;
/** The A2A seller gets a share of the simple products (the MCP-only transport faults stay on MCP). */
const A2A_PRODUCTS = new Set(['sandbox_submitted', 'sandbox_instant']);

export interface Accepted {
  id: string;
  product: string;
  webhook: string;
  protocol: 'mcp' | 'a2a';
}

export interface LoadStats {
  creates: { accepted: number; resent: number; refused: number; gaveUp: number; replayed: number; replayMismatch: number };
  reads: { ok: number; failed: number };
  sse: { connects: number; refused: number; messages: number; resumed: number };
  reconciles: { ok: number; failed: number };
  networkErrors: number;
  firstProblem?: string;
}

const stats: LoadStats = {
  creates: { accepted: 0, resent: 0, refused: 0, gaveUp: 0, replayed: 0, replayMismatch: 0 },
  reads: { ok: 0, failed: 0 },
  sse: { connects: 0, refused: 0, messages: 0, resumed: 0 },
  reconciles: { ok: 0, failed: 0 },
  networkErrors: 0,
};
const accepted: Accepted[] = [];
let stopping = false;
const inFlight = new Set<Promise<unknown>>();
const timers: NodeJS.Timeout[] = [];
const sseAborts = new Set<AbortController>();

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const problem = (text: string) => (stats.firstProblem ??= text.slice(0, 300));

function pickProduct(): (typeof PRODUCT_MIX)[number] {
  let r = Math.random() * PRODUCT_MIX.reduce((n, p) => n + p.weight, 0);
  for (const p of PRODUCT_MIX) if ((r -= p.weight) < 0) return p;
  return PRODUCT_MIX[0]!;
}

function track<T>(p: Promise<T>): void {
  inFlight.add(p);
  void p.finally(() => inFlight.delete(p));
}

/** Runs `fn` `perSecond` times a second, with at most `maxInFlight` running (a slow server is not buried). */
function every(perSecond: number, maxInFlight: number, fn: () => Promise<void>): void {
  if (perSecond <= 0) return;
  let running = 0;
  const timer = setInterval(() => {
    if (stopping || running >= maxInFlight) return;
    running++;
    track(fn().finally(() => running--));
  }, 1000 / perSecond);
  timers.push(timer);
}

async function api(plan: LoadPlan, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${plan.origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${plan.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as any) : undefined };
}

async function create(plan: LoadPlan): Promise<void> {
  const { product } = pickProduct();
  const protocol = A2A_PRODUCTS.has(product) && Math.random() < 0.2 ? 'a2a' : 'mcp';
  const webhook = pick(WEBHOOK_MIX);
  const body = {
    agent_id: protocol === 'a2a' ? plan.a2aAgentId : plan.mcpAgentId,
    webhook,
    request: {
      account: { account_id: 'acc_soak' },
      brand: { domain: 'example-brand.com' },
      start_time: 'asap',
      end_time: '2027-12-31T23:59:59Z',
      po_number: `PO-${randomUUID().slice(0, 8)}`,
      packages: [{ product_id: product, pricing_option_id: 'cpm_std', budget: 40000 }],
    },
  };
  const key = `soak-${randomUUID()}`;
  // Past a restart a reservation cut off mid-request is retried after 2 minutes
  // (IdempotencyRepo.ABANDONED_AFTER_MS): keep trying for longer than that.
  const giveUpAt = Date.now() + 180_000;
  for (let attempt = 0; Date.now() < giveUpAt; attempt++) {
    if (attempt > 0) {
      stats.creates.resent++;
      await sleep(1000 + Math.random() * 1000);
    }
    let res;
    try {
      res = await api(plan, 'POST', '/v1/media-buys', body, { 'idempotency-key': key });
    } catch {
      stats.networkErrors++; // the server is restarting: the same key again
      continue;
    }
    // 409 in_progress: the first try is still running (or was cut off by the restart).
    if (res.status >= 500 || (res.status === 409 && res.body?.error?.code === 'idempotency_key_in_progress')) continue;
    if (res.status !== 200 && res.status !== 201 && res.status !== 202) {
      stats.creates.refused++;
      problem(`create ${res.status}: ${JSON.stringify(res.body)}`);
      return;
    }
    stats.creates.accepted++;
    accepted.push({ id: res.body.id, product, webhook, protocol });
    if (Math.random() < 0.05) await replay(plan, body, key, res.body.id);
    return;
  }
  stats.creates.gaveUp++;
}

/** The same key and body again: the first answer comes back, marked as a replay. */
async function replay(plan: LoadPlan, body: unknown, key: string, id: string): Promise<void> {
  try {
    const again = await api(plan, 'POST', '/v1/media-buys', body, { 'idempotency-key': key });
    if (again.headers.get('idempotent-replayed') === 'true' && again.body?.id === id) stats.creates.replayed++;
    else {
      stats.creates.replayMismatch++;
      problem(`replay of ${id}: ${again.status} ${JSON.stringify(again.body).slice(0, 200)}`);
    }
  } catch {
    stats.networkErrors++;
  }
}

async function read(plan: LoadPlan): Promise<void> {
  const r = Math.random();
  const path =
    r < 0.6 && accepted.length > 0
      ? `/v1/operations/${pick(accepted.slice(-500)).id}`
      : r < 0.8
        ? '/v1/operations?status=submitted&limit=20'
        : '/v1/operations?limit=50';
  try {
    const res = await api(plan, 'GET', path);
    if (res.status === 200) stats.reads.ok++;
    else {
      stats.reads.failed++;
      if (res.status < 500) problem(`GET ${path}: ${res.status}`);
    }
  } catch {
    stats.networkErrors++;
  }
}

async function reconcile(plan: LoadPlan): Promise<void> {
  try {
    const res = await api(plan, 'POST', '/v1/reconcile', {});
    if (res.status === 200) stats.reconciles.ok++;
    else stats.reconciles.failed++;
  } catch {
    stats.networkErrors++;
  }
}

/** One SSE client for its whole life: connect, read for 2–20 s, drop, and again. */
async function sseClient(plan: LoadPlan): Promise<void> {
  let lastId: string | undefined;
  while (!stopping) {
    const abort = new AbortController();
    sseAborts.add(abort);
    const resume = lastId !== undefined && Math.random() < 0.5;
    const timer = setTimeout(() => abort.abort(), 2_000 + Math.random() * 18_000);
    try {
      const res = await fetch(`${plan.origin}/v1/events`, {
        headers: { authorization: `Bearer ${plan.apiKey}`, accept: 'text/event-stream', ...(resume ? { 'last-event-id': lastId! } : {}) },
        signal: abort.signal,
      });
      if (res.status !== 200) {
        stats.sse.refused++;
        await res.body?.cancel();
        await sleep(1000);
        continue;
      }
      stats.sse.connects++;
      if (resume) stats.sse.resumed++;
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const id = /^id: (.+)$/m.exec(block)?.[1];
          if (id) {
            lastId = id;
            stats.sse.messages++;
          }
        }
      }
    } catch {
      if (!abort.signal.aborted) {
        stats.networkErrors++;
        await sleep(1000);
      }
    } finally {
      clearTimeout(timer);
      sseAborts.delete(abort);
    }
  }
}

onStdinMessages(async (m: { cmd: string } & Partial<LoadPlan>) => {
  if (m.cmd === 'start') {
    const plan = m as LoadPlan;
    every(plan.createsPerSecond, 64, () => create(plan));
    every(plan.readsPerSecond, 32, () => read(plan));
    if (plan.reconcileEveryMs > 0) every(1000 / plan.reconcileEveryMs, 1, () => reconcile(plan));
    for (let i = 0; i < plan.sseClients; i++) track(sseClient(plan));
    reply({ started: true });
  } else if (m.cmd === 'stats') {
    reply({ stats });
  } else if (m.cmd === 'stop') {
    stopping = true;
    for (const t of timers) clearInterval(t);
    for (const a of sseAborts) a.abort();
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    reply({ final: { ...stats, accepted } });
  }
});
