/**
 * The banner of a buy its seller no longer answers for (src/domain/media-buy-unreadable.ts):
 * what the page shows below it (status, pacing, figures) is only the last the seller
 * said, so it says so first, with since when and why. Nothing while the seller answers.
 */
import { utc, when } from '../../format.js';
import { html, type SafeHtml } from '../../html.js';
import { buyStatusBadge } from './bits.js';
import type { MediaBuyView } from './view.js';

export function unreadableBanner(v: MediaBuyView): SafeHtml {
  const b = v.buy;
  if (b.unreadable_since === null) return html``;
  return html`<p class="notice notice-warn" role="alert" data-unreadable-since="${new Date(b.unreadable_since).toISOString()}">
  <strong>The seller no longer answers for this buy</strong> since ${utc(b.unreadable_since)} (${when(b.unreadable_since, v.now)})${b.unreadable_reason ? html`: ${b.unreadable_reason}` : ''}.
  Last known status ${buyStatusBadge(b.status)}; the figures below are the last it gave. It is asked again, less and less often, and this goes away once it answers.
</p>`;
}
