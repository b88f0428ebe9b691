/**
 * Which of a buy's reports the delivery chart draws: the periods the ledger counts
 * (period reports nothing supersedes, src/domain/report-ledger.ts), in time order,
 * each marked when it restates an earlier report of its period (an `adjusted` or
 * `window_update` report, or one that superseded another) with the figure it
 * replaced. Poll snapshots overlap the periods and never join the bars, as they
 * never join the totals. Pure.
 */

/** What the chart needs of a stored report (the store's ReportRow satisfies it). */
export interface ChartReportSource {
  id: string;
  kind: string;
  notification_type: string | null;
  period_start: number;
  period_end: number;
  impressions: number;
  spend: number;
  is_adjusted: number;
  superseded_by: string | null;
  received_at: number;
}

export interface ChartPeriod {
  /** The counted report's id. */
  id: string;
  start: number;
  end: number;
  spend: number;
  impressions: number;
  /** It restates the period (adjusted, a window update, or a report that replaced another). */
  adjusted: boolean;
  /** The spend the period showed before its latest restatement, when it replaced one. */
  replaced?: number;
}

const RESTATING = new Set(['adjusted', 'window_update']);

export function chartPeriods(reports: readonly ChartReportSource[]): ChartPeriod[] {
  // The report each counted one replaced most recently: the last received among those it superseded.
  const replacedBy = new Map<string, ChartReportSource>();
  for (const r of reports) {
    if (r.superseded_by === null) continue;
    const seen = replacedBy.get(r.superseded_by);
    if (!seen || seen.received_at <= r.received_at) replacedBy.set(r.superseded_by, r);
  }
  return reports
    .filter((r) => r.kind === 'period' && r.superseded_by === null)
    .map((r) => {
      const before = replacedBy.get(r.id);
      const adjusted = r.is_adjusted === 1 || RESTATING.has(r.notification_type ?? '') || before !== undefined;
      return {
        id: r.id,
        start: r.period_start,
        end: r.period_end,
        spend: r.spend,
        impressions: r.impressions,
        adjusted,
        ...(before ? { replaced: before.spend } : {}),
      };
    })
    .sort((a, b) => a.start - b.start || a.end - b.end);
}

/** Spend added up period by period, rounded as the ledger rounds (a hundredth of a cent). */
export function cumulative(periods: readonly ChartPeriod[]): number[] {
  let sum = 0;
  return periods.map((p) => {
    sum += p.spend;
    return Math.round(sum * 10_000) / 10_000;
  });
}
