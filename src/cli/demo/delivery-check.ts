/**
 * The demo's last act: the campaign's buys fly (the sandbox sellers' flight clock is
 * compressed to seconds), report their delivery to our reporting webhooks period by
 * period, and we report each period on to the governance agent. The demo prints the
 * reports as they come, then checks three figures of delivered spend that must agree:
 *   1. ours: each buy's reports as we stored them, every period counted once
 *      (GET /v1/media-buys/:id/delivery, totals);
 *   2. the sellers' own: `get_media_buy_delivery` asked of each seller now (an
 *      ordinary operation through POST /v1/operations), its rows' lifetime totals;
 *   3. the governance agent's ledger of the delivery outcomes we reported
 *      (`report_plan_outcome` `outcome: "delivery"`), each period counted once.
 * Everything is bounded by the demo's deadline: a report that never comes ends the
 * demo with a clear line and a non-zero exit, not a hang.
 */
import { callApi } from '../api-client.js';
import { money } from '../media-buy-view.js';
import type { MediaBuyJson } from '../../domain/media-buy-json.js';
import { campaignBuys, sleep, type DemoStepInput } from './demo-step.js';

export interface DeliveryCheckInput extends DemoStepInput {
  planId: string;
  /** How many buys the campaign made (those that were bought). */
  expectedBuys: number;
}

interface DeliveryTotals {
  totals: { spend: number; periods: number; currency: string | null };
}

const cents = (n: number) => Math.round(n * 100);

export async function checkDelivery(c: DeliveryCheckInput): Promise<boolean> {
  const buys = await followReports(c);
  if (!buys) return false;

  // 1. Ours.
  let ours = 0;
  let periods = 0;
  for (const b of buys) {
    const d = await callApi<DeliveryTotals>(c.op, 'GET', `/v1/media-buys/${encodeURIComponent(b.id)}/delivery`);
    ours += d.totals.spend;
    periods += d.totals.periods;
  }

  // 2. The sellers' own figures, asked now.
  const sellers = await sellerTotals(c, buys);
  if (sellers === undefined) return false;

  // 3. The governance agent's ledger: wait (bounded) until it has heard of every period we counted.
  let ledger = standing(c);
  while (ledger.length < periods && Date.now() < c.deadline) {
    await sleep(150);
    ledger = standing(c);
  }
  const governance = ledger.reduce((n, r) => n + r.spend, 0);

  const agree = cents(ours) === cents(sellers) && cents(ours) === cents(governance) && ledger.length === periods;
  const mark = (n: number) => (cents(n) === cents(ours) ? '(matches)' : '— DOES NOT MATCH');
  c.say(`delivered spend, campaign ${c.campaignId}: ${money(ours)} USD over ${periods} reported periods (our reports, each period counted once)`);
  c.say(`the sellers' own figures (get_media_buy_delivery, lifetime): ${money(sellers)} USD ${mark(sellers)}`);
  c.say(`the governance agent's ledger of delivery outcomes for ${c.planId}: ${money(governance)} USD over ${ledger.length} periods ${ledger.length === periods ? mark(governance) : `— ${periods - ledger.length} period(s) NOT REPORTED`}`);
  return agree;
}

/** The campaign's buys, each reported to its `final` period; a line per report as it comes. Undefined on the deadline. */
async function followReports(c: DeliveryCheckInput): Promise<MediaBuyJson[] | undefined> {
  c.say(`the buys now fly on the sandbox's compressed clock; their sellers report delivery to our reporting webhooks:`);
  const told = new Map<string, number>();
  for (;;) {
    const buys = await campaignBuys(c);
    // Oldest first, so the lines read in the order the buys were made.
    for (const b of [...buys].reverse()) {
      if ((told.get(b.id) ?? 0) === b.reports.received) continue;
      told.set(b.id, b.reports.received);
      const budget = b.budget.amount ? ` / ${money(b.budget.amount)}` : '';
      c.say(
        `${c.labelOf(b.operation_id) ?? b.id}  report #${b.reports.last_sequence ?? '?'} in${b.reports.final_received ? ' (final)' : ''}: spend ${money(b.delivery.spend)}${budget} USD, ${b.status}, pacing ${b.delivery.pacing.state}`,
      );
    }
    const done = buys.length === c.expectedBuys && buys.every((b) => b.reports.final_received);
    if (done) return buys;
    if (Date.now() > c.deadline) {
      const waiting = buys.filter((b) => !b.reports.final_received).map((b) => c.labelOf(b.operation_id) ?? b.id);
      c.say(`the final delivery reports did not all come in time (${buys.length} of ${c.expectedBuys} buys recorded; still flying: ${waiting.join(', ') || '-'})`);
      return undefined;
    }
    await sleep(200);
  }
}

/** `get_media_buy_delivery` at each seller for its buys of the campaign: the sum of the rows' totals. */
async function sellerTotals(c: DeliveryCheckInput, buys: MediaBuyJson[]): Promise<number | undefined> {
  let total = 0;
  for (const agentId of new Set(buys.map((b) => b.agent_id))) {
    const ids = buys.filter((b) => b.agent_id === agentId).map((b) => b.media_buy_id);
    const started = await callApi<{ id: string }>(c.op, 'POST', '/v1/operations', {
      agent_id: agentId,
      task: 'get_media_buy_delivery',
      params: { account: { account_id: 'gov_demo' }, media_buy_ids: ids, status_filter: ['active', 'paused', 'completed', 'canceled'] },
      webhook: 'none',
    });
    let read: { status: string; result?: { media_buy_deliveries?: Array<{ media_buy_id: string; totals?: { spend?: number } }> } | null };
    for (;;) {
      read = await callApi(c.op, 'GET', `/v1/operations/${encodeURIComponent(started.id)}`);
      if (['completed', 'failed', 'canceled', 'rejected'].includes(read.status) || Date.now() > c.deadline) break;
      await sleep(100);
    }
    const rows = read.result?.media_buy_deliveries ?? [];
    const name = c.stack.sellers.find((s) => s.id === agentId)?.name ?? agentId;
    if (read.status !== 'completed' || rows.length !== ids.length) {
      c.say(`${name} did not answer get_media_buy_delivery for its ${ids.length} buys (operation ${started.id}: ${read.status}, ${rows.length} rows)`);
      return undefined;
    }
    total += rows.reduce((n, r) => n + (r.totals?.spend ?? 0), 0);
  }
  return total;
}

/** The governance agent's delivery records for the plan still standing (a replaced period counts once). */
function standing(c: DeliveryCheckInput) {
  return c.stack.governance.deliveries(c.planId).filter((r) => r.superseded_by === undefined);
}
