/**
 * What a completed `update_media_buy` tells us of the buy it changed, read from its
 * reply and, where the reply is silent, from what was asked. Pure.
 *
 * AdCP 3.0 answers an update with `{media_buy_id, status?, revision?,
 * implementation_date?, affected_packages?}`; 3.1 names the buy's status
 * `media_buy_status`, beside the envelope's task `status`. The buy's status is:
 *
 * - `media_buy_status`, when it is a media-buy status (3.1+);
 * - else the root `status`, when it is a media-buy status other than `completed`.
 *   `completed` is also the task's status word, which a reply may carry at its root
 *   (the envelope's, merged into the payload), and classify.ts reads it so: taken
 *   as the buy's, it would end the buy for good (a terminal status is absorbing).
 *   No pause, resume or cancel completes a buy, so nothing true is lost: the status
 *   read that follows every update says it if the flight did end. (A root
 *   `canceled` beside the buy's id is the buy's: classify.ts reads it so too.)
 * - else what the request implies: `canceled: true` → `canceled`, `paused: true` →
 *   `paused`. `paused: false` does not say which status the buy returns to (active,
 *   or still pending_start or pending_creatives): the caller decides (`resumed`).
 */
import { isMediaBuyStatus, type MediaBuyStatus } from './media-buy-status.js';

type Json = Record<string, unknown>;

export interface UpdateReplyFacts {
  /** The buy's status after the update, when the reply states it or the request implies it. */
  status?: MediaBuyStatus;
  /** Whether `status` is the seller's own word (false: implied by the request). */
  stated: boolean;
  /** A resume the reply gave no status for: the buy is no longer paused, but its status is not said. */
  resumed: boolean;
  revision?: number;
  valid_actions?: string[];
  /** `affected_packages` as the seller listed them ({package_id, paused, …}), for mergePackages. */
  packages?: unknown[];
}

export function readUpdateReply(request: Json, reply: Json): UpdateReplyFacts {
  const facts: UpdateReplyFacts = { stated: false, resumed: false };
  const stated = statedStatus(reply);
  if (stated) {
    facts.status = stated;
    facts.stated = true;
  } else if (request.canceled === true) {
    facts.status = 'canceled';
  } else if (request.paused === true) {
    facts.status = 'paused';
  } else if (request.paused === false) {
    facts.resumed = true;
  }
  if (typeof reply.revision === 'number' && Number.isInteger(reply.revision)) facts.revision = reply.revision;
  if (Array.isArray(reply.valid_actions)) facts.valid_actions = reply.valid_actions.filter((a): a is string => typeof a === 'string');
  if (Array.isArray(reply.affected_packages)) facts.packages = reply.affected_packages;
  return facts;
}

/**
 * The buy's status a create's or an update's reply states: `media_buy_status` (3.1+), else
 * a root `status` that is a buy status other than the task word `completed` (3.0; in 3.2 the
 * root `status` is the task's alone, and such replies carry `media_buy_status`).
 */
export function statedStatus(reply: Json): MediaBuyStatus | undefined {
  if (isMediaBuyStatus(reply.media_buy_status)) return reply.media_buy_status;
  // With `media_buy_status` present but not a buy status, the root `status` is the task's: not read.
  if (reply.media_buy_status !== undefined) return undefined;
  if (isMediaBuyStatus(reply.status) && reply.status !== 'completed') return reply.status;
  return undefined;
}
