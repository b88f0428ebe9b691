/**
 * The paragraph a model reads beside a live media buy's JSON (get_media_buy,
 * list_media_buys, get_delivery): where the buy stands (status, spend of budget,
 * pacing, reports received and missing), what can be done next with which tool, and
 * the buy's dashboard page, where a person looks at it.
 */
import type { MediaBuyJson } from '../domain/media-buy-json.js';
import { isTerminalBuyStatus } from '../domain/media-buy-status.js';
import type { DeliveryJson, MediaBuyPage } from '../engine/media-buys/buy-reads.js';
import type { DashboardLinks } from './links.js';

const STATUS_NOTE: Record<string, string> = {
  pending_creatives: ' (the seller waits for creatives before it can start)',
  pending_start: ' (accepted; its flight has not started)',
  paused: ' (paused at the seller: nothing is delivered until it is resumed)',
};

const PACING_NOTE: Record<string, string> = {
  under: 'under-pacing: it spends too slowly to use its budget by the end of the flight; a person may want to look',
  over: 'over-pacing: it spends faster than planned; a person may want to look',
  on_track: 'on track',
  not_started: 'not judged yet (too early in the flight, or nothing delivered)',
};

export const amount = (n: number | null | undefined): string => (typeof n === 'number' ? n.toLocaleString('en-US', { maximumFractionDigits: 2 }) : '?');

/** "1,234.5 of 8,000 USD (15 %)", or the spend alone when the budget is unknown. */
function spendOfBudget(b: MediaBuyJson): string {
  const currency = b.delivery.currency ?? b.budget.currency ?? '';
  const budget = b.budget.amount;
  const share = budget ? ` (${Math.round((b.delivery.spend / budget) * 100)} %)` : '';
  return budget !== null ? `${amount(b.delivery.spend)} of ${amount(budget)} ${currency}${share}`.trim() : `${amount(b.delivery.spend)} ${currency}`.trim();
}

export function mediaBuySummary(b: MediaBuyJson, links: DashboardLinks): string {
  const parts = [`Media buy ${b.id} (the seller’s ${b.media_buy_id}, at agent ${b.agent_id}) is ${b.status}${STATUS_NOTE[b.status] ?? ''}.`];
  const d = b.delivery;
  parts.push(
    d.through === null && d.spend === 0
      ? `Nothing delivered yet${b.budget.amount !== null ? ` of its ${`${amount(b.budget.amount)} ${b.budget.currency ?? ''}`.trim()} budget` : ''}.`
      : `Spent ${spendOfBudget(b)}, ${amount(d.impressions)} impressions${d.through ? `, delivered through ${d.through}` : ''}.`,
  );
  const ratio = d.pacing.ratio !== null && d.pacing.expected_spend !== null ? ` (spend is ${amount(d.pacing.ratio)}× the ${amount(d.pacing.expected_spend)} expected by now)` : '';
  parts.push(`Pacing: ${PACING_NOTE[d.pacing.state] ?? d.pacing.state}${ratio}.`);
  parts.push(reportsText(b));
  if (isTerminalBuyStatus(b.status)) parts.push(`It ended${b.ended_at ? ` at ${b.ended_at}` : ''}; nothing more can be changed.`);
  else if (b.status === 'paused') parts.push('An operator can resume it with resume_media_buy.');
  else parts.push('An operator can pause it with pause_media_buy; get_delivery lists its reports.');
  parts.push(`Dashboard: ${links.mediaBuy(b.id)}.`);
  return parts.join(' ');
}

function reportsText(b: MediaBuyJson): string {
  const r = b.reports;
  const how = r.frequency ? `Reports (${r.frequency})` : 'Reports';
  const next = r.next_expected_at && !r.final_received ? `, next expected at ${r.next_expected_at}` : '';
  const final = r.final_received ? ', the final one among them' : '';
  const missing = r.missing > 0 ? ` ${r.missing} came late or not at all; the orchestrator asked the seller for the delivery itself.` : '';
  return `${how}: ${r.received} received${final}${next}.${missing}`;
}

export function mediaBuyPageSummary(page: MediaBuyPage): string {
  const n = page.media_buys.length;
  if (n === 0) return 'No media buys.';
  const lines = page.media_buys.slice(0, 20).map((b) => `${b.id} ${b.status}, spent ${spendOfBudget(b)}, pacing ${b.delivery.pacing.state}${b.reports.missing > 0 ? `, ${b.reports.missing} report(s) missing` : ''}`);
  const more = n > 20 ? ` …and ${n - 20} more in the JSON.` : '';
  return `${n} media buy(s): ${lines.join('; ')}.${more}${page.next_cursor ? ' More pages: pass next_cursor as cursor.' : ''} get_media_buy shows one in full.`;
}

export function deliverySummary(id: string, view: DeliveryJson, links: DashboardLinks): string {
  const { reports, totals } = view;
  const link = `Dashboard: ${links.mediaBuy(id)}.`;
  if (reports.length === 0) return `Media buy ${id} has no delivery report yet. ${link}`;
  const restated = reports.filter((r) => r.superseded_by).length;
  const last = reports[reports.length - 1]!;
  return [
    `Media buy ${id}: ${reports.length} report(s) covering ${totals.periods} period(s), each counted once: ${amount(totals.impressions)} impressions, ${amount(totals.spend)} ${totals.currency ?? ''}`.trimEnd() +
      `${totals.through ? ` through ${totals.through}` : ''}.`,
    restated > 0 ? `${restated} report(s) were restated by a later one (superseded_by) and no longer count.` : '',
    `Latest: ${last.notification_type ?? 'report'} for ${last.period.start} – ${last.period.end}, ${amount(last.impressions)} impressions, ${amount(last.spend)} spent (by ${last.source}).`,
    link,
  ]
    .filter(Boolean)
    .join(' ');
}
