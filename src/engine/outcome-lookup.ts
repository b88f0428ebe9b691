/**
 * Looking up by natural key what an ambiguous mutation did at the seller, for the tasks
 * that have a natural key to look by: create_media_buy (`get_media_buys`,
 * media-buy-lookup.ts) and sync_creatives (`list_creatives`, creative-lookup.ts). Any
 * other task cannot be looked up: its verdict is `unavailable`.
 */
import type { AdcpClient, AgentEndpoint } from '../adcp/types.js';
import { lookUpSyncedCreatives } from './creative-lookup.js';
import { lookUpMediaBuy } from './media-buy-lookup.js';

type Json = Record<string, unknown>;

export type LookupVerdict =
  /** Nothing at the seller shows the request took effect: a resend is safe. */
  | { kind: 'absent' }
  /** The seller's own record names it ours (a buy's echoed context): `id` and the record can be bound. */
  | { kind: 'found'; id: string; record: Json }
  /** Records that may be its doing: a person confirms. */
  | { kind: 'candidates'; ids: string[] }
  /** The lookup could not tell. */
  | { kind: 'unavailable'; reason: string };

type Lookup = (adcp: AdcpClient, agent: AgentEndpoint, request: Json, sentAt: number, timeoutMs: number) => Promise<LookupVerdict>;

const LOOKUPS: Readonly<Record<string, { what: string; absent: string; run: Lookup }>> = {
  create_media_buy: { what: 'media buys', absent: 'no matching media buy at the seller', run: lookUpMediaBuy },
  sync_creatives: { what: 'creatives, created or changed since it was sent,', absent: 'none of its creatives created or changed at the seller since it was sent', run: lookUpSyncedCreatives },
};

export function lookUpOutcome(adcp: AdcpClient, agent: AgentEndpoint, task: string, request: Json, sentAt: number, timeoutMs: number): Promise<LookupVerdict> {
  const lookup = LOOKUPS[task];
  if (!lookup) return Promise.resolve({ kind: 'unavailable', reason: `${task} has no natural key to look it up by` });
  return lookup.run(adcp, agent, request, sentAt, timeoutMs);
}

/** What an `absent` verdict found, in words. */
export function absentText(task: string): string {
  return LOOKUPS[task]?.absent ?? 'nothing found at the seller';
}

/** Why an operation was not sent again and what a person should do, for a verdict that could not tell. */
export function undecidedText(task: string, why: string, verdict: Extract<LookupVerdict, { kind: 'candidates' | 'unavailable' }>): string {
  return verdict.kind === 'candidates'
    ? `${task} not sent again: ${why}; the seller has ${LOOKUPS[task]?.what ?? 'records'} that may be this one (${verdict.ids.join(', ')}): confirm at the seller, then cancel this operation (or send the request anew if it is not there)`
    : `${task} not sent again: ${why}, and its outcome could not be looked up (${verdict.reason}): check at the seller before sending it again`;
}
