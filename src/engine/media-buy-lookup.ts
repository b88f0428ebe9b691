/**
 * Looking a media buy up by its natural key before resending an ambiguous
 * create_media_buy whose idempotency key the seller may have forgotten
 * (AdCP spec, requests: past the replay TTL a resend can run twice).
 *
 * `get_media_buys` has no field for our key or request, so "the same buy" is
 * judged from what the request fixed: the account, the flight and the packages
 * (product and budget), created no earlier than our first send. Any match is
 * treated as possibly ours: a person confirms, we never guess. Only when the
 * seller shows no such buy is a resend safe.
 */
import { ALL_BUY_STATUSES } from '../adcp/media-buy-reads.js';
import type { AdcpClient, AgentEndpoint } from '../adcp/types.js';

export type LookupVerdict =
  | { kind: 'absent' }
  | { kind: 'candidates'; mediaBuyIds: string[] }
  | { kind: 'unavailable'; reason: string };

/** Why a resend is not safe, for a verdict other than `absent` (the operation is escalated with it). */
export function unsafeResendReason(verdict: Exclude<LookupVerdict, { kind: 'absent' }>): string {
  return verdict.kind === 'candidates'
    ? `ambiguous send past the seller's idempotency replay window; the seller has media buys that may be this one (${verdict.mediaBuyIds.join(', ')}): confirm before resending`
    : `ambiguous send past the seller's idempotency replay window and no lookup was possible (${verdict.reason}); check the seller before resending`;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Clocks differ; a buy stamped a little before our send can still be ours. */
const CLOCK_SLACK_MS = 5 * 60_000;
const MAX_PAGES = 20;

function packageKey(p: unknown): string {
  return isObject(p) ? `${String(p.product_id)}:${String(p.budget ?? '')}` : '?';
}

/** Does the seller's buy look like the one our request would have made? */
export function couldBeOurs(request: Json, buy: Json, sentAt: number): boolean {
  const account = isObject(request.account) ? request.account.account_id : undefined;
  const buyAccount = isObject(buy.account) ? buy.account.account_id : undefined;
  if (account !== undefined && buyAccount !== undefined && account !== buyAccount) return false;
  if (request.start_time !== 'asap' && buy.start_time !== undefined && request.start_time !== buy.start_time) return false;
  if (buy.end_time !== undefined && request.end_time !== buy.end_time) return false;
  const created = typeof buy.created_at === 'string' ? Date.parse(buy.created_at) : NaN;
  if (!Number.isNaN(created) && created < sentAt - CLOCK_SLACK_MS) return false;
  const ours = (Array.isArray(request.packages) ? request.packages : []).map(packageKey).sort();
  const theirs = (Array.isArray(buy.packages) ? buy.packages : []).map(packageKey).sort();
  return ours.length === 0 || JSON.stringify(ours) === JSON.stringify(theirs);
}

/**
 * The `get_media_buys` page that lists the account's buys (the create request's `account`), from `cursor` on.
 * Every status is named: without `media_buy_ids` a seller lists only `active` buys by default, and the
 * buy we look for has just been created (pending_creatives, pending_start): left out, it would look
 * absent and the resend could buy twice.
 */
export function lookupArgs(request: Json, cursor?: string): Json {
  return {
    ...(request.account !== undefined ? { account: request.account } : {}),
    status_filter: ALL_BUY_STATUSES,
    ...(cursor ? { pagination: { cursor } } : {}),
  };
}

export async function lookUpMediaBuy(adcp: AdcpClient, agent: AgentEndpoint, request: Json, sentAt: number, timeoutMs: number): Promise<LookupVerdict> {
  const candidates: string[] = [];
  let cursor: string | undefined;
  try {
    for (let page = 0; page < MAX_PAGES; page++) {
      const reply = await adcp.callTask(agent, 'get_media_buys', lookupArgs(request, cursor), { timeoutMs });
      if (reply.error || reply.status !== 'completed') return { kind: 'unavailable', reason: `get_media_buys answered ${reply.error?.code ?? reply.status}` };
      const buys = Array.isArray(reply.data.media_buys) ? reply.data.media_buys : [];
      for (const b of buys) if (isObject(b) && couldBeOurs(request, b, sentAt)) candidates.push(String(b.media_buy_id));
      const pagination = isObject(reply.data.pagination) ? reply.data.pagination : {};
      if (pagination.has_more !== true || typeof pagination.cursor !== 'string') {
        return candidates.length ? { kind: 'candidates', mediaBuyIds: candidates } : { kind: 'absent' };
      }
      cursor = pagination.cursor;
    }
    return { kind: 'unavailable', reason: `more than ${MAX_PAGES} pages of media buys` };
  } catch (err) {
    return { kind: 'unavailable', reason: `get_media_buys failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}
