/**
 * A `create_media_buy` the seller says `completed` without naming the buy it made (no
 * `media_buy_id`): a real seller's webhook sent its `submitted` envelope as the result of
 * a completed task. Taken as the end, the purchase would be lost without a word, and the
 * seller's real completion never learned. It is not a create_media_buy success, so it is
 * not taken (observation-plan.ts): a conflict is recorded for people once, the task stays
 * observed (polled like a `submitted` one), and a completion with a `media_buy_id`, from
 * any path, completes it normally. If none comes within UNRESOLVED_COMPLETION_POLLS poll
 * intervals of the first such word, the operation is stalled for a person. Pure.
 */
import type { OperationRow } from '../store/operations-repo.js';

/** How many poll intervals a completion without a media_buy_id is given to resolve before a person is called. */
export const UNRESOLVED_COMPLETION_POLLS = 5;

/** Whether this observation says a create_media_buy completed without the buy it made. */
export function completesWithoutBuy(type: string, obs: { status: string; data?: Record<string, unknown> }): boolean {
  if (type !== 'create_media_buy' || obs.status !== 'completed') return false;
  const id = obs.data?.media_buy_id;
  return typeof id !== 'string' || id.length === 0;
}

/** When a person is called if the completion is still unresolved; null when there is nothing unresolved. */
export function unresolvedDeadline(row: Partial<Pick<OperationRow, 'unresolved_completion_at'>>, pollIntervalMs: number): number | null {
  return row.unresolved_completion_at == null ? null : row.unresolved_completion_at + UNRESOLVED_COMPLETION_POLLS * pollIntervalMs;
}

/** The stall owed now, if the completion is unresolved past its bound and the operation is not stalled yet. */
export function unresolvedStall(
  row: Pick<OperationRow, 'stalled' | 'type'> & Partial<Pick<OperationRow, 'unresolved_completion_at'>>,
  pollIntervalMs: number,
  now: number,
): { reason: string } | null {
  const deadline = unresolvedDeadline(row, pollIntervalMs);
  if (deadline === null || row.stalled === 1 || now < deadline) return null;
  const since = new Date(row.unresolved_completion_at!).toISOString();
  return {
    reason: `the seller said ${row.type} completed without a media_buy_id (at ${since}), and no completion naming the buy has come since: check the purchase at the seller`,
  };
}
