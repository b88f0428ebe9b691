/** A campaign's buys as people read them, when it is done, and its budget. */
import { describe, expect, it } from 'vitest';
import { buyState, campaignBudget, campaignStatus, campaignSummary, type BuySource } from '../../../src/domain/campaign.js';

const buy = (status: string, step?: string, extra: Record<string, unknown> = {}, needs = 0): BuySource => ({
  id: Math.random().toString(36),
  agent_id: 'a',
  status,
  needs_input: needs,
  request_body: JSON.stringify({ packages: [{ budget: 1000 }] }),
  governance: step ? JSON.stringify({ step, ...extra }) : null,
});

describe('campaigns', () => {
  it('reads each buy: done, denied before the seller, failed at it, waiting on a person', () => {
    expect(buyState(buy('completed', 'reported'))).toBe('done');
    expect(buyState(buy('rejected', 'ended'))).toBe('denied');
    expect(buyState(buy('rejected', 'conditions'))).toBe('denied');
    expect(buyState(buy('rejected', 'reported'))).toBe('failed');
    expect(buyState(buy('failed', 'reported'))).toBe('failed');
    expect(buyState(buy('requested', 'conditions', {}, 1))).toBe('waiting_on_people');
    expect(buyState(buy('calling_adcp', 'approved'))).toBe('running');
  });

  it('is done only when every buy ended and no outcome is still owed', () => {
    expect(campaignStatus([buy('completed', 'reported'), buy('rejected', 'ended')])).toBe('done');
    expect(campaignStatus([buy('completed', 'reporting'), buy('rejected', 'ended')])).toBe('running');
    expect(campaignStatus([buy('completed', 'reported'), buy('requested', 'conditions', {}, 1)])).toBe('waiting_on_people');
    expect(campaignSummary([buy('completed', 'reported'), buy('rejected', 'ended')])).toMatchObject({ total: 2, done: 1, denied: 1 });
  });

  it('adds up planned and committed, and takes the plan figures from the latest outcome', () => {
    const outcome = (committed: number, at: string, remaining: number) => ({
      outcome: { outcome: 'completed', status: 'accepted', committed_budget: committed, reported_at: at, plan_summary: { total_committed: 10_000 - remaining, budget_remaining: remaining } },
    });
    const budget = campaignBudget([
      buy('completed', 'reported', outcome(1000, '2026-01-01T00:00:02Z', 8_000)),
      buy('completed', 'reported', outcome(1000, '2026-01-01T00:00:01Z', 9_000)),
      buy('rejected', 'ended'),
    ]);
    expect(budget).toEqual({ planned: 3000, committed: 2000, remaining: 8_000, plan_committed: 2_000 });
  });
});
