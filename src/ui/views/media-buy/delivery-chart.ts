/**
 * A buy's delivery as a server-rendered SVG (no script, no chart library): spend per
 * reporting period as bars (right axis), cumulative spend as a line (left axis), and
 * the linear plan (the budget spread evenly over the flight, as pacing reads it:
 * src/domain/pacing.ts) as a dashed line on the cumulative axis. A restated period
 * is hatched, with the figure it replaced outlined. Colours are presentation
 * attributes, so the chart reads the same saved on its own; every figure drawn is
 * also a data attribute, so tests compare it with the API. The picture is described
 * in words (title, desc) for people who cannot see it; the reports table below it
 * holds every number.
 */
import { utc } from '../../format.js';
import { html, type SafeHtml } from '../../html.js';
import { money } from '../campaigns.js';
import { cumulative, type ChartPeriod } from './chart-data.js';
import { compactAmount, linearScale, niceAxis, px, timeLabel, timeTicks } from './chart-scale.js';

export interface DeliveryChartInput {
  periods: readonly ChartPeriod[];
  flightStart: number | null;
  flightEnd: number | null;
  budget: number | null;
  currency: string | null;
  /** What the chart is of, for its title (the seller's buy id). */
  label: string;
}

export const CHART = { width: 880, height: 300, top: 18, right: 66, bottom: 38, left: 66 } as const;
const PLOT = { x0: CHART.left, x1: CHART.width - CHART.right, y0: CHART.height - CHART.bottom, y1: CHART.top };

export const COLORS = {
  bar: '#b9cff2',
  barEdge: '#5b8fd9',
  adjusted: '#b35c00',
  adjustedFill: '#f6dcc0',
  line: '#173f7a',
  plan: '#5f6875',
  grid: '#e3e7ec',
  axis: '#5a6472',
  text: '#3e4753',
} as const;

/** Past this many periods the cumulative line has no marker per period. */
export const MAX_MARKERS = 120;

const FONT = 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif';

/** The time span the chart covers: the flight, widened to hold every period reported. */
export function timeDomain(input: Pick<DeliveryChartInput, 'periods' | 'flightStart' | 'flightEnd'>): [number, number] | null {
  const starts = [input.flightStart, ...input.periods.map((p) => p.start)].filter((v): v is number => v !== null);
  const ends = [input.flightEnd, ...input.periods.map((p) => p.end)].filter((v): v is number => v !== null);
  if (starts.length === 0 || ends.length === 0) return null;
  const start = Math.min(...starts);
  const end = Math.max(...ends);
  return end > start ? [start, end] : null;
}

/** The linear plan's spend by `t`: the budget times the elapsed fraction of the flight. */
export function planAt(t: number, budget: number, flightStart: number, flightEnd: number): number {
  const f = Math.min(1, Math.max(0, (t - flightStart) / (flightEnd - flightStart)));
  return Math.round(budget * f * 10_000) / 10_000;
}

function amount(n: number, currency: string | null): string {
  return `${money(n)}${currency ? ` ${currency}` : ''}`;
}

/** "2026-06-01 13:00–14:00 UTC", or with both dates when the period spans days. */
export function periodRange(start: number, end: number): string {
  const a = utc(start).slice(0, 16);
  const b = utc(end).slice(0, 16);
  return a.slice(0, 10) === b.slice(0, 10) ? `${a}–${b.slice(11)} UTC` : `${a} – ${b} UTC`;
}

function periodText(p: ChartPeriod, currency: string | null): string {
  const was = p.replaced !== undefined ? `; was ${amount(p.replaced, currency)}` : '';
  return `${periodRange(p.start, p.end)}: ${amount(p.spend, currency)}, ${money(p.impressions)} impressions${p.adjusted ? ` (restated${was})` : ''}`;
}

function describe(input: DeliveryChartInput, totals: number[], hasPlan: boolean): string {
  const { periods, budget, currency, flightStart, flightEnd } = input;
  const plan = hasPlan ? `the linear plan spreads ${amount(budget!, currency)} evenly from ${utc(flightStart!)} to ${utc(flightEnd!)}` : 'there is no plan line (the buy has no budget or flight)';
  if (periods.length === 0) return `No delivery reported yet; ${plan}.`;
  const last = periods[periods.length - 1]!;
  const spent = totals[totals.length - 1]!;
  const share = budget ? ` of ${amount(budget, currency)} budgeted (${Math.round((spent / budget) * 100)} %)` : '';
  const byThen = hasPlan ? `; the plan by then: ${amount(planAt(last.end, budget!, flightStart!, flightEnd!), currency)}` : '';
  const restated = periods.filter((p) => p.adjusted).length;
  return (
    `Spend per reporting period (bars, right axis) and cumulative spend (line, left axis); ${plan}. ` +
    `${periods.length} period${periods.length === 1 ? '' : 's'} reported through ${utc(last.end)}: ${amount(spent, currency)}${share}${byThen}.` +
    (restated ? ` ${restated} period${restated === 1 ? ' was' : 's were'} restated (hatched).` : '')
  );
}

export function deliveryChart(input: DeliveryChartInput): SafeHtml {
  const { periods, budget, currency, flightStart, flightEnd } = input;
  const totals = cumulative(periods);
  const hasPlan = budget !== null && budget > 0 && flightStart !== null && flightEnd !== null && flightEnd > flightStart;
  const domain = timeDomain(input);
  const x = linearScale(domain ?? [0, 1], [PLOT.x0, PLOT.x1]);
  const left = niceAxis(Math.max(hasPlan ? budget! : 0, totals[totals.length - 1] ?? 0, 0));
  const right = niceAxis(Math.max(0, ...periods.map((p) => Math.max(p.spend, p.replaced ?? 0))));
  const yCum = linearScale([0, left.max], [PLOT.y0, PLOT.y1]);
  const yPer = linearScale([0, right.max], [PLOT.y0, PLOT.y1]);
  const unit = currency ? ` (${currency})` : '';

  const grid = left.ticks.map(
    (t) => html`<line x1="${PLOT.x0}" x2="${PLOT.x1}" y1="${px(yCum(t))}" y2="${px(yCum(t))}" stroke="${COLORS.grid}" stroke-width="1"/>
<text x="${PLOT.x0 - 8}" y="${px(yCum(t) + 4)}" text-anchor="end" class="tick tick-left">${compactAmount(t)}</text>`,
  );
  const rightTicks =
    periods.length === 0
      ? ''
      : right.ticks.map((t) => html`<text x="${PLOT.x1 + 8}" y="${px(yPer(t) + 4)}" text-anchor="start" class="tick tick-right">${compactAmount(t)}</text>`);
  const span = domain ? domain[1] - domain[0] : 0;
  const xTicks = domain
    ? timeTicks(domain[0], domain[1]).map(
        (t) => html`<line x1="${px(x(t))}" x2="${px(x(t))}" y1="${PLOT.y0}" y2="${PLOT.y0 + 5}" stroke="${COLORS.axis}"/>
<text x="${px(x(t))}" y="${PLOT.y0 + 19}" text-anchor="middle" class="tick tick-time">${timeLabel(t, span)}</text>`,
      )
    : '';

  const bars = periods.map((p) => {
    const xa = x(p.start);
    const xb = x(p.end);
    const gap = Math.min(2, (xb - xa) * 0.12);
    const w = Math.max(1, xb - xa - 2 * gap);
    const y = yPer(p.spend);
    const ghost =
      p.replaced !== undefined
        ? html`<rect class="bar-replaced" x="${px(xa + gap)}" y="${px(yPer(p.replaced))}" width="${px(w)}" height="${px(PLOT.y0 - yPer(p.replaced))}" fill="none" stroke="${COLORS.adjusted}" stroke-width="1.25" stroke-dasharray="4 3"/>`
        : '';
    return html`<g class="period"><title>${periodText(p, currency)}</title>
<rect class="bar${p.adjusted ? ' bar-adjusted' : ''}" x="${px(xa + gap)}" y="${px(y)}" width="${px(w)}" height="${px(PLOT.y0 - y)}" rx="${w > 6 ? 2 : 0}" fill="${p.adjusted ? 'url(#dc-hatch)' : COLORS.bar}" stroke="${p.adjusted ? COLORS.adjusted : COLORS.barEdge}" stroke-width="1" data-report-id="${p.id}" data-period-start="${new Date(p.start).toISOString()}" data-period-end="${new Date(p.end).toISOString()}" data-spend="${p.spend}" data-impressions="${p.impressions}" data-adjusted="${String(p.adjusted)}"${p.replaced !== undefined ? html` data-replaced="${p.replaced}"` : ''}/>${ghost}</g>`;
  });

  const plan = hasPlan
    ? html`<line class="plan" x1="${px(x(flightStart!))}" y1="${px(yCum(0))}" x2="${px(x(flightEnd!))}" y2="${px(yCum(budget!))}" stroke="${COLORS.plan}" stroke-width="2" stroke-dasharray="7 5" data-budget="${budget!}"/>
<line class="budget-line" x1="${PLOT.x0}" x2="${PLOT.x1}" y1="${px(yCum(budget!))}" y2="${px(yCum(budget!))}" stroke="${COLORS.plan}" stroke-width="1" stroke-dasharray="2 4"/>
<text x="${PLOT.x0 + 6}" y="${px(yCum(budget!) - 6)}" class="tick budget-label">budget ${compactAmount(budget!)}</text>`
    : '';

  let line: SafeHtml | string = '';
  if (periods.length > 0) {
    const origin = hasPlan ? Math.min(flightStart!, periods[0]!.start) : periods[0]!.start;
    const points = [[x(origin), yCum(0)], ...periods.map((p, i) => [x(p.end), yCum(totals[i]!)])].map(([a, b]) => `${px(a!)},${px(b!)}`).join(' ');
    const last = periods[periods.length - 1]!;
    const expected = hasPlan ? planAt(last.end, budget!, flightStart!, flightEnd!) : null;
    // A marker per period while they are far enough apart to tell; a long flight's line speaks for itself.
    const markers = periods.length <= MAX_MARKERS;
    line = html`<polyline class="cumulative" points="${points}" fill="none" stroke="${COLORS.line}" stroke-width="2.5" stroke-linejoin="round" stroke-linecap="round"/>
${!markers ? '' : periods.map(
  (p, i) =>
    html`<circle class="cumulative-point" cx="${px(x(p.end))}" cy="${px(yCum(totals[i]!))}" r="3.5" fill="#fff" stroke="${COLORS.line}" stroke-width="2" data-through="${new Date(p.end).toISOString()}" data-cumulative="${totals[i]!}"><title>${`Through ${utc(p.end)}: ${amount(totals[i]!, currency)} spent`}</title></circle>`,
)}
${expected !== null ? html`<circle class="plan-point" cx="${px(x(last.end))}" cy="${px(yCum(expected))}" r="4" fill="${COLORS.plan}" data-expected="${expected}"><title>${`Plan by ${utc(last.end)}: ${amount(expected, currency)}`}</title></circle>` : ''}`;
  }

  const empty = periods.length === 0 ? html`<text x="${px((PLOT.x0 + PLOT.x1) / 2)}" y="${px((PLOT.y0 + PLOT.y1) / 2)}" text-anchor="middle" class="empty-note" font-size="15" fill="${COLORS.text}">No delivery reported yet</text>` : '';

  return html`<svg class="delivery-chart" viewBox="0 0 ${CHART.width} ${CHART.height}" width="100%" role="img" aria-labelledby="dc-title dc-desc" font-family="${FONT}" font-size="12" fill="${COLORS.text}" data-periods="${periods.length}" data-budget="${budget ?? ''}" data-flight-start="${flightStart === null ? '' : new Date(flightStart).toISOString()}" data-flight-end="${flightEnd === null ? '' : new Date(flightEnd).toISOString()}" data-spend="${totals[totals.length - 1] ?? 0}">
<title id="dc-title">Delivery of ${input.label}: spend per period and cumulative, against the plan</title>
<desc id="dc-desc">${describe(input, totals, hasPlan)}</desc>
<defs><pattern id="dc-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="${COLORS.adjustedFill}"/><line x1="0" y1="0" x2="0" y2="6" stroke="${COLORS.adjusted}" stroke-width="2"/></pattern></defs>
<g class="grid">${grid}</g>
${rightTicks ? html`<g class="axis-right">${rightTicks}</g>` : ''}
<g class="bars">${bars}</g>
${plan}
${line}
<line x1="${PLOT.x0}" x2="${PLOT.x1}" y1="${PLOT.y0}" y2="${PLOT.y0}" stroke="${COLORS.axis}" stroke-width="1"/>
<g class="axis-time">${xTicks}</g>
<text class="axis-title" transform="translate(16 ${px((PLOT.y0 + PLOT.y1) / 2)}) rotate(-90)" text-anchor="middle" fill="${COLORS.line}" font-weight="600">Cumulative${unit}</text>
${periods.length > 0 ? html`<text class="axis-title" transform="translate(${CHART.width - 12} ${px((PLOT.y0 + PLOT.y1) / 2)}) rotate(90)" text-anchor="middle" fill="#2f5f9e" font-weight="600">Per period${unit}</text>` : ''}
${empty}
</svg>`;
}
