/**
 * The sandbox GOVERNANCE agent: an AdCP campaign-governance agent on loopback
 * HTTP, the counterpart a buyer checks every spend with. State lives in
 * memory, like the sandbox seller's.
 *
 * Routes:
 *   POST /mcp                                     MCP streamable HTTP (stateless, JSON replies)
 *   POST /a2a, GET /.well-known/agent-card.json   A2A (SDK adapter)
 *   GET  /.well-known/jwks.json                   the key its governance_context tokens are signed with
 *   GET  /healthz
 *
 * Its agent URL (the tokens' `iss`) is the MCP endpoint, `<origin>/mcp`; the
 * JWKS sits at the origin's default discovery path.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import type { NodeHandler } from '../a2a.js';
import { createGovernanceA2AHandler } from './a2a.js';
import { newUnusedStateStore } from '../adcp-server.js';
import { McpEndpoint, readJsonRpc, sendJson } from '../http.js';
import { GovernanceCore } from './core.js';
import { buildGovernanceServer, GOVERNANCE_SKILLS } from './server.js';
import type { GovernanceJwks } from './signing.js';
import type { DeliveryRecord } from './delivery-ledger.js';
import type { GovernanceStats } from './stats.js';

export type { GovernanceStats, CheckStat, OutcomeStat, ReviewStat } from './stats.js';
export type { GovernanceJwks, GovernanceJwk } from './signing.js';
export type { DeliveryRecord } from './delivery-ledger.js';

/** The spec's ceiling for an intent approval. */
export const MAX_APPROVAL_TTL_SECONDS = 900;
export const DEFAULT_REVIEW_DELAY_MS = 3000;

export interface SandboxGovernanceOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Lifetime of an approval's token and `expires_at`, 1–900 s. Default 900. */
  approvalTtlSeconds?: number;
  /** A human review approves (or denies, if a rule is broken) by itself after this long; null: only sandbox_review ends it. Default 3000. */
  reviewDelayMs?: number | null;
  /** When set, /mcp and /a2a require `Authorization: Bearer <authToken>`. */
  authToken?: string;
  /** Serve A2A as well. Default true. */
  a2a?: boolean;
  /** Clock (epoch ms) for decisions and token times; tests may move it. Default Date.now. */
  now?: () => number;
}

export interface SandboxGovernance {
  /** MCP endpoint and agent URL (the tokens' `iss`), e.g. http://127.0.0.1:40125/mcp */
  url: string;
  a2aUrl?: string;
  origin: string;
  /** <origin>/.well-known/jwks.json */
  jwksUrl: string;
  jwks: GovernanceJwks;
  stats(): GovernanceStats;
  /**
   * The delivery ledger (copies): every delivery outcome recorded, optionally
   * for one plan, in arrival order; a report replaced by a later one for the
   * same buy and period carries `superseded_by`. Replays never appear.
   */
  deliveries(planId?: string): DeliveryRecord[];
  /** End a pending human review now, as sandbox_review does. */
  resolveReview(taskId: string, decision: 'approved' | 'denied', reason?: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Options from the environment, for `serve --sandbox` and processes started
 * by tests: SANDBOX_GOVERNANCE_APPROVAL_TTL_SECONDS (1–900),
 * SANDBOX_GOVERNANCE_REVIEW_DELAY_MS (ms, or `never`).
 */
export function governanceOptionsFromEnv(env: NodeJS.ProcessEnv): SandboxGovernanceOptions {
  const opts: SandboxGovernanceOptions = {};
  const ttl = env.SANDBOX_GOVERNANCE_APPROVAL_TTL_SECONDS;
  if (ttl !== undefined && ttl !== '') opts.approvalTtlSeconds = Number(ttl);
  const delay = env.SANDBOX_GOVERNANCE_REVIEW_DELAY_MS;
  if (delay === 'never') opts.reviewDelayMs = null;
  else if (delay !== undefined && delay !== '') opts.reviewDelayMs = Number(delay);
  return opts;
}

export async function startSandboxGovernance(opts: SandboxGovernanceOptions = {}): Promise<SandboxGovernance> {
  const approvalTtlSeconds = opts.approvalTtlSeconds ?? MAX_APPROVAL_TTL_SECONDS;
  if (!Number.isInteger(approvalTtlSeconds) || approvalTtlSeconds < 1 || approvalTtlSeconds > MAX_APPROVAL_TTL_SECONDS) {
    throw new Error(`approvalTtlSeconds must be an integer from 1 to ${MAX_APPROVAL_TTL_SECONDS}, got ${approvalTtlSeconds}`);
  }
  const reviewDelayMs = opts.reviewDelayMs === undefined ? DEFAULT_REVIEW_DELAY_MS : opts.reviewDelayMs;
  if (reviewDelayMs !== null && (!Number.isInteger(reviewDelayMs) || reviewDelayMs < 0)) {
    throw new Error(`reviewDelayMs must be a non-negative integer or null, got ${reviewDelayMs}`);
  }
  const host = opts.host ?? '127.0.0.1';
  const authorized = (req: IncomingMessage): boolean => {
    if (!opts.authToken) return true;
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (!m) return false;
    const a = Buffer.from(m[1]!.trim());
    const b = Buffer.from(opts.authToken);
    return a.length === b.length && timingSafeEqual(a, b);
  };

  // The core needs the agent URL (its tokens' issuer), known once listening.
  let core: GovernanceCore | undefined;
  let mcp: McpEndpoint | undefined;
  let a2aHandler: NodeHandler | undefined;
  const server: Server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error', detail: String(err) });
      else res.end();
    });
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://sandbox').pathname;
    if (path === '/.well-known/jwks.json' && req.method === 'GET') {
      res.setHeader('cache-control', 'max-age=60');
      return sendJson(res, 200, core!.signer.jwks);
    }
    if (path === '/healthz') return sendJson(res, 200, { ok: true });
    if (path === '/mcp' || path === '/mcp/') {
      if (!authorized(req)) return unauthorized(res);
      const body = await readJsonRpc(req, res);
      if (body) await mcp!.handle(req, res, body.parsed);
      return;
    }
    if (a2aHandler && (path === '/a2a' || path.startsWith('/a2a/') || path === '/.well-known/agent-card.json')) {
      if (!path.endsWith('/.well-known/agent-card.json') && !authorized(req)) return unauthorized(res);
      a2aHandler(req, res);
      return;
    }
    sendJson(res, 404, { error: 'not found' });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const url = `${origin}/mcp`;
  const ready = new GovernanceCore(url, { approvalTtlSeconds, reviewDelayMs, now: opts.now ?? Date.now });
  core = ready;
  const stateStore = newUnusedStateStore();
  mcp = new McpEndpoint(() => buildGovernanceServer(ready, stateStore));
  const a2aUrl = opts.a2a === false ? undefined : `${origin}/a2a`;
  if (a2aUrl) {
    a2aHandler = await createGovernanceA2AHandler(buildGovernanceServer(ready, stateStore), a2aUrl, GOVERNANCE_SKILLS);
  }

  let closed: Promise<void> | undefined;
  return {
    url,
    ...(a2aUrl && { a2aUrl }),
    origin,
    jwksUrl: `${origin}/.well-known/jwks.json`,
    jwks: ready.signer.jwks,
    stats: () => ready.snapshot(),
    deliveries: (planId) => structuredClone(ready.deliveries.records.filter((r) => planId === undefined || r.plan_id === planId)),
    async resolveReview(taskId, decision, reason) {
      const reply = await ready.checks.resolveReview(taskId, 'tool', decision, reason);
      if (reply.isError) throw new Error(`cannot resolve review ${taskId}: ${JSON.stringify(reply.structuredContent.adcp_error)}`);
    },
    close() {
      closed ??= (async () => {
        ready.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return closed;
    },
  };
}

function unauthorized(res: ServerResponse): void {
  res.setHeader('www-authenticate', 'Bearer realm="adcp-sandbox-governance", error="invalid_token"');
  sendJson(res, 401, { error: 'unauthorized' });
}
