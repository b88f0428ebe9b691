/**
 * The sandbox seller's governance gate for `create_media_buy`.
 *
 * A *governed account* is one whose `account.account_id` starts with `gov_`
 * (e.g. `gov_acme`): the sandbox's stand-in for an account the buyer has
 * registered governance agents on. Every other account behaves as before.
 * A buy for a governed account must carry
 *   - `plan_id` (AdCP 3.0: required when the account has governance agents), and
 *   - `governance_context`: an intent token from the governance agent the
 *     seller was started with (`iss` = its URL, keys from its JWKS), for this
 *     seller (`aud` = the seller's MCP or A2A URL), this plan (`sub`), this
 *     task and these exact arguments (`authorized_payload_hash`), with an
 *     `authorized_commitment` in USD covering the packages' budgets, unexpired
 *     and not used before for another buy.
 * Otherwise the seller answers PERMISSION_DENIED (recovery correctable: get a
 * fresh token from check_governance) and books nothing. The reply names only
 * the profile's stable code; the detail goes to the seller's stats.
 */
import {
  GovernanceTokenError,
  remoteGovernanceKeys,
  verifyGovernanceContext,
  type GovernanceKeyResolver,
  type GovernanceTokenCode,
} from './governance-verifier.js';
import { isPlainObject, errorResult, type ToolResult } from './wire.js';

export const GOVERNED_ACCOUNT_PREFIX = 'gov_';

export interface SellerGovernanceOptions {
  /** The governance agent this seller trusts: its agent URL (the tokens' `iss`)… */
  agentUrl: string;
  /** …and its JWKS. */
  jwksUrl: string;
  /** Tolerance on exp/iat/nbf. Default 60 s (the profile's). */
  clockSkewSeconds?: number;
  /** Clock (epoch ms). Default Date.now. */
  now?: () => number;
}

export interface GovernanceRefusal {
  idempotency_key?: string;
  code: GovernanceTokenCode | 'governance_context_missing' | 'plan_id_missing' | 'governance_not_configured';
  detail: string;
  at: string;
}

/** What admitting a buy gives back: a refusal to answer, or how to mark the token used once the buy is booked. */
export type Admission = { refusal: ToolResult } | { consume: () => void };

export function isGovernedAccount(args: Record<string, unknown>): boolean {
  const account = args.account;
  return isPlainObject(account) && typeof account.account_id === 'string' && account.account_id.startsWith(GOVERNED_ACCOUNT_PREFIX);
}

/** The USD the buy commits: the packages' budgets (the sandbox prices everything in USD). */
function commitmentOf(args: Record<string, unknown>): { amount: number; currency: string } {
  const packages = Array.isArray(args.packages) ? args.packages : [];
  const amount = packages.reduce((sum: number, p) => sum + (isPlainObject(p) && typeof p.budget === 'number' ? p.budget : 0), 0);
  return { amount, currency: 'USD' };
}

export class GovernanceGate {
  private readonly keys: GovernanceKeyResolver | undefined;
  /** (iss, aud, jti) → the idempotency_key of the buy it was used for. */
  private readonly used = new Map<string, string>();
  readonly refusals: GovernanceRefusal[] = [];

  constructor(
    private readonly config: SellerGovernanceOptions | undefined,
    /** The seller's own agent URLs (MCP, A2A): acceptable audiences. */
    private readonly ownUrls: () => string[],
  ) {
    this.keys = config ? remoteGovernanceKeys(config.jwksUrl) : undefined;
  }

  async admit(args: Record<string, unknown>): Promise<Admission> {
    if (!isGovernedAccount(args)) return { consume: () => undefined };
    const key = typeof args.idempotency_key === 'string' ? args.idempotency_key : undefined;
    const refuse = (code: GovernanceRefusal['code'], detail: string): Admission => {
      this.refusals.push({ ...(key && { idempotency_key: key }), code, detail, at: new Date().toISOString() });
      if (code === 'plan_id_missing') {
        return { refusal: errorResult('INVALID_REQUEST', 'plan_id is required for a governed account', { field: 'plan_id' }) };
      }
      const missing = code === 'governance_context_missing';
      return {
        refusal: errorResult(
          'PERMISSION_DENIED',
          missing
            ? 'this account is governed: attach the governance_context from an approved check_governance'
            : 'governance_context does not authorize this request; get a new one from check_governance',
          { recovery: 'correctable', field: 'governance_context', details: { reason: code } },
        ),
      };
    };
    if (!this.config || !this.keys) return refuse('governance_not_configured', 'the seller has no governance agent to verify tokens with');
    if (typeof args.plan_id !== 'string' || args.plan_id.length === 0) return refuse('plan_id_missing', 'no plan_id');
    if (args.governance_context === undefined) return refuse('governance_context_missing', 'no governance_context');

    const now = this.config.now ?? Date.now;
    const audiences = this.ownUrls();
    try {
      const { claims } = await verifyGovernanceContext(args.governance_context, this.keys, {
        issuer: this.config.agentUrl,
        audiences,
        phase: 'intent',
        task: 'create_media_buy',
        payload: args,
        planId: args.plan_id,
        commitment: commitmentOf(args),
        nowSeconds: Math.floor(now() / 1000),
        clockSkewSeconds: this.config.clockSkewSeconds ?? 60,
        // A token is spent on one buy. The same buy again (a retry under its
        // key) is the idempotency ledger's business, not a replay.
        jtiSeen: (iss, aud, jti) => {
          const usedBy = this.used.get(`${iss} ${aud} ${jti}`);
          return usedBy !== undefined && usedBy !== key;
        },
      });
      const slot = `${String(claims.iss)} ${String(claims.aud)} ${String(claims.jti)}`;
      return { consume: () => void this.used.set(slot, key ?? '') };
    } catch (err) {
      if (err instanceof GovernanceTokenError) return refuse(err.code, err.detail);
      throw err;
    }
  }
}
