/**
 * The sandbox seller's side of governance registration, when started with
 * `governanceAware: true`: it declares `media_buy.governance_aware` in its
 * capabilities and serves `sync_governance`, keeping, per account, the
 * governance agent the buyer registered (replace semantics: the last sync wins)
 * and every sync it took, so a test can see what arrived and in what order.
 *
 * Requests are schema-checked before they get here (request-check.ts: an http
 * URL or credentials under 32 characters are VALIDATION_ERROR). What it does not
 * do: call the registered agent (the seller's own check_governance), or use it to
 * decide a buy; buys are still gated by the token (governance-gate.ts).
 * `refuse(accountId)` makes the next syncs for that account fail, as a seller
 * that finds the buyer has no authority over the account answers.
 */
import { isPlainObject, ok, type ToolResult } from './wire.js';

export interface GovernanceSyncRecord {
  /** ISO 8601. */
  at: string;
  idempotency_key: string;
  account: Record<string, unknown>;
  url: string;
  schemes: string[];
  /** As received: this seller would present it to the agent. */
  credentials: string;
  status: 'synced' | 'failed';
}

export interface GovernanceRegistryHooks {
  /** Every account entry of every sync_governance taken, in arrival order. */
  syncs(): GovernanceSyncRecord[];
  /** The governance agent URL registered for an account (by account_id), if any. */
  registered(accountId: string): string | undefined;
  /** Refuse (`failed`, UNAUTHORIZED) the syncs of this account from now on; `false` takes them again. */
  refuse(accountId: string, refuse?: boolean): void;
}

const keyOf = (account: Record<string, unknown>): string => (typeof account.account_id === 'string' ? account.account_id : JSON.stringify(account));

export class GovernanceRegistry implements GovernanceRegistryHooks {
  private readonly records: GovernanceSyncRecord[] = [];
  private readonly bound = new Map<string, string>();
  private readonly refused = new Set<string>();

  /** `sync_governance`, its request already checked against the schema. */
  sync(args: Record<string, unknown>): ToolResult {
    const key = typeof args.idempotency_key === 'string' ? args.idempotency_key : '';
    const entries = Array.isArray(args.accounts) ? args.accounts.filter(isPlainObject) : [];
    const results = entries.map((entry) => {
      const account = isPlainObject(entry.account) ? entry.account : {};
      const agent = Array.isArray(entry.governance_agents) && isPlainObject(entry.governance_agents[0]) ? entry.governance_agents[0] : {};
      const auth = isPlainObject(agent.authentication) ? agent.authentication : {};
      const url = typeof agent.url === 'string' ? agent.url : '';
      const failed = this.refused.has(keyOf(account));
      this.records.push({
        at: new Date().toISOString(),
        idempotency_key: key,
        account,
        url,
        schemes: Array.isArray(auth.schemes) ? auth.schemes.map(String) : [],
        credentials: typeof auth.credentials === 'string' ? auth.credentials : '',
        status: failed ? 'failed' : 'synced',
      });
      if (failed) {
        return { account, status: 'failed', errors: [{ code: 'UNAUTHORIZED', message: 'the sandbox was told to refuse governance registration for this account' }] };
      }
      this.bound.set(keyOf(account), url);
      return { account, status: 'synced', governance_agents: [{ url }] };
    });
    return ok({ accounts: results });
  }

  syncs(): GovernanceSyncRecord[] {
    return this.records.map((r) => ({ ...r, account: structuredClone(r.account), schemes: [...r.schemes] }));
  }

  registered(accountId: string): string | undefined {
    return this.bound.get(accountId);
  }

  refuse(accountId: string, refuse = true): void {
    if (refuse) this.refused.add(accountId);
    else this.refused.delete(accountId);
  }
}
