/**
 * The buy page's delivery chart (server-rendered SVG): its scales, and what it draws
 * for an empty buy, a buy with one period, several periods, and a restated period.
 * The SVG is read back by its attributes, as a browser would lay it out.
 */
import { describe, expect, it } from 'vitest';
import { chartPeriods, type ChartPeriod, type ChartReportSource } from '../../../src/ui/views/media-buy/chart-data.js';
import { compactAmount, linearScale, niceAxis, niceStep, timeLabel, timeTicks } from '../../../src/ui/views/media-buy/chart-scale.js';
import { CHART, deliveryChart, MAX_MARKERS, periodRange, planAt, timeDomain, type DeliveryChartInput } from '../../../src/ui/views/media-buy/delivery-chart.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-06-01T12:00:00Z');
const PLOT = { x0: CHART.left, x1: CHART.width - CHART.right, y0: CHART.height - CHART.bottom, y1: CHART.top };

/** Every element named `tag` (with `class` containing `cls`, when given), as attribute maps. */
function elements(svg: string, tag: string, cls?: string): Array<Record<string, string>> {
  const out: Array<Record<string, string>> = [];
  for (const m of svg.matchAll(new RegExp(`<${tag}\\b([^>]*?)/?>`, 'g'))) {
    const attrs: Record<string, string> = {};
    for (const a of m[1]!.matchAll(/([\w:-]+)="([^"]*)"/g)) attrs[a[1]!] = a[2]!;
    if (cls === undefined || (attrs.class ?? '').split(' ').includes(cls)) out.push(attrs);
  }
  return out;
}
const num = (s: string | undefined) => Number(s);

function period(i: number, spend: number, over: Partial<ChartPeriod> = {}): ChartPeriod {
  return { id: `rpt_${i}`, start: T0 + i * HOUR, end: T0 + (i + 1) * HOUR, spend, impressions: spend * 100, adjusted: false, ...over };
}

const base: DeliveryChartInput = { periods: [], flightStart: T0, flightEnd: T0 + 8 * HOUR, budget: 8000, currency: 'USD', label: 'media buy mb_1' };

describe('chart scales', () => {
  it('maps a domain onto a range linearly, and a zero-width domain to the range start', () => {
    const s = linearScale([0, 200], [100, 500]);
    expect([s(0), s(50), s(200), s(300)]).toEqual([100, 200, 500, 700]);
    expect(linearScale([5, 5], [10, 90])(5)).toBe(10);
  });

  it('picks nice steps (1, 2, 2.5, 5 × 10^k) and axes from 0 that hold the maximum', () => {
    expect([niceStep(0.3), niceStep(1), niceStep(1.2), niceStep(2.2), niceStep(3), niceStep(7), niceStep(2500), niceStep(2501)]).toEqual([0.5, 1, 2, 2.5, 5, 10, 2500, 5000]);
    expect(niceAxis(8000)).toEqual({ step: 2000, max: 8000, ticks: [0, 2000, 4000, 6000, 8000] });
    expect(niceAxis(1300)).toMatchObject({ step: 500, max: 2000 });
    expect(niceAxis(0)).toEqual({ step: 1, max: 4, ticks: [0, 1, 2, 3, 4] });
    expect(niceAxis(0.7).ticks).toEqual([0, 0.2, 0.4, 0.6, 0.8]);
  });

  it('puts time ticks on round UTC moments inside the span, and labels them for the span', () => {
    expect(timeTicks(T0 + 5 * 60_000, T0 + 8 * HOUR + 5 * 60_000).map((t) => new Date(t).toISOString().slice(11, 16))).toEqual(['14:00', '16:00', '18:00', '20:00']);
    const days = timeTicks(Date.parse('2026-03-01T00:00:00Z'), Date.parse('2026-03-31T00:00:00Z'));
    expect(days.length).toBeLessThanOrEqual(7);
    expect(days.every((t) => t % 86_400_000 === 0)).toBe(true);
    expect(timeLabel(T0 + 2 * HOUR, 8 * HOUR)).toBe('14:00');
    expect(timeLabel(T0, 30 * 24 * HOUR)).toBe('Jun 1');
    expect(timeLabel(T0, 800 * 24 * HOUR)).toBe('Jun 2026');
    expect(timeTicks(T0, T0)).toEqual([T0]);
  });

  it('writes amounts short enough for an axis', () => {
    expect([0, 950, 1500, 12_000, 2_500_000, 0.25].map(compactAmount)).toEqual(['0', '950', '1.5k', '12k', '2.5M', '0.25']);
  });
});

describe('which reports the chart draws', () => {
  const report = (id: string, start: number, spend: number, over: Partial<ChartReportSource> = {}): ChartReportSource => ({
    id,
    kind: 'period',
    notification_type: 'scheduled',
    period_start: start,
    period_end: start + HOUR,
    impressions: spend * 100,
    spend,
    is_adjusted: 0,
    superseded_by: null,
    received_at: start + HOUR,
    ...over,
  });

  it('draws the periods the ledger counts, in time order; restatements marked with what they replaced; snapshots left out', () => {
    const periods = chartPeriods([
      report('b', T0 + HOUR, 200),
      report('a', T0, 100, { superseded_by: 'a2' }),
      report('a2', T0, 80, { notification_type: 'adjusted', is_adjusted: 1, received_at: T0 + 5 * HOUR }),
      report('s', T0, 999, { kind: 'snapshot', notification_type: null }),
      report('c', T0 + 2 * HOUR, 50, { notification_type: 'window_update' }),
    ]);
    expect(periods.map((p) => [p.id, p.spend, p.adjusted, p.replaced])).toEqual([
      ['a2', 80, true, 100],
      ['b', 200, false, undefined],
      ['c', 50, true, undefined],
    ]);
  });

  it('takes a report that superseded another as a restatement even when it says scheduled', () => {
    const [p] = chartPeriods([report('x', T0, 10, { superseded_by: 'y', received_at: T0 }), report('y', T0, 12)]);
    expect(p).toMatchObject({ id: 'y', adjusted: true, replaced: 10 });
  });
});

describe('the delivery chart', () => {
  it('an empty buy: the plan line over the flight, no bars, no line, and says so in words', () => {
    const svg = deliveryChart(base).value;
    expect(elements(svg, 'rect', 'bar')).toEqual([]);
    expect(elements(svg, 'polyline')).toEqual([]);
    const [plan] = elements(svg, 'line', 'plan');
    expect([num(plan!.x1), num(plan!.y1), num(plan!.x2)]).toEqual([PLOT.x0, PLOT.y0, PLOT.x1]);
    // The left axis ends at the budget (8,000 in four steps of 2,000): the plan ends at the top.
    expect(num(plan!.y2)).toBeCloseTo(PLOT.y1, 5);
    expect(svg).toContain('No delivery reported yet');
    expect(svg).toMatch(/<desc id="dc-desc">No delivery reported yet; the linear plan spreads 8,000 USD evenly/);
    expect(svg).toContain('role="img"');
    expect(svg).toContain('aria-labelledby="dc-title dc-desc"');
    expect(svg).not.toMatch(/NaN|Infinity|undefined/);
  });

  it('an empty buy without budget or flight: a frame and a note, nothing drawn from missing numbers', () => {
    const svg = deliveryChart({ ...base, flightStart: null, flightEnd: null, budget: null, currency: null }).value;
    expect(elements(svg, 'line', 'plan')).toEqual([]);
    expect(svg).toContain('there is no plan line');
    expect(svg).not.toMatch(/NaN|Infinity|undefined/);
    expect(timeDomain({ periods: [], flightStart: null, flightEnd: null })).toBeNull();
  });

  it('one period: a bar spanning its hour on the time axis, as tall as its spend on the per-period axis, and a line from the flight start', () => {
    const svg = deliveryChart({ ...base, periods: [period(0, 1000)] }).value;
    const bars = elements(svg, 'rect', 'bar');
    expect(bars).toHaveLength(1);
    const bar = bars[0]!;
    const x = linearScale([T0, T0 + 8 * HOUR], [PLOT.x0, PLOT.x1]);
    const hourWidth = x(T0 + HOUR) - x(T0);
    // Inside its hour, with a small gap each side.
    expect(num(bar.x)).toBeGreaterThanOrEqual(x(T0));
    expect(num(bar.x) + num(bar.width)).toBeLessThanOrEqual(x(T0 + HOUR) + 0.01);
    expect(num(bar.width)).toBeGreaterThan(hourWidth * 0.7);
    // The per-period axis is 0–1,000 (four steps of 250): the bar reaches the top.
    expect(num(bar.y)).toBeCloseTo(PLOT.y1, 1);
    expect(num(bar.y) + num(bar.height)).toBeCloseTo(PLOT.y0, 1);
    expect(bar).toMatchObject({ 'data-spend': '1000', 'data-period-start': new Date(T0).toISOString(), 'data-period-end': new Date(T0 + HOUR).toISOString(), 'data-adjusted': 'false' });
    const [line] = elements(svg, 'polyline', 'cumulative');
    const points = line!.points!.split(' ').map((p) => p.split(',').map(Number));
    expect(points).toHaveLength(2);
    expect(points[0]).toEqual([PLOT.x0, PLOT.y0]);
    // 1,000 cumulative on the 0–8,000 left axis: an eighth of the way up.
    expect(points[1]![1]).toBeCloseTo(PLOT.y0 - (PLOT.y0 - PLOT.y1) / 8, 1);
    const [expected] = elements(svg, 'circle', 'plan-point');
    expect(num(expected!['data-expected'])).toBe(planAt(T0 + HOUR, 8000, T0, T0 + 8 * HOUR));
    expect(num(expected!['data-expected'])).toBe(1000);
  });

  it('several periods: bar heights in proportion to spend, the cumulative line adds them up, the figures are data attributes', () => {
    const periods = [period(0, 900), period(1, 1200), period(2, 600)];
    const svg = deliveryChart({ ...base, periods }).value;
    const bars = elements(svg, 'rect', 'bar');
    expect(bars.map((b) => num(b['data-spend']))).toEqual([900, 1200, 600]);
    const h = bars.map((b) => num(b.height));
    expect(h[0]! / h[1]!).toBeCloseTo(900 / 1200, 2);
    expect(h[2]! / h[1]!).toBeCloseTo(600 / 1200, 2);
    expect(elements(svg, 'circle', 'cumulative-point').map((c) => num(c['data-cumulative']))).toEqual([900, 2100, 2700]);
    // Left axis 0–8,000: the last point at 2,700 / 8,000 of the height.
    const last = elements(svg, 'circle', 'cumulative-point')[2]!;
    expect(num(last.cy)).toBeCloseTo(PLOT.y0 - ((PLOT.y0 - PLOT.y1) * 2700) / 8000, 1);
    // Right axis labels: 0–1,250 per period in steps of ~312.5 → nice 500: 0, 500, 1k, 1.5k, 2k.
    expect([...svg.matchAll(/class="tick tick-right">([^<]+)</g)].map((m) => m[1])).toEqual(['0', '500', '1k', '1.5k', '2k']);
    expect([...svg.matchAll(/class="tick tick-left">([^<]+)</g)].map((m) => m[1])).toEqual(['0', '2k', '4k', '6k', '8k']);
    const root = elements(svg, 'svg')[0]!;
    expect(root).toMatchObject({ 'data-periods': '3', 'data-spend': '2700', 'data-budget': '8000' });
    expect(svg).toContain('3 periods reported through 2026-06-01 15:00:00 UTC: 2,700 USD of 8,000 USD budgeted (34 %)');
  });

  it('a restated period: hatched, marked, with the figure it replaced outlined at its old height', () => {
    const periods = [period(0, 1000), period(1, 800, { adjusted: true, replaced: 1000 })];
    const svg = deliveryChart({ ...base, periods }).value;
    const adjusted = elements(svg, 'rect', 'bar-adjusted');
    expect(adjusted).toHaveLength(1);
    expect(adjusted[0]).toMatchObject({ 'data-adjusted': 'true', 'data-replaced': '1000', fill: 'url(#dc-hatch)', 'data-spend': '800' });
    const [ghost] = elements(svg, 'rect', 'bar-replaced');
    const plain = elements(svg, 'rect', 'bar').find((b) => b['data-adjusted'] === 'false')!;
    // The outline stands where the replaced 1,000 stood: as tall as the other 1,000 bar.
    expect(num(ghost!.height)).toBeCloseTo(num(plain.height), 5);
    expect(num(adjusted[0]!.height)).toBeCloseTo(num(plain.height) * 0.8, 1);
    expect(svg).toContain('<pattern id="dc-hatch"');
    expect(svg).toContain('1 period was restated');
    expect(svg).toMatch(/<title>2026-06-01 13:00–14:00 UTC: 800 USD, 80,000 impressions \(restated; was 1,000 USD\)<\/title>/);
  });

  it('leaves out the per-period markers of a long flight, keeping its line and bars', () => {
    const periods = Array.from({ length: MAX_MARKERS + 1 }, (_, i) => period(i, 10));
    const svg = deliveryChart({ ...base, flightEnd: T0 + periods.length * HOUR, periods }).value;
    expect(elements(svg, 'rect', 'bar')).toHaveLength(MAX_MARKERS + 1);
    expect(elements(svg, 'circle', 'cumulative-point')).toEqual([]);
    expect(elements(svg, 'polyline', 'cumulative')[0]!.points!.split(' ')).toHaveLength(MAX_MARKERS + 2);
    expect(periodRange(T0, T0 + 30 * HOUR)).toBe('2026-06-01 12:00 – 2026-06-02 18:00 UTC');
  });

  it('widens the time axis to hold periods reported outside the flight', () => {
    const periods = [period(-1, 100), period(9, 100)];
    expect(timeDomain({ ...base, periods })).toEqual([T0 - HOUR, T0 + 10 * HOUR]);
    const bars = elements(deliveryChart({ ...base, periods }).value, 'rect', 'bar');
    expect(num(bars[0]!.x)).toBeGreaterThanOrEqual(PLOT.x0);
    expect(num(bars[1]!.x) + num(bars[1]!.width)).toBeLessThanOrEqual(PLOT.x1 + 0.01);
  });

  it('escapes what it is told (a seller’s currency, a label)', () => {
    const svg = deliveryChart({ ...base, label: '<script>alert(1)</script>', currency: '"><img src=x onerror=alert(1)>', periods: [period(0, 5)] }).value;
    expect(svg).not.toContain('<script>');
    expect(svg).not.toContain('<img');
    expect(svg).toContain('&lt;script&gt;');
  });
});
