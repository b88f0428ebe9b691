/**
 * Looking a media buy up by its natural key before resending an ambiguous
 * create_media_buy whose idempotency key the seller may have forgotten
 * (AdCP spec, requests: past the replay TTL a resend can run twice).
 *
 * A seller that echoes each buy's `context` on `get_media_buys` (AdCP 3.1 requires it)
 * tells us which buy is ours: the one whose context carries our operation id is found
 * and can be bound; one carrying another operation's id is not ours. Otherwise
 * `get_media_buys` has no field for our key or request, so "the same buy" is judged
 * from what the request fixed: the account, the flight and the packages (product and
 * budget), created no earlier than our first send. Any such match is treated as
 * possibly ours: a person confirms, we never guess. Only when the seller shows no
 * such buy is a resend safe.
 */
import { ALL_BUY_STATUSES } from '../adcp/media-buy-reads.js';
import type { AdcpClient, AgentEndpoint } from '../adcp/types.js';
import type { LookupVerdict } from './outcome-lookup.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Clocks differ; a buy stamped a little before our send can still be ours. */
const CLOCK_SLACK_MS = 5 * 60_000;
const MAX_PAGES = 20;

function packageKey(p: unknown): string {
  return isObject(p) ? `${String(p.product_id)}:${String(p.budget ?? '')}` : '?';
}

/** The operation id our request put in `context` (operation-builder.ts), as a seller echoes it on the buy. */
export function operationIdIn(context: unknown): string | undefined {
  return isObject(context) && typeof context.orchestrator_operation_id === 'string' ? context.orchestrator_operation_id : undefined;
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
  const ours = operationIdIn(request.context);
  const echoed: Json[] = [];
  const candidates: string[] = [];
  let cursor: string | undefined;
  try {
    for (let page = 0; page < MAX_PAGES; page++) {
      const reply = await adcp.callTask(agent, 'get_media_buys', lookupArgs(request, cursor), { timeoutMs });
      if (reply.error || reply.status !== 'completed') return { kind: 'unavailable', reason: `get_media_buys answered ${reply.error?.code ?? reply.status}` };
      const buys = Array.isArray(reply.data.media_buys) ? reply.data.media_buys : [];
      for (const b of buys) {
        if (!isObject(b)) continue;
        const theirs = operationIdIn(b.context);
        // An echoed context is the seller's word on whose buy it is: ours, or another operation's.
        if (ours !== undefined && theirs === ours) echoed.push(b);
        else if (theirs === undefined && couldBeOurs(request, b, sentAt)) candidates.push(String(b.media_buy_id));
      }
      const pagination = isObject(reply.data.pagination) ? reply.data.pagination : {};
      if (pagination.has_more !== true || typeof pagination.cursor !== 'string') return verdictOf(echoed, candidates);
      cursor = pagination.cursor;
    }
    return { kind: 'unavailable', reason: `more than ${MAX_PAGES} pages of media buys` };
  } catch (err) {
    return { kind: 'unavailable', reason: `get_media_buys failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/**
 * One buy carrying our operation id is ours (a buy without context is then not: this seller
 * echoes the context of buys made with one, and ours had one). Two carrying it mean the seller
 * ran our request twice already: a person sorts that out.
 */
function verdictOf(echoed: Json[], candidates: string[]): LookupVerdict {
  if (echoed.length === 1 && typeof echoed[0]!.media_buy_id === 'string') return { kind: 'found', id: echoed[0]!.media_buy_id, record: echoed[0]! };
  const ids = echoed.length > 0 ? echoed.map((b) => String(b.media_buy_id)) : candidates;
  return ids.length > 0 ? { kind: 'candidates', ids } : { kind: 'absent' };
}
