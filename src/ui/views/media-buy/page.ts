/**
 * A live buy's page (GET /media-buys/:id): a header, the actions an operator may
 * take, the delivery chart, the packages, the reports and the events, each drawn by
 * its own function from one MediaBuyView. The region re-reads as a whole when the
 * buy changes (a report arrives, the seller moves it, a person pauses it), so every
 * part always shows the same moment.
 */
import { shortId } from '../../format.js';
import { html, type SafeHtml } from '../../html.js';
import { buyActions } from './actions.js';
import { buyChart } from './chart.js';
import { buyCreatives } from './creatives.js';
import { buyEvents } from './events.js';
import { buyHeader } from './header.js';
import { buyPackages } from './packages.js';
import { buyReports } from './reports.js';
import type { BuySection, MediaBuyView } from './view.js';

/** The sections in page order; a new one goes where it reads best. */
export const BUY_SECTIONS: readonly BuySection[] = [
  { id: 'header', render: buyHeader },
  { id: 'actions', render: buyActions },
  { id: 'delivery', render: buyChart },
  { id: 'packages', render: buyPackages },
  { id: 'creatives', render: buyCreatives },
  { id: 'reports', render: buyReports },
  { id: 'events', render: buyEvents },
];

/** The part that refreshes live. */
export function buyRegion(v: MediaBuyView, sections: readonly BuySection[] = BUY_SECTIONS): SafeHtml {
  return html`${sections.map((s) => {
  const body = s.render(v);
  return body.value.trim() === '' ? '' : html`<section class="buy-section" id="buy-${s.id}" data-section="${s.id}">${body}</section>\n`;
})}`;
}

export function buyPage(v: MediaBuyView, sections: readonly BuySection[] = BUY_SECTIONS): SafeHtml {
  return html`<div class="page-head crumbs-row">
  <nav class="crumbs" aria-label="Breadcrumb"><a href="/media-buys">Media buys</a> <span aria-hidden="true">/</span> <span>${shortId(v.buy.id)}</span></nav>
  <p class="live-state" data-live-state role="status"></p>
</div>
${v.notice ? html`<p class="notice notice-info" role="status">${v.notice}</p>` : ''}
<article id="media-buy" data-buy-id="${v.buy.id}" hx-get="/media-buys/${v.buy.id}" hx-trigger="sse:change, every 30s" hx-swap="innerHTML" hx-sync="this:queue last">
${buyRegion(v, sections)}
</article>`;
}
