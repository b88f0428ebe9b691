/**
 * The arithmetic of the delivery chart (delivery-chart.ts), kept apart and pure so
 * that it can be tested on its own: linear scales, "nice" axis steps (1, 2, 2.5, 5
 * times a power of ten), time ticks that fall on round hours or days, and the short
 * labels an axis has room for.
 */

export interface LinearScale {
  (value: number): number;
  domain: readonly [number, number];
  range: readonly [number, number];
}

/** Maps [d0, d1] onto [r0, r1]; a zero-width domain maps everything to r0. */
export function linearScale(domain: readonly [number, number], range: readonly [number, number]): LinearScale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0;
  const scale = ((v: number) => (span === 0 ? r0 : r0 + ((v - d0) / span) * (r1 - r0))) as LinearScale;
  scale.domain = domain;
  scale.range = range;
  return scale;
}

const STEPS = [1, 2, 2.5, 5, 10];

/** The smallest "nice" step (1, 2, 2.5 or 5 × 10^k) at least `raw`; 1 for nothing to show. */
export function niceStep(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  // Rounding guards against 0.30000000000000004-style steps that miss by a hair.
  for (const s of STEPS) if (s * power >= raw * (1 - 1e-9)) return round12(s * power);
  return round12(10 * power);
}

/** An axis from 0 in `intervals` nice steps that holds `max`: {step, max, ticks}. */
export function niceAxis(max: number, intervals = 4): { step: number; max: number; ticks: number[] } {
  const step = niceStep(max / intervals);
  const ticks = Array.from({ length: intervals + 1 }, (_, i) => round12(i * step));
  return { step, max: ticks[intervals]!, ticks };
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Tick spacings a time axis may use, shortest first. */
const TIME_STEPS = [MINUTE, 5 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 91 * DAY, 182 * DAY, 365 * DAY];

/** Ticks on round UTC moments within [start, end], at most about `most` of them. */
export function timeTicks(start: number, end: number, most = 7): number[] {
  if (!(end > start)) return [start];
  const step = TIME_STEPS.find((s) => (end - start) / s <= most) ?? Math.ceil((end - start) / most / DAY) * DAY;
  const first = Math.ceil(start / step) * step;
  const ticks: number[] = [];
  for (let t = first; t <= end; t += step) ticks.push(t);
  return ticks;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** A tick's label for an axis spanning `span` ms: "14:00" within two days, "Mar 4" within a year, else "Mar 2027" (UTC). */
export function timeLabel(t: number, span: number): string {
  const d = new Date(t);
  if (span <= 2 * DAY) return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  if (span <= 400 * DAY) return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/** "950", "1.5k", "12k", "2.5M": what an axis label has room for. */
export function compactAmount(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1e9) return `${trim(n / 1e9)}B`;
  if (abs >= 1e6) return `${trim(n / 1e6)}M`;
  if (abs >= 1e3) return `${trim(n / 1e3)}k`;
  return trim(n);
}

function trim(n: number): string {
  return String(Math.round(n * 100) / 100);
}

function round12(n: number): number {
  return Math.round(n * 1e12) / 1e12;
}

/** A coordinate written into the SVG: two decimals are finer than a pixel. */
export function px(n: number): string {
  return String(Math.round(n * 100) / 100);
}
