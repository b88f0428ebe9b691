/** The delivery section of a buy's page: its chart (delivery-chart.ts) with a legend in words. */
import { html, type SafeHtml } from '../../html.js';
import { chartPeriods } from './chart-data.js';
import { deliveryChart } from './delivery-chart.js';
import type { MediaBuyView } from './view.js';

export function buyChart(v: MediaBuyView): SafeHtml {
  const b = v.buy;
  const periods = chartPeriods(v.reports);
  const restated = periods.some((p) => p.adjusted);
  const chart = deliveryChart({ periods, flightStart: b.flight_start, flightEnd: b.flight_end, budget: b.budget_amount, currency: b.currency, label: `media buy ${b.media_buy_id}` });
  return html`<div class="section-head"><h2 id="delivery-title">Delivery</h2>
<ul class="chart-legend" aria-label="Legend">
  <li><span class="key key-bar" aria-hidden="true"></span>Spend per period</li>
  <li><span class="key key-line" aria-hidden="true"></span>Cumulative spend</li>
  <li><span class="key key-plan" aria-hidden="true"></span>Linear plan</li>
  ${restated ? html`<li><span class="key key-adjusted" aria-hidden="true"></span>Restated period (outline: before)</li>` : ''}
</ul></div>
<figure class="chart-frame">${chart}
<figcaption class="muted small">Times in UTC. Each period counts once: a restated period shows its latest figures. Figures by period are in Reports below.</figcaption>
</figure>`;
}
