/**
 * The sandbox SELLER agent: an AdCP seller on loopback HTTP that scripts the
 * async behaviours a buyer-side orchestrator must survive (see products.ts),
 * and lets the buys it makes live a compressed flight that reports delivery
 * to the buyer's reporting_webhook (live-buys.ts; test hooks on
 * `seller.reporting`, live-buy-hooks.ts; docs/SANDBOX.md).
 *
 * Routes:
 *   POST /mcp                      MCP streamable HTTP (stateless, JSON replies)
 *   POST /a2a, GET /.well-known/agent-card.json   A2A (SDK adapter)
 *   GET  /.well-known/jwks.json    public key for RFC 9421 webhook signatures
 *   GET  /healthz
 *
 * We run our own node:http server instead of the SDK's serve() because we
 * need a chosen host (127.0.0.1, port 0), extra routes (JWKS, A2A) and a hook
 * before MCP dispatch for transport faults (HTTP 500, lost replies).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { createA2AHandler, type NodeHandler } from './a2a.js';
import { GovernanceGate, type SellerGovernanceOptions } from './governance-gate.js';
import { GovernanceRegistry, type GovernanceRegistryHooks } from './governance-registry.js';
import { McpEndpoint, readJsonRpc, sendJson } from './http.js';
import { SignedRequests, type SignatureHooks, type SignedRequestsOptions } from './signed-requests.js';
import { buildAdcpServer, newUnusedStateStore, onWire, type SellerSurface, type ToolCaller } from './adcp-server.js';
import { assertCapabilities31 } from './capabilities.js';
import { servedVersion, type SellerVersion } from './versions.js';
import { SellerCore, type BehindBackTask } from './core.js';
import { reportingHooks, type ReportingHooks } from './live-buy-hooks.js';
import { LiveBuys, resolveLiveBuyOptions, type LiveBuyOptions } from './live-buys.js';
import type { BookedMediaBuy } from './media-buy-book.js';
import type { LibraryCreative } from './creative-library.js';
import { Notifier, type DeliveryContent } from './notifications.js';
import { Reporter } from './reporting.js';
import { mintWebhookSigningIdentity, type PublicJwks } from './signing-key.js';
import { StatsRecorder, type SellerStats } from './stats.js';
import { runInRequestSpan } from './request-span.js';
import { HeldReplies } from './held-replies.js';
import type { ReplayDeclaration } from './idempotency.js';
import type { SandboxTask, TaskError, TaskStatus } from './tasks.js';
import { createSdkWebhookSender, type WebhookRetryPolicy, type WebhookSender } from './webhook-sender.js';
import { isPlainObject } from './wire.js';

export { SANDBOX_PRODUCTS, SANDBOX_PRODUCT_IDS, SANDBOX_PRICING_OPTION_ID } from './products.js';
export type { SandboxProductId } from './products.js';
export type { SellerStats, PollRecord, WebhookRecord, CreateRequestRecord, CallRecord, ContinuationRecord } from './stats.js';
export type { BookedMediaBuy, BookedPackage, DeliveredPeriod, HistoryEntry, MediaBuyStatus } from './media-buy-book.js';
export type { LiveBuyOptions } from './live-buys.js';
export type { ReportingHooks } from './live-buy-hooks.js';
export type { LibraryCreative, LibraryStatus } from './creative-library.js';
export { SANDBOX_REJECTION_REASON } from './creative-library.js';
export type { FireRecord } from './reporting.js';
export type { ReportBodyStyle } from './report-body.js';
export type { WebhookSender, WebhookDelivery, WebhookDeliveryResult } from './webhook-sender.js';
export type { BehindBackTask } from './core.js';
export type { ReplayDeclaration } from './idempotency.js';
export type { DeliveryContent } from './notifications.js';
export type { PublicJwks } from './signing-key.js';
export type { SellerGovernanceOptions, GovernanceRefusal } from './governance-gate.js';
export { GOVERNED_ACCOUNT_PREFIX } from './governance-gate.js';

/** The flight clock's options (reportIntervalMs, flightPeriods, statusStepMs, reportClock, reportBodyStyle) and creativeReviewMs are in live-buys.ts. */
export interface SandboxSellerOptions extends LiveBuyOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** sandbox_submitted completes after this long. Default 3000. */
  submittedDelayMs?: number;
  /** sandbox_working completes after this long. Default 1500. */
  workingDelayMs?: number;
  /** When set, /mcp and /a2a require `Authorization: Bearer <authToken>`. */
  authToken?: string;
  /** Replace the webhook transport (default: the SDK emitter, signing as described in webhook-sender.ts). */
  webhookSigner?: WebhookSender;
  /** Retry policy of the default webhook sender. Default 5 attempts, 500 ms doubling, 8 s cap. */
  webhookRetry?: WebhookRetryPolicy;
  /** Lose webhooks: all (true) or those whose 1-based delivery number n makes this return true. */
  dropWebhooks?: boolean | ((n: number) => boolean);
  /** Deliver every webhook twice with the same idempotency_key. */
  duplicateWebhooks?: boolean;
  /** Calls per idempotency_key that sandbox_flaky_429 / sandbox_flaky_500 fail first. Default 2. */
  flakyFailures?: number;
  /** Serve A2A as well. Default true. */
  a2a?: boolean;
  /** A2A requires the AdCP A2A profile v3: a request that does not activate it is refused (sandbox/a2a-profile.ts). */
  a2aRequireProfile?: boolean;
  /**
   * Sees the raw body of every MCP POST before it is handled, so a test can compare
   * the exact bytes a buyer sent. A promise holds the request until it settles (a
   * test stages a buyer crash mid-call); 'drop' then closes the connection unanswered.
   */
  onMcpRequest?: (rawBody: string) => void | 'drop' | Promise<void | 'drop'>;
  /**
   * sandbox_auth_required stops asking once a call (or an A2A answer) carries
   * `Authorization: Bearer <freshToken>`: the buyer refreshed its credentials.
   */
  freshToken?: string;
  /**
   * The governance agent whose tokens this seller accepts. Buys for governed
   * accounts (account_id `gov_…`) need its governance_context (governance-gate.ts).
   */
  governance?: SellerGovernanceOptions;
  /**
   * What `get_adcp_capabilities` declares of replay protection, kept to by the seller:
   * a `replay_ttl_seconds` window (3600–604800; default 86400), or `{supported: false}`
   * (every call runs again, a resend under the same key included; tests only).
   */
  idempotency?: ReplayDeclaration;
  /**
   * The AdCP version the seller speaks (default 3.0: as it always was). A 3.1 seller
   * declares `supported_versions: ["3.0", "3.1"]`, serves each call in the release it
   * pins (versions.ts), checks 3.1 requests and replies against the 3.1.19 schemas
   * (replies-31.ts), sends 3.1 webhooks and, unless `reportBodyStyle` says otherwise,
   * reports in the 3.1 envelope. See docs/SANDBOX.md, "The 3.1 seller".
   */
  adcpVersion?: SellerVersion;
  /** A 3.1 seller also answers the 3.0 task tools (`tasks/get`, `tasks_get`, `tasks/list`). Default false. */
  legacyTaskTools?: boolean;
  /**
   * `media_buy.governance_aware` in its capabilities (a 3.1 seller declares false unless set);
   * `true` also serves `sync_governance` (governance-registry.ts).
   */
  governanceAware?: boolean;
  /**
   * Require signed requests (RFC 9421, signed-requests.ts): `request_signing` declared in its
   * capabilities (create_media_buy and update_media_buy in `required_for` by default), and
   * every POST verified against the buyer's JWKS at `jwksUrl` before it is handled.
   */
  requireSignedRequests?: SignedRequestsOptions;
}

export interface CreativeHooks {
  /** The creatives the seller holds (copies), optionally of one account. */
  list(accountId?: string): LibraryCreative[];
  /** Decides a creative's review now (default reason for a rejection: the sandbox's own). */
  review(creativeId: string, verdict: 'approved' | 'rejected', opts?: { accountId?: string; reason?: string }): void;
}

export interface SandboxSeller {
  /** MCP endpoint, e.g. http://127.0.0.1:40123/mcp */
  url: string;
  /** A2A JSON-RPC endpoint (agent card at <origin>/.well-known/agent-card.json). */
  a2aUrl?: string;
  /** e.g. http://127.0.0.1:40123 */
  origin: string;
  /** <origin>/.well-known/jwks.json — register the seller with webhook_signing: { jwks_uri }. */
  jwksUrl: string;
  /** The public JWKS (one Ed25519 key, adcp_use "webhook-signing"). */
  jwks: PublicJwks;
  /** Stops listening, cancels pending task timers, waits for in-flight webhooks. */
  close(): Promise<void>;
  stats(): SellerStats;
  /** The media buys this seller has on its book (copies): status, revision, history, flight, delivered periods. */
  mediaBuys(): BookedMediaBuy[];
  /** Test hooks on live buys and their delivery reports (live-buy-hooks.ts). */
  reporting: ReportingHooks;
  /** The creatives synced to this seller (copies), and a hook that decides a review at once. */
  creatives: CreativeHooks;
  /** A copy of the seller's record of a task. */
  getTask(taskId: string): SandboxTask | undefined;
  /** Force a task to completed now (result defaults to a freshly built media buy). Webhook fires. */
  completeTask(taskId: string, result?: object): void;
  /** Force any status change; false if the task had already ended (terminal is absorbing). */
  setTaskStatus(
    taskId: string,
    status: TaskStatus,
    patch?: { message?: string; result?: Record<string, unknown>; error?: TaskError },
  ): boolean;
  /** Make a task the buyer never heard of (an orphan for list_tasks reconciliation). Returns its task_id. */
  createTaskBehindBuyersBack(opts?: BehindBackTask): string;
  /** Send an extra webhook for a task, e.g. a stale `working` after `completed` (out of order). */
  sendWebhook(taskId: string, content: DeliveryContent): void;
  /** Resolves when no webhook delivery (including retries) is in flight. */
  webhooksSettled(): Promise<void>;
  /** sandbox_held_reply calls whose reply is being held now. */
  heldReplies(): number;
  /** Ends every held reply: sent as the real reply (default) or as an HTTP 500. Returns how many. */
  releaseHeldReplies(as?: 'reply' | 'error'): number;
  /** With `requireSignedRequests`: what the seller made of each request's signature. */
  requestSignatures?: SignatureHooks;
  /** A governance-aware seller's registrations (sync_governance): what arrived, and a hook to refuse an account's. */
  governanceSyncs?: GovernanceRegistryHooks;
}

/**
 * `serve --sandbox`'s seller timings from the environment: SANDBOX_SUBMITTED_DELAY_MS and
 * SANDBOX_WORKING_DELAY_MS (how long a submitted or working task takes to complete), so a
 * person or a test can hold a task in that state, and SANDBOX_CREATIVE_REVIEW_MS (how long a
 * creative waits for its review). Bad values are refused, not guessed at.
 */
export function sellerOptionsFromEnv(env: NodeJS.ProcessEnv): Pick<SandboxSellerOptions, 'submittedDelayMs' | 'workingDelayMs' | 'creativeReviewMs'> {
  const opts: Pick<SandboxSellerOptions, 'submittedDelayMs' | 'workingDelayMs' | 'creativeReviewMs'> = {};
  const read = (name: string): number | undefined => {
    const text = env[name];
    if (text === undefined || text === '') return undefined;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0 || n > 86_400_000) throw new Error(`${name} must be a whole number of milliseconds from 0 to 86400000, got ${JSON.stringify(text)}`);
    return n;
  };
  const submitted = read('SANDBOX_SUBMITTED_DELAY_MS');
  const working = read('SANDBOX_WORKING_DELAY_MS');
  if (submitted !== undefined) opts.submittedDelayMs = submitted;
  if (working !== undefined) opts.workingDelayMs = working;
  const review = read('SANDBOX_CREATIVE_REVIEW_MS');
  if (review !== undefined) opts.creativeReviewMs = review;
  return opts;
}

export async function startSandboxSeller(opts: SandboxSellerOptions = {}): Promise<SandboxSeller> {
  const host = opts.host ?? '127.0.0.1';
  const version: SellerVersion = opts.adcpVersion ?? '3.0';
  const identity = mintWebhookSigningIdentity();
  const stats = new StatsRecorder();
  const sender = opts.webhookSigner ?? createSdkWebhookSender(identity.signerKey, opts.webhookRetry);
  // Badly signed RFC 9421 fires are signed with a key the buyer never saw; made on first use.
  let forger: WebhookSender | undefined;
  const reporter = new Reporter(
    sender,
    () => {
      if (opts.webhookSigner) throw new Error('a badly signed RFC 9421 fire needs the default webhook sender');
      return (forger ??= createSdkWebhookSender(mintWebhookSigningIdentity().signerKey, opts.webhookRetry));
    },
    opts.reportBodyStyle ?? (version === '3.1' ? 'envelope' : 'bare'),
    version,
  );
  const live = new LiveBuys(resolveLiveBuyOptions(opts), reporter);
  const notifier = new Notifier(
    sender,
    stats,
    {
      ...(opts.dropWebhooks !== undefined && { dropWebhooks: opts.dropWebhooks }),
      ...(opts.duplicateWebhooks !== undefined && { duplicateWebhooks: opts.duplicateWebhooks }),
    },
  );
  let origin = '';
  let mcpUrl = '';
  let a2aUrl: string | undefined;
  const gate = new GovernanceGate(opts.governance, () => [mcpUrl, ...(a2aUrl ? [a2aUrl] : [])]);
  const core = new SellerCore(
    {
      submittedDelayMs: opts.submittedDelayMs ?? 3000,
      workingDelayMs: opts.workingDelayMs ?? 1500,
      flakyFailures: opts.flakyFailures ?? 2,
      ...(opts.freshToken !== undefined && { freshToken: opts.freshToken }),
      ...(opts.idempotency && { replay: opts.idempotency }),
      adcpVersion: version,
    },
    notifier,
    stats,
    live,
    gate,
  );

  // One credential, one idempotency scope. The sandbox is single-tenant.
  const stateStore = newUnusedStateStore();
  const caller: ToolCaller = { principal: opts.authToken ? 'bearer' : 'anonymous' };
  const authorized = (req: IncomingMessage): boolean => {
    if (!opts.authToken) return true;
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(.+)$/i.exec(header);
    if (!m) return false;
    const a = Buffer.from(m[1]!.trim());
    const b = Buffer.from(opts.authToken);
    return a.length === b.length && timingSafeEqual(a, b);
  };

  const held = new HeldReplies();
  const signatures = opts.requireSignedRequests ? new SignedRequests(opts.requireSignedRequests) : undefined;
  const surface: SellerSurface = {
    version,
    legacyTaskTools: version === '3.0' || opts.legacyTaskTools === true,
    ...(signatures && { requestSigning: signatures.declaration }),
    ...(opts.governanceAware !== undefined && { governanceAware: opts.governanceAware }),
  };
  const registry = opts.governanceAware ? new GovernanceRegistry() : undefined;
  const mcp = new McpEndpoint(() => buildAdcpServer(core, mcpUrl, caller, stateStore, surface, registry));
  // A 3.1 seller's capabilities answer is the same for every call: checked once, before it serves.
  if (version === '3.1') await assertCapabilities31(buildAdcpServer(core, '', caller, stateStore, surface, registry));
  let a2aHandler: NodeHandler | undefined;

  const server: Server = createServer((req, res) => {
    runInRequestSpan(res, () => route(req, res), bearerOf(req)).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error', detail: String(err) });
      else res.end();
    });
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://sandbox').pathname;
    if (path === '/.well-known/jwks.json' && req.method === 'GET') {
      res.setHeader('cache-control', 'max-age=60');
      return sendJson(res, 200, identity.jwks);
    }
    if (path === '/healthz') return sendJson(res, 200, { ok: true });
    if (path === '/mcp' || path === '/mcp/') {
      if (!authorized(req)) return unauthorized(res);
      if (signatures && !(await signatures.admit(req, res))) return;
      return handleMcp(req, res);
    }
    if (a2aHandler && (path === '/a2a' || path.startsWith('/a2a/') || path === '/.well-known/agent-card.json')) {
      const isCard = path.endsWith('/.well-known/agent-card.json');
      if (!isCard && !authorized(req)) return unauthorized(res);
      if (!isCard && signatures && !(await signatures.admit(req, res))) return;
      a2aHandler(req, res);
      return;
    }
    sendJson(res, 404, { error: 'not found' });
  }

  async function handleMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonRpc(req, res);
    if (!body) return;
    const { parsed, raw } = body;
    if (raw !== undefined && opts.onMcpRequest && (await opts.onMcpRequest(raw)) === 'drop') {
      res.destroy();
      return;
    }
    const args = createMediaBuyArgs(parsed);
    if (args && raw !== undefined) {
      const fault = core.httpFaultFor(args);
      if (typeof args.idempotency_key === 'string') stats.createRequest(args.idempotency_key, raw, args, fault === 'hold-reply');
      if (fault === 'fail-500') return sendJson(res, 500, { error: 'sandbox: injected server error' });
      if (fault === 'hold-reply') {
        // The buy happens now; the caller waits until a test releases the reply.
        const served = servedVersion(args, version);
        const at = typeof served === 'string' ? served : version;
        const result = typeof served === 'string' ? onWire(at, 'create_media_buy', await core.createMediaBuy(args, caller.principal, at)) : served.refusal;
        const how = await held.hold(res);
        if (how === 'gone') return;
        if (how === 'error') return sendJson(res, 500, { error: 'sandbox: held reply released as an error' });
        return sendJson(res, 200, { jsonrpc: '2.0', id: (parsed as { id?: unknown }).id ?? null, result });
      }
      if (fault === 'lost-reply') {
        // The buy really happens; only the reply is lost.
        const served = servedVersion(args, version);
        if (typeof served === 'string') await core.createMediaBuy(args, caller.principal, served);
        return sendJson(res, 500, { error: 'sandbox: reply lost after execution' });
      }
    }
    await mcp.handle(req, res, parsed);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  mcpUrl = `${origin}/mcp`;
  a2aUrl = opts.a2a === false ? undefined : `${origin}/a2a`;
  if (a2aUrl) {
    a2aHandler = await createA2AHandler(buildAdcpServer(core, mcpUrl, caller, stateStore, surface, registry), core, a2aUrl, {
      submittedDelayMs: opts.submittedDelayMs ?? 3000,
      ...(opts.a2aRequireProfile && { requireProfile: true }),
      surface,
    });
  }

  let closed: Promise<void> | undefined;
  return {
    url: mcpUrl,
    ...(a2aUrl && { a2aUrl }),
    origin,
    jwksUrl: `${origin}/.well-known/jwks.json`,
    jwks: identity.jwks,
    ...(signatures && { requestSignatures: signatures.hooks() }),
    ...(registry && { governanceSyncs: registry }),
    close() {
      closed ??= (async () => {
        core.tasks.close();
        live.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        sender.close?.();
        forger?.close?.();
        await Promise.all([notifier.drain(), reporter.drain()]);
      })();
      return closed;
    },
    stats: () =>
      core.stats.snapshot({ tasks: core.tasks.size, jwks: identity.jwks, governanceRefusals: structuredClone(gate.refusals), reportFires: reporter.list() }),
    mediaBuys: () => structuredClone(live.book.all()),
    reporting: reportingHooks(live),
    creatives: {
      list: (accountId) => structuredClone(live.creatives.all(accountId)),
      review: (creativeId, verdict, o = {}) => void live.creatives.review(o.accountId ?? '', creativeId, verdict, o.reason),
    },
    getTask: (taskId) => {
      const t = core.tasks.get(taskId);
      return t && structuredClone(t);
    },
    completeTask: (taskId, result) => core.completeTask(taskId, result as Record<string, unknown> | undefined),
    setTaskStatus: (taskId, status, patch) => core.setTaskStatus(taskId, status, patch),
    createTaskBehindBuyersBack: (o) => core.createTaskBehindBuyersBack(o),
    sendWebhook: (taskId, content) => core.sendWebhook(taskId, content),
    webhooksSettled: async () => {
      await Promise.all([notifier.drain(), reporter.drain()]);
    },
    heldReplies: () => held.size,
    releaseHeldReplies: (as = 'reply') => held.release(as),
  };
}

/** The arguments of a single `tools/call create_media_buy` JSON-RPC message, if that's what this is. */
function createMediaBuyArgs(msg: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(msg) || msg.method !== 'tools/call' || !isPlainObject(msg.params)) return undefined;
  if (msg.params.name !== 'create_media_buy' || !isPlainObject(msg.params.arguments)) return undefined;
  return msg.params.arguments;
}

function bearerOf(req: IncomingMessage): string | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  return m ? m[1]!.trim() : undefined;
}

function unauthorized(res: ServerResponse): void {
  res.setHeader('www-authenticate', 'Bearer realm="adcp-sandbox-seller", error="invalid_token"');
  sendJson(res, 401, { error: 'unauthorized' });
}
