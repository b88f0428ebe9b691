/**
 * Small pieces the media buys list and a buy's page share: the status and pacing
 * badges, amounts with their currency, and the spend-of-budget bar (an inline SVG:
 * the Content-Security-Policy forbids inline styles, and SVG geometry is attributes).
 */
import type { MediaBuyRow } from '../../../store/index.js';
import { html, type SafeHtml } from '../../html.js';
import { money } from '../campaigns.js';

const STATUS_TONES: Record<string, string> = {
  pending_creatives: 'attention',
  pending_start: 'pending',
  active: 'good',
  paused: 'attention',
  completed: 'neutral',
  rejected: 'bad',
  canceled: 'neutral',
};

export function buyStatusBadge(status: string): SafeHtml {
  return html`<span class="badge badge-${STATUS_TONES[status] ?? 'neutral'}" data-buy-status="${status}">${status.replace(/_/g, ' ')}</span>`;
}

const PACING: Record<string, { tone: string; label: string }> = {
  on_track: { tone: 'good', label: 'on track' },
  under: { tone: 'attention', label: 'under' },
  over: { tone: 'bad', label: 'over' },
  not_started: { tone: 'neutral', label: 'not judged yet' },
};

/** The pacing state, with the ratio (spend over the plan by then) when there is one. */
export function pacingBadge(state: string, ratio: number | null): SafeHtml {
  const p = PACING[state] ?? { tone: 'neutral', label: state };
  const why =
    state === 'not_started'
      ? 'Too early in the flight (or no budget, flight or delivery yet) to judge pacing'
      : `Spend is ${ratio === null ? 'not measured' : `${ratio.toFixed(2)}× the plan by the end of the latest report`}`;
  return html`<span class="badge badge-${p.tone} pacing" data-pacing="${state}" title="${why}">${p.label}${ratio !== null && state !== 'not_started' ? html` <span class="ratio">${ratio.toFixed(2)}×</span>` : ''}</span>`;
}

/** "1,234.5 USD"; "—" when unknown. */
export function amount(n: number | null, currency: string | null): string {
  if (n === null) return '—';
  return currency ? `${money(n)} ${currency}` : money(n);
}

/** Spent as a share of the budget, 0–100 (null without a budget). */
export function spentPercent(spend: number, budget: number | null): number | null {
  if (budget === null || budget <= 0) return null;
  return Math.round((spend / budget) * 1000) / 10;
}

const BAR_TONES: Record<string, string> = { over: '#b42318', under: '#b26b00' };

/**
 * The spend-of-budget bar: the share spent, and a tick where the linear plan says it
 * should be by the latest report. Numbers beside it carry the same in text.
 */
export function spendBar(b: Pick<MediaBuyRow, 'spend' | 'budget_amount' | 'pacing_expected' | 'pacing_state' | 'currency'>): SafeHtml {
  const pct = spentPercent(b.spend, b.budget_amount);
  const expected = b.budget_amount && b.pacing_expected !== null ? Math.min(100, (b.pacing_expected / b.budget_amount) * 100) : null;
  const label = pct === null ? `Spent ${amount(b.spend, b.currency)}; no budget known` : `Spent ${pct} % of the budget${expected !== null ? `; the plan by now is ${Math.round(expected)} %` : ''}`;
  const fill = Math.min(100, pct ?? 0);
  return html`<div class="spend" data-spend="${b.spend}" data-budget="${b.budget_amount ?? ''}" data-percent="${pct ?? ''}">
  <div class="spend-figures"><strong>${amount(b.spend, b.currency)}</strong> <span class="muted">of ${b.budget_amount === null ? '—' : money(b.budget_amount)}</span>${pct !== null ? html` <span class="spend-pct">${pct} %</span>` : ''}</div>
  <svg class="spend-bar" viewBox="0 0 100 8" preserveAspectRatio="none" role="img" aria-label="${label}"><rect width="100" height="8" rx="2" fill="#e6eaf0"/><rect width="${fill}" height="8" rx="2" fill="${BAR_TONES[b.pacing_state] ?? '#1f5fbf'}"/>${expected !== null ? html`<line x1="${expected}" x2="${expected}" y1="0" y2="8" stroke="#1b2330" stroke-width="2" vector-effect="non-scaling-stroke"/>` : ''}</svg>
</div>`;
}
