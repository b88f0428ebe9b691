/**
 * The seller's creative library, per account. A synced creative waits in
 * `pending_review` and is reviewed `reviewMs` later on a timer of its own:
 * approved, unless its name contains "reject" (then rejected, with a reason).
 * The sync's reply says `pending_review`, as a seller with asynchronous review
 * does; the buyer learns the decision by asking (get_media_buys'
 * creative_approvals, list_creatives).
 */
type Json = Record<string, unknown>;

export type ReviewStatus = 'pending_review' | 'approved' | 'rejected';

export interface LibraryCreative {
  creative_id: string;
  owner: string;
  name: string;
  format_id: Json;
  assets: Json;
  status: ReviewStatus;
  rejection_reason?: string;
  created_at: number;
  updated_at: number;
  /** Package ids it is assigned to. */
  packages: Set<string>;
  /** The canonical text of what was synced: a re-sync of the same is `unchanged`. */
  fingerprint: string;
}

const REJECTION = 'The landing page does not match the advertiser brand.';

export class CreativeLibrary {
  private readonly creatives = new Map<string, LibraryCreative>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly reviewMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Stores one creative of a sync; the action the reply reports for it. */
  upsert(owner: string, creative: Json): 'created' | 'updated' | 'unchanged' {
    const id = String(creative.creative_id);
    const key = `${owner}\0${id}`;
    const fingerprint = JSON.stringify([creative.name, creative.format_id, creative.assets]);
    const existing = this.creatives.get(key);
    if (existing && existing.fingerprint === fingerprint) return 'unchanged';
    const at = this.now();
    const entry: LibraryCreative = {
      creative_id: id,
      owner,
      name: String(creative.name ?? id),
      format_id: creative.format_id as Json,
      assets: (creative.assets ?? {}) as Json,
      status: 'pending_review',
      created_at: existing?.created_at ?? at,
      updated_at: at,
      packages: existing?.packages ?? new Set(),
      fingerprint,
    };
    this.creatives.set(key, entry);
    this.scheduleReview(entry);
    return existing ? 'updated' : 'created';
  }

  assign(owner: string, creativeId: string, packageId: string): boolean {
    const c = this.creatives.get(`${owner}\0${creativeId}`);
    if (!c) return false;
    c.packages.add(packageId);
    return true;
  }

  get(owner: string, creativeId: string): LibraryCreative | undefined {
    return this.creatives.get(`${owner}\0${creativeId}`);
  }

  ofOwner(owner: string): LibraryCreative[] {
    return [...this.creatives.values()].filter((c) => c.owner === owner);
  }

  assignedTo(owner: string, packageId: string): LibraryCreative[] {
    return this.ofOwner(owner).filter((c) => c.packages.has(packageId));
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private scheduleReview(entry: LibraryCreative): void {
    const fingerprint = entry.fingerprint;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      // A newer sync of the creative is reviewed by its own timer.
      if (entry.fingerprint !== fingerprint) return;
      const rejected = /reject/i.test(entry.name);
      entry.status = rejected ? 'rejected' : 'approved';
      if (rejected) entry.rejection_reason = REJECTION;
      entry.updated_at = this.now();
    }, this.reviewMs);
    this.timers.add(timer);
  }
}

/** A creative as list_creatives shows it. */
export function listedCreative(c: LibraryCreative, withAssignments: boolean): Json {
  return {
    creative_id: c.creative_id,
    name: c.name,
    format_id: c.format_id,
    status: c.status,
    created_date: new Date(c.created_at).toISOString(),
    updated_date: new Date(c.updated_at).toISOString(),
    assets: c.assets,
    ...(withAssignments
      ? { assignments: { assignment_count: c.packages.size, assigned_packages: [...c.packages].map((package_id) => ({ package_id, assigned_date: new Date(c.updated_at).toISOString() })) } }
      : {}),
  };
}
