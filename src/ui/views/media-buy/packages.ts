/** A buy's packages as last known: product, budget, what each delivered, its pacing and delivery status. */
import type { PackageState } from '../../../domain/media-buy-delivery.js';
import { html, type SafeHtml } from '../../html.js';
import { money } from '../campaigns.js';
import { amount, spentPercent } from './bits.js';
import { parseJsonOr } from './json.js';
import type { MediaBuyView } from './view.js';

function packageRow(p: PackageState, currency: string | null): SafeHtml {
  const spent = p.delivered?.spend ?? null;
  const pct = spent !== null ? spentPercent(spent, p.budget ?? null) : null;
  return html`<tr data-package-id="${p.package_id}">
  <td><code>${p.package_id}</code>${p.paused ? html` <span class="flag flag-input">paused</span>` : ''}</td>
  <td class="hide-narrow">${p.product_id ? html`<code>${p.product_id}</code>` : html`<span class="muted">—</span>`}</td>
  <td class="num">${amount(p.budget ?? null, currency)}</td>
  <td class="num" data-package-spend="${spent ?? ''}">${amount(spent, currency)}${pct !== null ? html` <span class="muted small">(${pct} %)</span>` : ''}</td>
  <td class="num hide-narrow">${p.delivered ? money(p.delivered.impressions) : '—'}</td>
  <td class="num">${typeof p.pacing_index === 'number' ? p.pacing_index.toFixed(2) : '—'}</td>
  <td class="hide-narrow">${p.delivery_status ? p.delivery_status.replace(/_/g, ' ') : html`<span class="muted">—</span>`}</td>
</tr>`;
}

export function buyPackages(v: MediaBuyView): SafeHtml {
  const packages = parseJsonOr<PackageState[]>(v.buy.packages, []);
  const list = Array.isArray(packages) ? packages.filter((p) => p && typeof p.package_id === 'string') : [];
  if (list.length === 0) return html`<h2 id="packages-title">Packages</h2><p class="empty">The seller has not named the buy's packages yet.</p>`;
  return html`<h2 id="packages-title">Packages</h2>
<div class="table-wrap"><table class="packages">
  <caption class="visually-hidden">The buy's packages as the seller last stated them</caption>
  <thead><tr><th scope="col">Package</th><th scope="col" class="hide-narrow">Product</th><th scope="col" class="num">Budget</th><th scope="col" class="num">Spent</th><th scope="col" class="num hide-narrow">Impressions</th><th scope="col" class="num" title="The seller's pacing index: delivery against its own plan (1.00 is on plan)">Pacing index</th><th scope="col" class="hide-narrow">Delivery</th></tr></thead>
  <tbody>${list.map((p) => packageRow(p, v.buy.currency))}</tbody>
</table></div>`;
}
