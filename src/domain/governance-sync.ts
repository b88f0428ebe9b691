/**
 * Governance with the seller (AdCP spec, governance: "Setup"): before the first
 * governed buy at a seller that declares `media_buy.governance_aware`, the buyer
 * registers its governance agent for the account with `sync_governance`, so the
 * seller can make its own check against that agent. Pure: what is owed, the
 * request, and how the seller's reply reads. The step that sends it is
 * src/engine/governance/seller-sync.ts.
 *
 * The registration carries the agent's `url`, which every AdCP release requires to
 * be https (`^https://`), and the `authentication` the seller presents when it calls
 * the agent: the agent's `seller_credentials` (≥ 32 characters, issued by the
 * governance agent for sellers). Without credentials nothing is registered; with an
 * http URL nothing valid can be sent, and the governed request is refused rather
 * than sent to a seller that may consult another agent, or none.
 */

/** The spec's floor on `authentication.credentials`. */
export const SELLER_CREDENTIALS_MIN = 32;
/** Printable ASCII without spaces: the seller sends it as a Bearer token. */
export const SELLER_CREDENTIALS_RE = /^[\x21-\x7E]{32,4096}$/;

/** Whether an agent's stored capabilities (JSON text) declare `media_buy.governance_aware: true`. */
export function isGovernanceAware(capabilities: string | null | undefined): boolean {
  if (!capabilities) return false;
  try {
    const parsed = JSON.parse(capabilities) as { media_buy?: { governance_aware?: unknown } | null };
    return parsed.media_buy?.governance_aware === true;
  } catch {
    return false;
  }
}

/** Why `url` cannot be registered with a seller, or undefined when it can. */
export function urlProblem(url: string): string | undefined {
  if (/^https:\/\//.test(url)) return undefined;
  return `its URL ${url} is not https: AdCP's sync_governance requires an https URL (pattern ^https://) for the governance agent a seller calls`;
}

/** What a governed request owes the seller before its check: register the governance agent, nothing, or a refusal. */
export type SellerSyncNeed = { kind: 'sync' } | { kind: 'none' } | { kind: 'skip'; reason: string } | { kind: 'refuse'; reason: string };

export function sellerSyncNeed(
  seller: { capabilities?: string | null; name: string },
  governance: { url: string; name: string; seller_credentials_enc?: string | null },
  params: Record<string, unknown>,
): SellerSyncNeed {
  if (!isGovernanceAware(seller.capabilities) || accountKey(params.account) === undefined) return { kind: 'none' };
  if (!governance.seller_credentials_enc) {
    return { kind: 'skip', reason: `${governance.name} has no seller_credentials: sync_governance is not sent, so ${seller.name} is not told of it` };
  }
  const problem = urlProblem(governance.url);
  if (problem) return { kind: 'refuse', reason: `${seller.name} is governance-aware and ${governance.name} must be registered with it, but ${problem}` };
  return { kind: 'sync' };
}

/** The account reference as canonical JSON (keys sorted at every depth): the registration's key. Undefined when there is none. */
export function accountKey(account: unknown): string | undefined {
  if (typeof account !== 'object' || account === null || Array.isArray(account)) return undefined;
  return JSON.stringify(sorted(account));
}

function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]));
}

/**
 * The idempotency_key of an operation's sync: the same on every retry of the same
 * registration (the seller replays it), a new one when the operation or what is
 * registered changes (the fingerprint), as the spec's "unique per request" wants.
 */
export function syncIdempotencyKey(operationId: string, fingerprint: string): string {
  return `gsync.${operationId}.${fingerprint.slice(0, 16)}`;
}

/** The sync_governance arguments: one account, one governance agent (3.1 allows exactly one; 3.0 up to ten). */
export function syncGovernanceRequest(args: { idempotencyKey: string; account: unknown; url: string; credentials: string }): Record<string, unknown> {
  return {
    idempotency_key: args.idempotencyKey,
    accounts: [{ account: args.account, governance_agents: [{ url: args.url, authentication: { schemes: ['Bearer'], credentials: args.credentials } }] }],
  };
}

export type SyncReading =
  | { kind: 'synced' }
  | { kind: 'refused'; error: { code: string; message?: string; details?: unknown } }
  | { kind: 'no_answer'; reason: string };

/** The seller's answer to one account's sync: `synced`, a refusal (the account's errors, or the operation's), or no answer we can use. */
export function readSyncReply(data: Record<string, unknown>): SyncReading {
  if (Array.isArray(data.errors) && data.errors.length > 0 && !Array.isArray(data.accounts)) return { kind: 'refused', error: firstError(data.errors) };
  const entry = Array.isArray(data.accounts) ? (data.accounts[0] as Record<string, unknown> | undefined) : undefined;
  if (!entry || typeof entry !== 'object') return { kind: 'no_answer', reason: 'the reply names no account' };
  if (entry.status === 'synced') return { kind: 'synced' };
  if (entry.status === 'failed') {
    const errors = Array.isArray(entry.errors) && entry.errors.length > 0 ? entry.errors : [{ code: 'SYNC_FAILED', message: 'the seller did not register the governance agent' }];
    return { kind: 'refused', error: firstError(errors) };
  }
  return { kind: 'no_answer', reason: `the account's status is ${JSON.stringify(entry.status ?? null)}` };
}

function firstError(errors: unknown[]): { code: string; message?: string; details?: unknown } {
  const e = (errors[0] ?? {}) as Record<string, unknown>;
  const code = typeof e.code === 'string' ? e.code : 'SYNC_FAILED';
  return { code, ...(typeof e.message === 'string' ? { message: e.message } : {}), ...(errors.length > 1 ? { details: { errors } } : {}) };
}

/** What a governance agent's JSON and page say of its registration with governance-aware sellers. */
export function sellerRegistration(agent: { url: string; seller_credentials_enc?: string | null }): string {
  if (!agent.seller_credentials_enc) return 'not registered with sellers: no seller_credentials, so sync_governance is not sent and governance-aware sellers are not told of this agent';
  const problem = urlProblem(agent.url);
  if (problem) return `cannot be registered with sellers: ${problem}; governed requests at governance-aware sellers are refused`;
  return 'registered with each governance-aware seller (sync_governance) before its first governed request for an account';
}
