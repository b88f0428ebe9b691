/**
 * Timing policies: poll intervals, retry backoff and deadlines. Pure functions;
 * randomness is passed in so tests can pin it.
 */

/** Delay before the next poll of a `submitted` task: grows gently, capped at 8× the base, jittered upward only. */
export function pollDelayMs(pollCount: number, baseMs: number, random: () => number = Math.random): number {
  const grown = Math.min(baseMs * Math.pow(1.25, pollCount), baseMs * 8);
  return Math.round(grown * (1 + 0.2 * random()));
}

/**
 * Delay before retrying a failed send or poll: exponential from 1 s to 60 s with ±25% jitter,
 * never earlier than the seller's `retry_after` (AdCP spec, polling, timeouts, retries, reconciliation: jitter upward only there).
 */
export function retryDelayMs(attempt: number, retryAfterSeconds?: number, random: () => number = Math.random): number {
  const exp = Math.min(1000 * Math.pow(2, Math.max(0, attempt - 1)), 60_000);
  const jittered = Math.round(exp * (0.75 + 0.5 * random()));
  if (retryAfterSeconds !== undefined) {
    const floor = Math.ceil(Math.min(Math.max(retryAfterSeconds, 1), 3600)) * 1000;
    return floor + Math.round(floor * 0.1 * random());
  }
  return jittered;
}

/** Overall deadlines per task type (docs/ARCHITECTURE.md, What it is); others get the default. */
const HOUR = 3_600_000;
export const DEFAULT_DEADLINES_MS: Record<string, number> = {
  create_media_buy: 24 * HOUR,
  update_media_buy: 12 * HOUR,
  sync_creatives: 48 * HOUR,
};
export const FALLBACK_DEADLINE_MS = 24 * HOUR;

export function deadlineFor(type: string, createdAt: number, overrides: Record<string, number> = {}): number {
  return createdAt + (overrides[type] ?? DEFAULT_DEADLINES_MS[type] ?? overrides.default ?? FALLBACK_DEADLINE_MS);
}
