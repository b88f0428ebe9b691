/**
 * The rows every bench prints for a figure judged against its durable floor
 * (BENCHMARKS.md, Targets): floor and ours side by side, the ratio, the target and
 * PASS/MISS, the same shape in every script. The ratio is always ours ÷ floor: for a
 * rate the target is a lower bound (≥ 0.6×), for a latency an upper bound (≤ 1.3×).
 */
import { fmt, median, type ResultRow } from './common.js';

export interface FloorComparison {
  /** What is measured, e.g. "webhook ingest, HMAC, acknowledged and applied". */
  figure: string;
  /** Floor and ours, already formatted with their unit. */
  floor: string;
  ours: string;
  /** Ours ÷ floor: the figure that counts. */
  ratio: number;
  /** How the ratio was taken, e.g. "median of 3 alternating rounds". */
  how: string;
  target: { cmp: '≥' | '≤'; value: number };
  /** A figure that counts only with its correctness checks: false turns PASS into MISS. */
  checksPassed?: boolean;
}

export function floorRows(c: FloorComparison): ResultRow[] {
  const meets = c.target.cmp === '≥' ? c.ratio >= c.target.value : c.ratio <= c.target.value;
  const checksNote = c.checksPassed === false ? ' (checks failed: does not count)' : '';
  return [
    { figure: `${c.figure}: floor / ours`, value: `${c.floor} / ${c.ours}` },
    {
      figure: `  ratio ours / floor, ${c.how}${checksNote}`,
      value: `${c.ratio.toFixed(3)}×`,
      target: `${c.target.cmp} ${c.target.value}× floor`,
      pass: meets && c.checksPassed !== false,
    },
  ];
}

/** Per-round rates → the ratio of record (median of per-round ratios) and how it was taken. */
export function roundRatios(floorPerRound: number[], oursPerRound: number[]): { ratio: number; how: string } {
  const ratios = oursPerRound.map((o, i) => o / floorPerRound[i]!);
  const each = ratios.map((r) => r.toFixed(2)).join(' / ');
  return {
    ratio: median(ratios),
    how: ratios.length === 1 ? '1 round' : `median of ${ratios.length} alternating rounds (${each})`,
  };
}

export const perSecond = (n: number) => `${fmt(n)}/s`;
export const ms = (n: number) => `${n.toFixed(2)} ms`;
