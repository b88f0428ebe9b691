/**
 * The sandbox seller's creative library and its review desk (docs/SANDBOX.md,
 * Creatives): what `sync_creatives` stores and `list_creatives` and the buys'
 * `creative_approvals` read.
 *
 * A creative synced (new, or changed under the same id) goes to `pending_review`
 * and is reviewed `reviewMs` later: rejected when its name says so (contains
 * "reject", any case), with a reason a person can act on; left waiting for ever
 * when its name contains "hold" (a review that never comes, for timeouts);
 * approved otherwise. A test may decide one at once (`review`). Once every
 * package of a buy has an approved creative assigned, the buy is told
 * (`onApproved`), so one that awaits creatives may start.
 *
 * Creatives are kept per account (`account.account_id`; none: one shared shelf).
 */
import type { BookedMediaBuy } from './media-buy-book.js';

export const CREATIVE_STATUSES = ['processing', 'pending_review', 'approved', 'rejected', 'archived'] as const;
export type LibraryStatus = (typeof CREATIVE_STATUSES)[number];

export interface LibraryAssignment {
  media_buy_id: string;
  package_id: string;
  assigned_date: string;
}

export interface LibraryCreative {
  account_id: string;
  creative_id: string;
  name: string;
  format_id: unknown;
  status: LibraryStatus;
  rejection_reason?: string;
  created_date: string;
  updated_date: string;
  /** What was synced, minus what says nothing of its content: a resync of the same is `unchanged`. */
  fingerprint: string;
  assignments: LibraryAssignment[];
  /** How many times it was reviewed (a correction is reviewed again). */
  reviews: number;
}

/** Names that decide the review (case-insensitive). */
const REJECT_WORD = /reject/i;
const HOLD_WORD = /hold/i;

export const SANDBOX_REJECTION_REASON = 'The landing page domain does not match the advertiser (sandbox: the creative\'s name contains "reject")';

export class CreativeLibrary {
  private readonly shelf = new Map<string, LibraryCreative>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly reviewMs: number,
    /** The buys a creative is assigned to, to tell them of approvals. */
    private readonly onReviewed: (creative: LibraryCreative) => void,
  ) {}

  static accountOf(account: unknown): string {
    return typeof account === 'object' && account !== null && typeof (account as { account_id?: unknown }).account_id === 'string' ? (account as { account_id: string }).account_id : '';
  }

  private key(accountId: string, creativeId: string): string {
    return `${accountId}\0${creativeId}`;
  }

  find(accountId: string, creativeId: string): LibraryCreative | undefined {
    return this.shelf.get(this.key(accountId, creativeId));
  }

  all(accountId?: string): LibraryCreative[] {
    return [...this.shelf.values()].filter((c) => accountId === undefined || c.account_id === accountId);
  }

  /** Stores one synced creative; `created`, `updated` (reviewed anew) or `unchanged`. */
  upsert(accountId: string, creative: Record<string, unknown>): { action: 'created' | 'updated' | 'unchanged'; creative: LibraryCreative } {
    const now = new Date().toISOString();
    const id = String(creative.creative_id);
    const { creative_id: _id, ...content } = creative;
    const fingerprint = JSON.stringify(content);
    const existing = this.find(accountId, id);
    if (existing && existing.fingerprint === fingerprint && existing.status !== 'archived') return { action: 'unchanged', creative: existing };
    const entry: LibraryCreative = {
      account_id: accountId,
      creative_id: id,
      name: String(creative.name),
      format_id: creative.format_id,
      status: 'pending_review',
      created_date: existing?.created_date ?? now,
      updated_date: now,
      fingerprint,
      assignments: existing?.assignments ?? [],
      reviews: existing?.reviews ?? 0,
    };
    this.shelf.set(this.key(accountId, id), entry);
    this.scheduleReview(entry);
    return { action: existing ? 'updated' : 'created', creative: entry };
  }

  assign(creative: LibraryCreative, buy: BookedMediaBuy, packageId: string): void {
    if (creative.assignments.some((a) => a.media_buy_id === buy.media_buy_id && a.package_id === packageId)) return;
    creative.assignments.push({ media_buy_id: buy.media_buy_id, package_id: packageId, assigned_date: new Date().toISOString() });
  }

  /** Decides a review now (a test's hook); the scheduled one, if any, is dropped. */
  review(accountId: string, creativeId: string, verdict: 'approved' | 'rejected', reason?: string): LibraryCreative {
    const c = this.find(accountId, creativeId);
    if (!c) throw new Error(`the sandbox seller has no creative ${creativeId}${accountId ? ` for account ${accountId}` : ''}`);
    this.decide(c, verdict, verdict === 'rejected' ? (reason ?? SANDBOX_REJECTION_REASON) : undefined);
    return c;
  }

  /** Each package's creative approvals on a buy (get_media_buys `creative_approvals`). */
  approvalsFor(accountId: string, mediaBuyId: string, packageId: string): Array<Record<string, unknown>> {
    return this.all(accountId).flatMap((c) => {
      if (c.status === 'archived' || !c.assignments.some((a) => a.media_buy_id === mediaBuyId && a.package_id === packageId)) return [];
      const status = c.status === 'approved' || c.status === 'rejected' ? c.status : 'pending_review';
      return [{ creative_id: c.creative_id, approval_status: status, ...(status === 'rejected' && c.rejection_reason ? { rejection_reason: c.rejection_reason } : {}) }];
    });
  }

  /** Whether every package of the buy has an approved creative assigned. */
  approvedForAllPackages(accountId: string, buy: BookedMediaBuy): boolean {
    return buy.packages.length > 0 && buy.packages.every((p) => this.approvalsFor(accountId, buy.media_buy_id, p.package_id).some((a) => a.approval_status === 'approved'));
  }

  close(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private scheduleReview(c: LibraryCreative): void {
    const key = this.key(c.account_id, c.creative_id);
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
    if (HOLD_WORD.test(c.name)) return;
    const t = setTimeout(() => {
      this.timers.delete(key);
      this.decide(c, REJECT_WORD.test(c.name) ? 'rejected' : 'approved', SANDBOX_REJECTION_REASON);
    }, this.reviewMs);
    t.unref?.();
    this.timers.set(key, t);
  }

  private decide(c: LibraryCreative, verdict: 'approved' | 'rejected', reason: string | undefined): void {
    const key = this.key(c.account_id, c.creative_id);
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
    c.status = verdict;
    c.updated_date = new Date().toISOString();
    c.reviews += 1;
    if (verdict === 'rejected') c.rejection_reason = reason ?? SANDBOX_REJECTION_REASON;
    else delete c.rejection_reason;
    this.onReviewed(c);
  }
}
