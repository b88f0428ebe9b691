/**
 * What a buy shows of its delivery: its packages as last known, the figures the
 * ledger adds up to (or a newer poll's), and pacing against its flight. Pure.
 */
import type { PackageFigures } from './delivery-report.js';
import { ledgerTotals, round, type LedgerEntry } from './report-ledger.js';
import { buyPacingIndex, pacingOf, type Pacing, type PacingThresholds } from './pacing.js';

export interface PackageState {
  package_id: string;
  product_id?: string;
  budget?: number;
  paused?: boolean;
  pacing_index?: number;
  delivery_status?: string;
  delivered?: { impressions: number; spend: number };
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/**
 * Packages from what the seller said (the create reply, a `get_media_buys` row)
 * over what we knew: fields it states replace ours, packages it does not name are
 * kept (a reply may list only some), and a package known only from the request
 * (no id yet) is left out.
 */
export function mergePackages(known: PackageState[], stated: unknown): PackageState[] {
  if (!Array.isArray(stated)) return known;
  const byId = new Map(known.map((p) => [p.package_id, { ...p }]));
  for (const raw of stated) {
    if (!isObject(raw)) continue;
    const id = str(raw.package_id);
    if (!id) continue;
    const p = byId.get(id) ?? { package_id: id };
    const product = str(raw.product_id);
    if (product) p.product_id = product;
    const budget = num(raw.budget) ?? num(isObject(raw.budget) ? raw.budget.amount : undefined);
    if (budget !== undefined) p.budget = budget;
    if (typeof raw.paused === 'boolean') p.paused = raw.paused;
    // get_media_buys with include_snapshot puts pacing under `snapshot`.
    const snap = isObject(raw.snapshot) ? raw.snapshot : raw;
    const pacing = num(snap.pacing_index);
    if (pacing !== undefined) p.pacing_index = pacing;
    const status = str(snap.delivery_status);
    if (status) p.delivery_status = status;
    byId.set(id, p);
  }
  return [...byId.values()];
}

/** A report's per-package figures folded into the packages (pacing, delivery status, paused). */
export function withReportedPackages(known: PackageState[], figures: PackageFigures[]): PackageState[] {
  return mergePackages(known, figures);
}

/** The latest poll snapshot, as the buy needs it. */
export interface SnapshotFigures {
  impressions: number;
  spend: number;
  clicks: number | null;
  period_end: number;
  by_package: PackageFigures[];
}

export interface BuyDeliveryFigures {
  impressions: number;
  spend: number;
  clicks: number | null;
  through: number | null;
  source: 'webhook' | 'poll' | null;
  byPackage: Record<string, { impressions: number; spend: number }>;
}

/**
 * What the buy has delivered. Without a poll, the ledger's totals (each period once).
 * With one, the latest snapshot is the seller's own cumulative figure up to its end,
 * authoritative (it covers a report that never came, too), plus the counted periods
 * reported since (those starting at or after its end).
 */
export function deliveryFigures(periods: LedgerEntry[], snapshot: SnapshotFigures | null): BuyDeliveryFigures {
  if (!snapshot) {
    const totals = ledgerTotals(periods);
    return { impressions: totals.impressions, spend: totals.spend, clicks: totals.clicks, through: totals.through, source: totals.periods > 0 ? 'webhook' : null, byPackage: totals.byPackage };
  }
  const since = ledgerTotals(periods.filter((e) => e.period_start >= snapshot.period_end));
  const byPackage: BuyDeliveryFigures['byPackage'] = {};
  for (const p of snapshot.by_package) byPackage[p.package_id] = { impressions: p.impressions ?? 0, spend: p.spend ?? 0 };
  for (const [id, p] of Object.entries(since.byPackage)) {
    const acc = (byPackage[id] ??= { impressions: 0, spend: 0 });
    acc.impressions += p.impressions;
    acc.spend = round(acc.spend + p.spend);
  }
  const clicks = snapshot.clicks === null && since.clicks === null ? null : (snapshot.clicks ?? 0) + (since.clicks ?? 0);
  return {
    impressions: snapshot.impressions + since.impressions,
    spend: round(snapshot.spend + since.spend),
    clicks,
    through: Math.max(snapshot.period_end, since.through ?? snapshot.period_end),
    source: since.periods > 0 ? 'webhook' : 'poll',
    byPackage,
  };
}

/** Packages with their delivered figures. */
export function packagesWithDelivery(packages: PackageState[], byPackage: BuyDeliveryFigures['byPackage']): PackageState[] {
  const out = packages.map((p) => (byPackage[p.package_id] ? { ...p, delivered: byPackage[p.package_id]! } : p));
  for (const [id, delivered] of Object.entries(byPackage)) if (!out.some((p) => p.package_id === id)) out.push({ package_id: id, delivered });
  return out;
}

/** Pacing of a buy from its figures: the seller's pacing index when its packages carry one, else linear by flight. */
export function buyPacing(
  buy: { budget_amount: number | null; flight_start: number | null; flight_end: number | null },
  figures: BuyDeliveryFigures,
  packages: PackageState[],
  thresholds: PacingThresholds,
): Pacing {
  return pacingOf(
    {
      budget: buy.budget_amount,
      flightStart: buy.flight_start,
      flightEnd: buy.flight_end,
      spend: figures.spend,
      through: figures.through,
      pacingIndex: buyPacingIndex(packages),
    },
    thresholds,
  );
}

/** The budget of a request: `total_budget`, else the sum of its packages' budgets. */
export function requestBudget(request: Json): { amount: number | null; currency: string | null } {
  const total = isObject(request.total_budget) ? request.total_budget : undefined;
  const currency = str(total?.currency) ?? null;
  const amount = num(total?.amount);
  if (amount !== undefined) return { amount, currency };
  const packages = Array.isArray(request.packages) ? request.packages : [];
  const budgets = packages.map((p) => (isObject(p) ? (num(p.budget) ?? num(isObject(p.budget) ? p.budget.amount : undefined)) : undefined));
  const known = budgets.filter((b): b is number => b !== undefined);
  return { amount: known.length > 0 ? known.reduce((a, b) => a + b, 0) : null, currency };
}
