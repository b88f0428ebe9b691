/**
 * A governed campaign (README.md, Using it `/v1/campaigns`): buys across sellers under
 * one plan, each its own governed operation. Pure: how a buy's state reads for
 * people, when the campaign is done, and its budget planned vs committed.
 *
 * A campaign is `done` once every buy has ended and every outcome owed to the
 * governance agent is settled (reported, or refused and left to a person), so
 * that at `done` the plan's ledger at the agent holds every completed buy.
 */
import { committedBudgetOf, type GovernedState } from './governed-flow.js';
import { isTerminal, type OperationStatus } from './status.js';

export type BuyState = 'done' | 'running' | 'waiting_on_people' | 'denied' | 'failed' | 'canceled';
export type CampaignStatus = 'running' | 'waiting_on_people' | 'done';

/** The columns of a buy (an operation row) read here. */
export interface BuySource {
  id: string;
  agent_id: string;
  status: string;
  needs_input: number;
  request_body: string;
  governance?: string | null;
}

const parse = (text: string | null | undefined): GovernedState | undefined => (text ? (JSON.parse(text) as GovernedState) : undefined);

export function buyState(buy: BuySource): BuyState {
  if (buy.needs_input === 1) return 'waiting_on_people';
  switch (buy.status) {
    case 'completed':
      return 'done';
    case 'failed':
      return 'failed';
    case 'canceled':
      return 'canceled';
    case 'rejected': {
      // Ended before the seller was asked (governance denied it, or a person turned its conditions down): denied.
      const step = parse(buy.governance)?.step;
      return step === 'approved' || step === 'reporting' || step === 'reported' ? 'failed' : 'denied';
    }
    default:
      return 'running';
  }
}

/** Ended, and nothing still owed to the governance agent for it. */
export function buySettled(buy: BuySource): boolean {
  return isTerminal(buy.status as OperationStatus) && parse(buy.governance)?.step !== 'reporting';
}

export function campaignStatus(buys: BuySource[]): CampaignStatus {
  if (buys.every(buySettled)) return 'done';
  return buys.some((b) => b.needs_input === 1) ? 'waiting_on_people' : 'running';
}

export function campaignSummary(buys: BuySource[]): Record<BuyState, number> & { total: number } {
  const summary = { total: buys.length, done: 0, running: 0, waiting_on_people: 0, denied: 0, failed: 0, canceled: 0 };
  for (const b of buys) summary[buyState(b)]++;
  return summary;
}

export interface CampaignBudget {
  /** What the buys ask for, all of them. */
  planned: number;
  /** What the governance agent committed to the plan from the buys' reported outcomes. */
  committed: number;
  /** The plan's remaining budget as the agent last stated it (plan_summary.budget_remaining); null before any outcome. */
  remaining: number | null;
  /** The plan's total committed as the agent last stated it (all its spend, not only this campaign's). */
  plan_committed: number | null;
}

export function campaignBudget(buys: BuySource[]): CampaignBudget {
  let planned = 0;
  let committed = 0;
  let latest: { at: string; summary: Record<string, unknown> } | undefined;
  for (const b of buys) {
    planned += committedBudgetOf(JSON.parse(b.request_body) as Record<string, unknown>, undefined);
    const outcome = parse(b.governance)?.outcome;
    if (!outcome || (outcome.status !== 'accepted' && outcome.status !== 'findings')) continue;
    if (outcome.outcome === 'completed') committed += outcome.committed_budget ?? 0;
    const summary = outcome.plan_summary;
    if (summary && typeof summary === 'object' && outcome.reported_at && (!latest || outcome.reported_at > latest.at)) {
      latest = { at: outcome.reported_at, summary: summary as Record<string, unknown> };
    }
  }
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return { planned, committed, remaining: num(latest?.summary.budget_remaining), plan_committed: num(latest?.summary.total_committed) };
}

/** The campaign columns shown (a campaigns row). */
export interface CampaignJsonSource {
  id: string;
  name: string | null;
  governance_agent_id: string;
  plan_id: string;
  status: string;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  created_by: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * The campaign as the API shows it: its state now (read from its buys, so it is
 * right before the watcher has marked it done), the budget planned vs committed
 * against the plan, and each buy as its operation JSON with its `campaign_state`.
 */
export function presentCampaign<B extends BuySource>(c: CampaignJsonSource, buys: B[], presentBuy: (b: B) => Record<string, unknown>) {
  return {
    id: c.id,
    name: c.name,
    status: c.status === 'done' ? 'done' : campaignStatus(buys),
    plan_id: c.plan_id,
    governance: { agent_id: c.governance_agent_id, plan_id: c.plan_id },
    summary: campaignSummary(buys),
    budget: campaignBudget(buys),
    buys: buys.map((b) => ({ ...presentBuy(b), campaign_state: buyState(b) })),
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
    completed_at: iso(c.completed_at),
    created_by: c.created_by,
  };
}

/** The `campaign.completed` notification body (docs/ARCHITECTURE.md, Telling users): `data.campaign` instead of an operation. */
export function campaignCompletedBody(input: { id: string; tenantId: string; createdAt: number; publicUrl?: string }, c: CampaignJsonSource, buys: BuySource[]) {
  return {
    id: input.id,
    type: 'campaign.completed' as const,
    created_at: new Date(input.createdAt).toISOString(),
    tenant_id: input.tenantId,
    data: {
      campaign: {
        id: c.id,
        name: c.name,
        status: 'done',
        plan_id: c.plan_id,
        summary: campaignSummary(buys),
        budget: campaignBudget(buys),
        buys: buys.map((b) => ({ id: b.id, agent_id: b.agent_id, status: b.status, campaign_state: buyState(b) })),
      },
      ...(input.publicUrl ? { link: `${input.publicUrl}/campaigns/${encodeURIComponent(c.id)}` } : {}),
    },
  };
}
