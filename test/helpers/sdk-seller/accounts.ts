/**
 * Accounts: any reference resolves (this seller onboards whoever calls), to an
 * owner key that scopes buys, creatives and idempotency. An explicit
 * `{account_id}` is its id; a natural `{brand, operator}` reference is the
 * brand's domain and the operator.
 */
type Json = Record<string, unknown>;

export interface SellerAccount {
  account_id?: string;
  owner: string;
}

export function resolveAccount(ref: unknown): SellerAccount | null {
  if (typeof ref !== 'object' || ref === null) return null;
  const r = ref as Json;
  if (typeof r.account_id === 'string' && r.account_id !== '') return { account_id: r.account_id, owner: `id:${r.account_id}` };
  const brand = r.brand as Json | undefined;
  if (brand && typeof brand.domain === 'string') return { owner: `brand:${brand.domain}:${String(r.operator ?? '')}` };
  return null;
}

/** The owner key of a resolved account; requests without one share the seller-wide key. */
export function ownerOf(account: SellerAccount | undefined): string {
  return account?.owner ?? 'anonymous';
}
