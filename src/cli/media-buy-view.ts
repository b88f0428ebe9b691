/**
 * How `media-buys list|show|delivery` print a live buy for a person: one line per
 * buy (status, spend of budget, pacing, reports), the buy's facts and its events,
 * and its delivery reports one per line with the totals that count each period
 * once. The JSON is the API's (src/domain/media-buy-json.ts); only the parts shown
 * here are read, and nothing here decides anything.
 */
import type { CreativeJson } from '../domain/creatives.js';
import type { MediaBuyEventJson, MediaBuyJson, ReportJson } from '../domain/media-buy-json.js';

export interface DeliveryView {
  reports: ReportJson[];
  totals: { impressions: number; spend: number; clicks: number | null; currency: string | null; periods: number; through: string | null };
}

/** Money as people read it: two decimals, no float noise (1234.5 → "1234.50"). */
export const money = (n: number | null | undefined): string => (typeof n === 'number' && Number.isFinite(n) ? n.toFixed(2) : '-');

/** "1234.50 / 5000.00 USD (25%)": spend against budget; without a budget, the spend alone. */
export function spendOfBudget(b: MediaBuyJson): string {
  const currency = b.delivery.currency ?? b.budget.currency;
  const unit = currency ? ` ${currency}` : '';
  const budget = b.budget.amount;
  if (typeof budget !== 'number' || budget <= 0) return `${money(b.delivery.spend)}${unit}`;
  return `${money(b.delivery.spend)} / ${money(budget)}${unit} (${Math.round((b.delivery.spend / budget) * 100)}%)`;
}

/** "on_track 0.98", "under 0.41", "not_started". */
export function pacingText(b: MediaBuyJson): string {
  const p = b.delivery.pacing;
  return p.ratio === null || p.state === 'not_started' ? p.state : `${p.state} ${p.ratio.toFixed(2)}`;
}

/** "3 reports, last #3" (+ missing, final). */
export function reportsText(b: MediaBuyJson): string {
  const r = b.reports;
  const parts = [`${r.received} report${r.received === 1 ? '' : 's'}`];
  if (r.last_sequence !== null) parts.push(`last #${r.last_sequence}`);
  if (r.missing > 0) parts.push(`${r.missing} missing`);
  if (r.final_received) parts.push('final in');
  return parts.join(', ');
}

/** One line per buy in a listing. */
export function buyLine(b: MediaBuyJson): string {
  return `${b.id}  ${b.status.padEnd(17)} ${spendOfBudget(b).padEnd(32)} pacing ${pacingText(b).padEnd(16)} ${reportsText(b)}  agent ${b.agent_id}  seller id ${b.media_buy_id}\n`;
}

/** A creative sent to the buy: its review, why a rejection, a stall, a wait for a person. */
export function creativeLine(c: CreativeJson): string {
  const notes = [
    c.package_ids.length ? `packages ${c.package_ids.join(', ')}` : 'no package',
    c.stalled ? 'review stalled' : '',
    c.inbox === 'owed' || c.inbox === 'asked' ? `waits for a person (operation ${c.sync.operation_id})` : '',
    c.dismissed ? `dismissed by ${c.dismissed.by ?? '?'}` : '',
    c.sync.state === 'failed' ? 'not sent' : '',
  ].filter(Boolean);
  const reason = c.rejection_reason ? `: ${c.rejection_reason}` : '';
  return `  creative ${c.creative_id}  ${c.status}${reason}  ${notes.join(', ')}${c.name ? `  "${c.name}"` : ''}\n`;
}

/** `show`: the line, its facts, its packages and creatives, then its events oldest first. */
export function buyDetail(b: MediaBuyJson): string {
  const rows: Array<[string, string]> = [
    ['seller', `agent ${b.agent_id}, media_buy_id ${b.media_buy_id}${b.revision !== null ? `, revision ${b.revision}` : ''}`],
    ['created', `by operation ${b.operation_id} at ${b.created_at}`],
  ];
  if (b.campaign_id) rows.push(['campaign', b.campaign_id]);
  if (b.governance) rows.push(['governed', `plan ${b.governance.plan_id} at agent ${b.governance.agent_id}`]);
  rows.push(['flight', `${b.flight.start ?? '?'} -> ${b.flight.end ?? '?'}`]);
  rows.push(['spend', `${spendOfBudget(b)}, ${b.delivery.impressions} impressions${b.delivery.clicks !== undefined ? `, ${b.delivery.clicks} clicks` : ''}${b.delivery.through ? `, through ${b.delivery.through}` : ''}${b.delivery.source ? ` (by ${b.delivery.source})` : ''}`]);
  const p = b.delivery.pacing;
  rows.push(['pacing', `${pacingText(b)}${p.expected_spend !== null ? `, expected spend ${money(p.expected_spend)}` : ''}`]);
  const route = b.reports.webhook === 'none' ? `polled (${b.reports.polled_because ?? 'no reporting webhook'})` : `by ${b.reports.webhook}`;
  rows.push(['reports', `${b.reports.frequency ?? '-'} ${route}: ${reportsText(b)}${b.reports.next_expected_at ? `, next expected ${b.reports.next_expected_at}` : ''}`]);
  if (b.valid_actions?.length) rows.push(['actions', b.valid_actions.join(', ')]);
  if (b.next_check_at) rows.push(['next look', b.next_check_at]);
  if (b.ended_at) rows.push(['ended', b.ended_at]);
  const lines = [buyLine(b), ...rows.map(([label, value]) => `  ${label.padEnd(9)} ${value}\n`)];
  for (const pkg of b.packages) {
    const delivered = pkg.delivered ? `  spend ${money(pkg.delivered.spend)}, ${pkg.delivered.impressions} impressions` : '';
    const facts = [pkg.product_id, pkg.budget !== undefined ? `budget ${money(pkg.budget)}` : '', pkg.paused ? 'paused' : '', pkg.delivery_status ?? '', pkg.pacing_index !== undefined ? `pacing index ${pkg.pacing_index.toFixed(2)}` : '']
      .filter(Boolean)
      .join(', ');
    lines.push(`  package  ${pkg.package_id}  ${facts}${delivered}\n`);
  }
  for (const c of b.creatives ?? []) lines.push(creativeLine(c));
  for (const e of (b as MediaBuyJson & { events?: MediaBuyEventJson[] }).events ?? []) lines.push(`  ${buyEventLine(e)}`);
  return lines.join('');
}

/** An event of the buy's own history: when, what, the status change, where from, who. */
export function buyEventLine(e: MediaBuyEventJson): string {
  const change = e.from !== e.to && e.to ? `${e.from ?? '-'} -> ${e.to}` : '';
  const by = e.actor ? ` by ${e.actor}` : '';
  const detail = eventDetail(e.detail);
  return `${e.at}  ${e.kind.padEnd(22)} ${change.padEnd(28)} ${e.source}${by}${detail ? `  ${detail}` : ''}\n`;
}

function eventDetail(detail: unknown): string {
  if (detail === null || typeof detail !== 'object') return '';
  const d = detail as Record<string, unknown>;
  const keys = ['code', 'reason', 'creative_id', 'operation_id', 'notification_type', 'sequence_number', 'spend', 'state', 'media_buy_id'];
  return keys
    .filter((k) => d[k] !== undefined && d[k] !== null && typeof d[k] !== 'object')
    .map((k) => `${k}=${String(d[k])}`)
    .join(' ');
}

/** `delivery`: a report per line, oldest first (a superseded one marked), then the totals. */
export function deliveryLines(buyId: string, v: DeliveryView): string {
  const lines = v.reports.map((r) => {
    const period = `${r.period.start ?? '?'} -> ${r.period.end ?? '?'}`;
    const seq = r.sequence_number !== null ? `#${r.sequence_number}` : '-';
    const marks = [r.is_adjusted ? 'adjusted' : '', r.superseded_by ? `superseded by ${r.superseded_by}` : ''].filter(Boolean).join(', ');
    return `${period}  ${String(r.notification_type ?? '-').padEnd(13)} ${seq.padEnd(5)} ${String(r.impressions).padStart(10)} imp  ${money(r.spend).padStart(12)} ${r.currency ?? ''}  ${r.source}${marks ? `  (${marks})` : ''}\n`;
  });
  const t = v.totals;
  lines.push(
    `totals ${buyId}: ${t.periods} period${t.periods === 1 ? '' : 's'}, ${t.impressions} impressions, spend ${money(t.spend)} ${t.currency ?? ''}${t.clicks !== null ? `, ${t.clicks} clicks` : ''}${t.through ? `, through ${t.through}` : ''}\n`,
  );
  return lines.join('');
}
