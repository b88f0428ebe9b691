/**
 * What a buy's page is drawn from (routes/media-buys.ts reads it; each section in
 * this folder draws one part of it), and the order of the sections. A new section
 * is a function of this view added to BUY_SECTIONS.
 */
import type { AgentRow, BuyEventRow, CampaignRow, CreativeRow, EventRow, MediaBuyRow, OperationRow, ReportRow } from '../../../store/index.js';
import type { SafeHtml } from '../../html.js';

export interface MediaBuyView {
  buy: MediaBuyRow;
  /** Every report of the buy, oldest first (the chart needs all its periods). */
  reports: ReportRow[];
  /** The buy's newest events, newest first (at most `eventsShown`). */
  buyEvents: BuyEventRow[];
  /** The create_media_buy that made it, and its newest events. */
  operation?: OperationRow;
  operationEvents: EventRow[];
  /** How many events the page leaves out (older than those shown). */
  eventsLeftOut: number;
  /** Creatives sent to its seller and their reviews (creatives.ts), in the order first sent. */
  creatives?: CreativeRow[];
  /** Operations started on the buy (pause, resume, cancel, refresh), newest first. */
  requests: OperationRow[];
  agent?: AgentRow;
  campaign?: CampaignRow;
  now: number;
  csrf: string;
  /** Pause, resume, cancel and refresh are the operator's (and every role above it). */
  canAct: boolean;
  notice?: string;
}

/** One part of the page: `id` names its <section>, so tests and styles find it. */
export interface BuySection {
  id: string;
  render(v: MediaBuyView): SafeHtml;
}
