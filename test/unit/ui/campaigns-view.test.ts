import { describe, expect, it } from 'vitest';
import type { GovernedState } from '../../../src/domain/governed-flow.js';
import type { CampaignRow, OperationRow } from '../../../src/store/index.js';
import { newOperationRow } from '../../../src/store/operation-row.js';
import { budgetCell, campaignRegion, campaignsRegion, money, stateCounts } from '../../../src/ui/views/campaigns.js';
import { governancePanel } from '../../../src/ui/views/governance-panel.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');

const governed = (over: Partial<GovernedState> = {}): GovernedState => ({
  agent_id: 'agt_gov',
  plan_id: 'plan_1',
  target_agent: 'http://seller.example/mcp',
  caller: 'http://orch.example',
  tool: 'create_media_buy',
  apply_conditions: false,
  step: 'checking',
  rounds: 0,
  checks: 1,
  ...over,
});

function buy(id: string, status: string, budget: number, g?: GovernedState, needsInput = 0): OperationRow {
  const identity = { id, tenant_id: 't1', agent_id: 'agt_seller', type: 'create_media_buy', idempotency_key: `key-${id}-0000000000`, request_body: JSON.stringify({ packages: [{ product_id: 'p', budget }] }), created_at: NOW - 1000 };
  return newOperationRow(identity, { status, parent_id: 'cmp_1', needs_input: needsInput, governance: g ? JSON.stringify(g) : null });
}

const reported = (committed: number, remaining: number): GovernedState =>
  governed({
    step: 'reported',
    check: { decision: 'approved', check_id: 'chk_1', decided_at: new Date(NOW - 5000).toISOString(), expires_at: new Date(NOW + 60_000).toISOString() },
    outcome: { outcome: 'completed', request: { idempotency_key: 'out-key-1' }, status: 'accepted', committed_budget: committed, plan_summary: { budget_remaining: remaining, total_committed: 50_000 - remaining }, reported_at: new Date(NOW - 1000).toISOString() },
  });

const campaign: CampaignRow = {
  id: 'cmp_1',
  tenant_id: 't1',
  name: '<Spring> & "launch"',
  governance_agent_id: 'agt_gov',
  plan_id: 'plan_1',
  status: 'running',
  buy_ids: JSON.stringify(['b2', 'b1', 'b3']),
  created_at: NOW - 10_000,
  updated_at: NOW - 10_000,
  completed_at: null,
  created_by: 'trader',
};

describe('the campaigns views', () => {
  const buys = [
    buy('b2', 'completed', 5_000, reported(5_000, 45_000)),
    buy('b1', 'rejected', 2_000, governed({ step: 'ended', check: { decision: 'denied', decided_at: new Date(NOW).toISOString(), findings: [{ category_id: 'geo', explanation: 'FR is not in the plan' }] } })),
    buy('b3', 'requested', 7_000, governed({ step: 'conditions' }), 1),
  ];

  it('counts buys only in the states they are in, with their numbers as data', () => {
    const out = stateCounts(buys).value;
    expect(out).toContain('data-state="done" data-count="1"');
    expect(out).toContain('data-state="denied" data-count="1"');
    expect(out).toContain('data-state="waiting_on_people" data-count="1"');
    expect(out).not.toContain('data-state="running"');
    expect(out).toContain('3 in all');
    expect(stateCounts([]).value).toContain('no buys');
  });

  it('shows the budget planned vs committed and the plan remaining, as campaignBudget states it', () => {
    const out = budgetCell({ planned: 14_000, committed: 5_000, remaining: 45_000, plan_committed: 5_000 }).value;
    expect(out).toContain('data-planned="14000" data-committed="5000" data-remaining="45000"');
    expect(out).toContain('<meter min="0" max="14000" value="5000"');
    expect(out).toContain('plan remaining 45,000');
    expect(budgetCell({ planned: 0, committed: 0, remaining: null, plan_committed: null }).value).not.toContain('plan remaining');
    expect(money(1234.5)).toBe('1,234.5');
    expect(money(null)).toBe('—');
  });

  it('lists campaigns with an escaped name, a link to each, and a next-page link when there is one', () => {
    const out = campaignsRegion({ items: [{ campaign, buys }], agentNames: new Map([['agt_gov', 'gov agent']]), now: NOW, nextCursor: 'abc' }).value;
    expect(out).toContain('&lt;Spring&gt; &amp; &quot;launch&quot;');
    expect(out).not.toContain('<Spring>');
    expect(out).toContain('href="/campaigns/cmp_1"');
    expect(out).toContain('data-campaign-status="waiting_on_people"');
    expect(out).toContain('href="/campaigns?cursor=abc"');
    expect(campaignsRegion({ items: [], agentNames: new Map(), now: NOW }).value).toContain('No campaigns yet');
  });

  it('shows a campaign’s buys with their links, states, amounts and what was committed', () => {
    const out = campaignRegion({ campaign, buys, agentNames: new Map([['agt_seller', 'seller one']]), now: NOW }).value;
    expect(out.match(/data-operation-id="(b\d)"/g)).toEqual(['data-operation-id="b2"', 'data-operation-id="b1"', 'data-operation-id="b3"']);
    expect(out).toContain('href="/operations/b2"');
    expect(out).toContain('data-amount="5000"');
    expect(out).toContain('data-committed="5000"');
    expect(out).toContain('data-budget="planned">14,000');
    expect(out).toContain('data-budget="committed">5,000');
    expect(out).toContain('data-budget="remaining">45,000');
    expect(out).toContain('approved; outcome accepted');
    expect(out).toContain('seller one');
  });
});

describe('the governance panel', () => {
  it('shows an approval, until when it holds, and the outcome reported with its committed budget', () => {
    const out = governancePanel(reported(5_000, 45_000), { now: NOW, operationEnded: true, agentName: 'gov agent' }).value;
    expect(out).toContain('data-decision="approved"');
    expect(out).toContain('data-step="reported"');
    expect(out).toMatch(/data-gov="expires"><dt>Expires<\/dt><dd><time datetime="2026-06-01T12:01:00.000Z"/);
    expect(out).toContain('<strong>reported</strong>: completed, accepted');
    expect(out).toMatch(/data-gov="committed"><dt>Committed budget<\/dt><dd>5,000/);
    expect(out).toContain('out-key-1');
    expect(out).toContain('gov agent');
  });

  it('says an outcome is owed while it is, and calls a past expiry expired', () => {
    const owed = governancePanel(
      governed({ step: 'reporting', check: { decision: 'approved', decided_at: new Date(NOW - 120_000).toISOString(), expires_at: new Date(NOW - 60_000).toISOString() } }),
      { now: NOW, operationEnded: true },
    ).value;
    expect(owed).toContain('<strong>owed</strong>, not yet reported');
    expect(owed).toContain('<dt>Expired</dt>');
    const review = governancePanel(governed({ step: 'reviewing', check: { decision: 'submitted', task_id: 'rev_42', decided_at: new Date(NOW).toISOString() } }), { now: NOW, operationEnded: false }).value;
    expect(review).toContain('data-decision="submitted"');
    expect(review).toContain('<code>rev_42</code>');
    expect(review).toContain('reviewing the request');
    const pending = governancePanel(governed({ step: 'checking' }), { now: NOW, operationEnded: false }).value;
    expect(pending).toContain('not decided yet');
    expect(pending).toContain('owed once the seller’s result is in');
  });

  it('lists conditions and findings readably, escaped, and never shows a token', () => {
    const out = governancePanel(
      governed({
        step: 'conditions',
        approval: { token: 'eyJSECRET.TOKEN.sig', expires_at: NOW + 1000, received_at: NOW },
        continuity: 'eyJCONTINUITY.TOKEN.sig',
        check: {
          decision: 'conditions',
          decided_at: new Date(NOW).toISOString(),
          conditions: [{ field: 'end_time', reason: 'end <b>with</b> the flight', required_value: '2030-12-31T23:59:59Z' }],
          findings: [{ category_id: 'flight', explanation: 'runs past the plan' }],
        },
      }),
      { now: NOW, operationEnded: false },
    ).value;
    expect(out).toContain('<code>end_time</code> end &lt;b&gt;with&lt;/b&gt; the flight');
    expect(out).toContain('&quot;2030-12-31T23:59:59Z&quot;');
    expect(out).toContain('<code>flight</code> runs past the plan');
    expect(out).not.toContain('eyJ');
  });
});
