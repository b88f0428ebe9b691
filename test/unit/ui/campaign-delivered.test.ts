/**
 * Campaign pages show what the campaign's live media buys delivered beside planned
 * and committed: in the list's budget cell, in the campaign's facts, and per buy
 * (a link to the buy's page), "—" for a buy the seller has not made yet.
 */
import { describe, expect, it } from 'vitest';
import type { CampaignRow, MediaBuyRow } from '../../../src/store/index.js';
import { newOperationRow } from '../../../src/store/operation-row.js';
import { budgetCell, campaignRegion } from '../../../src/ui/views/campaigns.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const op = (id: string, status: string) =>
  newOperationRow({ id, tenant_id: 't1', agent_id: 'agt_s', type: 'create_media_buy', idempotency_key: `key-${id}-000000000000`, request_body: JSON.stringify({ packages: [{ product_id: 'p', budget: 4000 }] }), created_at: NOW - 1000 }, { status, parent_id: 'cmp_1' });
const campaign = { id: 'cmp_1', tenant_id: 't1', name: 'Launch', governance_agent_id: 'agt_gov', plan_id: 'plan_1', status: 'running', buy_ids: JSON.stringify(['op_a', 'op_b']), created_at: NOW, updated_at: NOW, completed_at: null, created_by: 'x' } as CampaignRow;

describe('delivered spend on campaign pages', () => {
  it('the budget cell shows delivered beside committed, with a meter, and 0 before any buy reports', () => {
    const out = budgetCell({ planned: 8000, committed: 8000, remaining: null, plan_committed: null }, { spend: 1234.5, impressions: 100_000, buys: 2 }).value;
    expect(out).toContain('data-delivered="1234.5"');
    expect(out).toContain('delivered</span> <strong>1,234.5</strong>');
    expect(out).toContain('by 2 live buys');
    expect(out).toContain('<meter min="0" max="8000" value="1234.5" aria-label="Delivered of committed"');
    expect(budgetCell({ planned: 8000, committed: 0, remaining: null, plan_committed: null }).value).toContain('data-delivered="0"');
  });

  it('a campaign’s page: delivered in its facts, and each buy’s delivery linking to its media buy', () => {
    const live = { id: 'buy_a', operation_id: 'op_a', media_buy_id: 'mb_a', spend: 999.25 } as MediaBuyRow;
    const out = campaignRegion({ campaign, buys: [op('op_a', 'completed'), op('op_b', 'submitted')], delivered: { spend: 999.25, impressions: 1, buys: 1 }, mediaBuys: new Map([['op_a', live]]), agentNames: new Map(), now: NOW }).value;
    expect(out).toContain('<dd data-budget="delivered">999.25</dd>');
    expect(out).toMatch(/<tr data-operation-id="op_a"[^]*?<td class="num" data-delivered="999.25"><a href="\/media-buys\/buy_a"/);
    expect(out).toMatch(/<tr data-operation-id="op_b"[^]*?<td class="num" data-delivered="">—<\/td>/);
  });
});
