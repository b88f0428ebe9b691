/**
 * A buy's delivery ledger (the AdCP spec, delivery reporting): which reports
 * count, and the totals they add up to. Pure.
 *
 * Two kinds of report are kept:
 * - a **period** report (a fire: `scheduled`, `delayed`, `final`, `adjusted`,
 *   `window_update`) says what was delivered in its `reporting_period`. Each
 *   period counts once: a later report of the same period (an `adjusted` one, a
 *   `window_update` whose measurement window replaces the earlier one's, or the
 *   seller reporting it again) supersedes the earlier, and totals add up the
 *   reports nothing supersedes;
 * - a **snapshot** (a `get_media_buy_delivery` poll) is the seller's own
 *   cumulative figure for the period it names. It is authoritative but overlaps
 *   the periods, so it never joins the sum: the buy shows it when it is newer
 *   than the last period (src/domain/media-buy-delivery.ts).
 *
 * Dedupe keys: a fire is known by (seller, `idempotency_key`) when it has one;
 * a report, within its buy, by (`notification_type`, `sequence_number`, period),
 * so the same report arriving twice (a retry without a key, the same report
 * inside two fires) is stored once.
 */
import type { ReportNotificationType, ReportPeriod } from './delivery-report.js';

export type ReportKind = 'period' | 'snapshot';

/** The fire-level dedupe key: the sender's key, else the canonical content. */
export function fireDedupeKey(idempotencyKey: string | undefined, fingerprint: string): string {
  return idempotencyKey ?? `content:${fingerprint}`;
}

/** The report-level dedupe key within one buy. */
export function reportDedupeKey(r: { kind: ReportKind; notificationType: string | null; sequenceNumber: number | null; period: ReportPeriod; spend: number; impressions: number }): string {
  if (r.kind === 'snapshot') {
    // The same figure for the same period read twice adds nothing.
    return `snapshot:${r.period.start}:${r.period.end}:${r.spend}:${r.impressions}`;
  }
  return `${r.notificationType}:${r.sequenceNumber ?? '-'}:${r.period.start}:${r.period.end}`;
}

/** What the ledger needs of a stored report. */
export interface LedgerEntry {
  id: string;
  kind: ReportKind;
  notification_type: string | null;
  sequence_number: number | null;
  period_start: number;
  period_end: number;
  impressions: number;
  spend: number;
  clicks: number | null;
  by_package: Array<{ package_id: string; impressions?: number; spend?: number; clicks?: number }>;
  received_at: number;
  superseded_by: string | null;
  /** The buy's status as the report's row stated it (`reporting_delayed` says its figures are not all in). */
  status?: string | null;
}

export interface IncomingPeriod {
  notificationType: ReportNotificationType;
  sequenceNumber: number | null;
  period: ReportPeriod;
}

/**
 * How a new period report relates to the live ones: the ids it supersedes (the
 * live reports of the same period: an `adjusted` restatement, a `window_update`
 * whose wider measurement window replaces the earlier one's figures, or the
 * seller simply reporting the period again), or the id of a live report that
 * already supersedes it (an older report arriving late, out of order: its
 * sequence number is lower than that of the one it would replace).
 */
export function placeInLedger(incoming: IncomingPeriod, live: LedgerEntry[]): { supersedes: string[]; supersededBy: string | null } {
  const sameWindow = live.filter((e) => e.kind === 'period' && e.superseded_by === null && e.period_start === incoming.period.start && e.period_end === incoming.period.end);
  const newer = sameWindow.find((e) => isLater(e, incoming));
  if (newer) return { supersedes: [], supersededBy: newer.id };
  return { supersedes: sameWindow.map((e) => e.id), supersededBy: null };
}

/** An existing report is later than the incoming one only when both are numbered and its number is higher. */
function isLater(existing: LedgerEntry, incoming: IncomingPeriod): boolean {
  return existing.sequence_number !== null && incoming.sequenceNumber !== null && existing.sequence_number > incoming.sequenceNumber;
}

export interface LedgerTotals {
  impressions: number;
  spend: number;
  clicks: number | null;
  /** Per package, summed over the counted reports. */
  byPackage: Record<string, { impressions: number; spend: number }>;
  /** The end of the latest counted period (epoch ms), or null with none. */
  through: number | null;
  /** Counted reports. */
  periods: number;
}

/** The totals of the period reports nothing supersedes: each period counted once. */
export function ledgerTotals(entries: LedgerEntry[]): LedgerTotals {
  const totals: LedgerTotals = { impressions: 0, spend: 0, clicks: null, byPackage: {}, through: null, periods: 0 };
  for (const e of entries) {
    if (e.kind !== 'period' || e.superseded_by !== null) continue;
    totals.periods++;
    totals.impressions += e.impressions;
    totals.spend += e.spend;
    if (e.clicks !== null) totals.clicks = (totals.clicks ?? 0) + e.clicks;
    totals.through = Math.max(totals.through ?? e.period_end, e.period_end);
    for (const p of e.by_package) {
      const acc = (totals.byPackage[p.package_id] ??= { impressions: 0, spend: 0 });
      acc.impressions += p.impressions ?? 0;
      acc.spend += p.spend ?? 0;
    }
  }
  // Sums of decimal amounts pick up binary noise (0.1 + 0.2); money is shown to the cent's hundredth.
  totals.spend = round(totals.spend);
  for (const p of Object.values(totals.byPackage)) p.spend = round(p.spend);
  return totals;
}

export function round(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}
