/**
 * What the demo's acts after the campaign (creatives-step.ts, delivery-check.ts)
 * are given by its script (run-demo.ts), and the small helpers all three use.
 */
import { callApi, type ApiTarget } from '../api-client.js';
import type { MediaBuyJson } from '../../domain/media-buy-json.js';
import type { DemoStack } from './demo-stack.js';

export interface DemoStepInput {
  stack: DemoStack;
  op: ApiTarget;
  campaignId: string;
  /** The demo's label of a buy ("buy 1") by its create operation's id, for the live lines. */
  labelOf(operationId: string): string | undefined;
  /** Epoch ms by which the act must be done. */
  deadline: number;
  /** Prints one live line. */
  say(text: string): void;
}

/** The campaign's media buy records as the API lists them (newest first); one page holds a demo campaign's few. */
export async function campaignBuys(c: Pick<DemoStepInput, 'op' | 'campaignId'>): Promise<MediaBuyJson[]> {
  const page = await callApi<{ media_buys: MediaBuyJson[] }>(c.op, 'GET', `/v1/media-buys?campaign_id=${encodeURIComponent(c.campaignId)}&limit=50`);
  return page.media_buys;
}

/** An id cut to its first 12 characters for a live line; '?' when there is none. */
export const shortId = (id: string | undefined) => (id ? `${id.slice(0, 12)}…` : '?');

/** A pause between two looks; it does not keep the process alive on its own. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
