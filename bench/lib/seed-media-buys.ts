/**
 * Seeds live media buys straight through the store's Kysely connection, in bulk
 * (multi-row INSERTs inside one write transaction): `n` buys over a month of
 * history with a realistic mix of statuses, pacing states, sellers and campaigns,
 * no timers (so the orchestrator's loops leave them alone), and one buy with a
 * long history (hourly reports and their events) for the buy's own page.
 */
import type { Store } from '../../src/store/index.js';
import type { MediaBuyRow } from '../../src/store/index.js';
import { newMediaBuyRow } from '../../src/store/media-buy-row.js';
import { inWriteTransaction } from '../../src/store/tx.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface SeededBuys {
  seconds: number;
  /** The buy with `reports` hourly reports and twice as many events. */
  deepBuyId: string;
  campaignIds: string[];
}

function status(bucket: number): string {
  if (bucket < 55) return 'active';
  if (bucket < 80) return 'completed';
  if (bucket < 88) return 'paused';
  if (bucket < 93) return 'pending_start';
  if (bucket < 96) return 'pending_creatives';
  if (bucket < 98) return 'canceled';
  return 'rejected';
}

function pacing(bucket: number): { state: string; ratio: number | null } {
  if (bucket < 70) return { state: 'on_track', ratio: 0.9 + (bucket % 20) / 100 };
  if (bucket < 85) return { state: 'under', ratio: 0.4 + (bucket % 30) / 100 };
  if (bucket < 88) return { state: 'over', ratio: 1.3 + (bucket % 10) / 10 };
  return { state: 'not_started', ratio: null };
}

export async function seedMediaBuys(store: Store, opts: { tenantId: string; agentIds: string[]; n: number; campaigns: number; reports: number }): Promise<SeededBuys> {
  const started = performance.now();
  const now = Date.now();
  const spacing = Math.floor((30 * DAY) / opts.n);
  const campaignIds = Array.from({ length: opts.campaigns }, (_, c) => `cmp_bench_${String(c).padStart(4, '0')}`);
  const id = (i: number) => `buy_bench_${String(i).padStart(7, '0')}`;
  const row = (i: number): MediaBuyRow => {
    const created = now - (opts.n - i) * spacing;
    const bucket = (i * 7919) % 100;
    const p = pacing((i * 104_729) % 100);
    const budget = 1000 + ((i * 37) % 50) * 500;
    const spend = Math.round(budget * ((i % 97) / 100) * 100) / 100;
    // The newest 4 × campaigns buys belong to the campaigns, four each.
    const inCampaign = i >= opts.n - opts.campaigns * 4 ? campaignIds[Math.floor((opts.n - 1 - i) / 4)]! : null;
    return newMediaBuyRow(
      { id: id(i), tenant_id: opts.tenantId, agent_id: opts.agentIds[i % opts.agentIds.length]!, operation_id: `op_bench_buy_${i}`, media_buy_id: `mb_bench_${i}`, created_at: created },
      {
        campaign_id: inCampaign,
        status: status(bucket),
        revision: 3,
        flight_start: created,
        flight_end: created + 30 * DAY,
        budget_amount: budget,
        currency: 'USD',
        packages: JSON.stringify([{ package_id: `pkg_${i}_1`, product_id: 'display_premium', budget, pacing_index: p.ratio ?? undefined, delivery_status: 'delivering', delivered: { impressions: spend * 100, spend } }]),
        impressions: spend * 100,
        spend,
        delivered_through: created + 10 * DAY,
        delivery_source: 'webhook',
        delivery_updated_at: created + 10 * DAY,
        pacing_state: p.state,
        pacing_ratio: p.ratio,
        pacing_expected: budget / 3,
        report_frequency: 'daily',
        reports_received: 10,
        last_sequence: 10,
        reporting_auth: 'hmac',
        updated_at: created + 10 * DAY,
      },
    );
  };
  const deepIndex = opts.n - 1;
  const deep = row(deepIndex);
  await inWriteTransaction(store.db, async (trx) => {
    for (let from = 0; from < opts.n; from += 400) {
      const batch = Array.from({ length: Math.min(400, opts.n - from) }, (_, k) => row(from + k));
      await trx.insertInto('media_buys').values(batch).execute();
    }
    await trx
      .insertInto('campaigns')
      .values(campaignIds.map((c, k) => ({ id: c, tenant_id: opts.tenantId, name: `Bench campaign ${k}`, governance_agent_id: opts.agentIds[0]!, plan_id: `plan_${k % 7}`, status: 'running', buy_ids: '[]', created_at: now - k, updated_at: now - k, completed_at: null, created_by: 'bench' })))
      .execute();
    // The deep buy: hourly reports over its flight, each with its event.
    const start = deep.flight_start!;
    for (let from = 0; from < opts.reports; from += 400) {
      const k = Array.from({ length: Math.min(400, opts.reports - from) }, (_, j) => from + j);
      await trx
        .insertInto('media_buy_reports')
        .values(k.map((j) => ({ id: `rpt_bench_${j}`, buy_id: deep.id, tenant_id: opts.tenantId, source: 'webhook', kind: 'period', notification_type: 'scheduled', sequence_number: j + 1, period_start: start + j * HOUR, period_end: start + (j + 1) * HOUR, impressions: 1000, spend: 10 + (j % 7), clicks: null, currency: 'USD', by_package: '[]', status: 'active', is_adjusted: 0, dedupe_key: `scheduled:${j}`, superseded_by: null, fire_id: null, received_at: start + (j + 1) * HOUR })))
        .execute();
      await trx
        .insertInto('media_buy_events')
        .values(k.flatMap((j) => [0, 1].map((e) => ({ buy_id: deep.id, tenant_id: opts.tenantId, at: start + (j + 1) * HOUR + e, source: 'webhook', kind: e === 0 ? 'report_received' : 'pacing_changed', from_status: null, to_status: null, detail: JSON.stringify({ report_id: `rpt_bench_${j}`, spend: 10 + (j % 7) }), actor: null }))))
        .execute();
    }
  });
  return { seconds: (performance.now() - started) / 1000, deepBuyId: deep.id, campaignIds };
}
