/**
 * The governed flow of a spend-committing operation (AdCP spec, governance): its
 * steps, what each governance answer leads to, and what is reported after the
 * seller's result. Pure: the engine (src/engine/governance/) stores the state
 * in the operation's `governance` column and does the calls.
 *
 *            ┌──────────── conditions (applied by a person, or at once) ─────────┐
 *            ▼                                                                   │
 *   checking ──approved──▶ approved ──seller's terminal result──▶ reporting ──▶ reported
 *      │  ▲                   │ (no usable approval left at send time: re-check)
 *      │  └───────────────────┘
 *      ├──submitted/working──▶ reviewing ──poll: decision──▶ (as from checking)
 *      ├──conditions──▶ conditions (needs_input, governance_conditions) ──approve──▶ checking
 *      └──denied / rounds used up / a person's reject──▶ ended (operation rejected)
 *
 * At a governance-aware seller the flow starts at `syncing` (governance-sync.ts):
 * the governance agent is registered with the seller for the account, then checked.
 *
 * Governance unreachable, GOVERNANCE_UNAVAILABLE, a reply with no decision:
 * the step stays where it is and is retried with backoff. The seller is called
 * only from `approved` with an approval that is still usable.
 */
import type { CheckReading, GovernanceCondition } from './governance-decision.js';
import { canApplyUnattended } from './governance-conditions.js';
import { purchaseTypeOf, refusalInResult, sellerResponseOf } from './governed-tasks.js';

/** Tasks that commit spend at a seller: they run governed when asked to (governed-tasks.ts). */
export { GOVERNED_TASKS, committedBudgetOf } from './governed-tasks.js';

/** Conditions rounds a request may go through; conditions once more after that end it rejected. */
export const MAX_CONDITION_ROUNDS = 3;

/** `check_kind` of a governed operation's own steps (the seller send keeps the engine's `send`). */
export const CHECK_STEP = 'gov_check';
export const REVIEW_STEP = 'gov_review';
export const REPORT_STEP = 'gov_report';
/** Registering the governance agent with a governance-aware seller (sync_governance), before the check. */
export const SYNC_STEP = 'gov_sync';
export const GOVERNANCE_STEPS: ReadonlySet<string> = new Set([SYNC_STEP, CHECK_STEP, REVIEW_STEP, REPORT_STEP]);

export type GovernedStep = 'syncing' | 'checking' | 'reviewing' | 'conditions' | 'approved' | 'reporting' | 'reported' | 'ended';

/** The governance agent's registration with the seller (governance-sync.ts), as the operation shows it. */
export interface SellerSyncState {
  /** pending: owed; synced: sent and taken; current: the seller already had it; skipped: not sent (`reason`). */
  status: 'pending' | 'synced' | 'current' | 'skipped';
  reason?: string;
  idempotency_key?: string;
  /** The seller's task, when it answered the sync as submitted. */
  task_id?: string;
  last_error?: { code: string; message?: string };
  /** ISO 8601. */
  at?: string;
}

/** The latest check as people see it (no token). */
export interface CheckView {
  check_id?: string;
  decision: 'approved' | 'denied' | 'conditions' | 'submitted';
  explanation?: string;
  /** ISO 8601. */
  expires_at?: string;
  findings?: unknown[];
  conditions?: GovernanceCondition[];
  /** The review task, while (or after) a human review ran. */
  task_id?: string;
  /** ISO 8601. */
  decided_at: string;
}

export interface OutcomeState {
  outcome: 'completed' | 'failed';
  /** The exact report_plan_outcome arguments, stored once: every retry sends the same key and bytes. */
  request: Record<string, unknown>;
  status: 'pending' | 'accepted' | 'findings' | 'refused';
  outcome_id?: string;
  committed_budget?: number;
  plan_summary?: unknown;
  findings?: unknown[];
  error?: { code: string; message?: string };
  /** ISO 8601. */
  reported_at?: string;
}

export interface GovernedState {
  /** The governance agent (our agent id). */
  agent_id: string;
  plan_id: string;
  /** The seller's agent URL: the token's audience (3.2 `target_agent`). */
  target_agent: string;
  /** Our public URL, the check's `caller`. */
  caller: string;
  tool: string;
  /** Apply conditions that state their values at once instead of asking a person. */
  apply_conditions: boolean;
  step: GovernedStep;
  /** Conditions rounds applied so far. */
  rounds: number;
  /** Checks sent so far (re-checks included). */
  checks: number;
  check?: CheckView;
  /** The usable approval, while there is one. `token` is the governance_context to attach. */
  approval?: { check_id?: string; token: string; expires_at: number; received_at: number };
  /** The token to send as `governance_context` on the next check (the lineage: the last conditions' or approval's token). */
  continuity?: string;
  review?: { task_id: string; polls: number };
  /** When the current wait for a decision began (epoch ms), for the waiting-time metric. */
  waiting_since?: number;
  /** The outcome report, once the seller's result is in. */
  outcome?: OutcomeState;
  /** The last reason a governance call did not give a decision. */
  last_error?: { code: string; message?: string };
  /** A buy sent without our reporting webhook because its tenant polls governed buys (reporting-choice.ts). */
  reporting_polled?: true;
  /** Governance with the seller: its registration of the governance agent, when the seller is governance-aware. */
  seller_sync?: SellerSyncState;
}

/** The `check_kind` a new governed operation starts at. */
export function firstStepKind(state: GovernedState): string {
  return state.step === 'syncing' ? SYNC_STEP : CHECK_STEP;
}

export function initialState(fields: Omit<GovernedState, 'step' | 'rounds' | 'checks' | 'waiting_since'>, now: number): GovernedState {
  return { ...fields, step: 'checking', rounds: 0, checks: 0, waiting_since: now };
}

/** The first state of a new request under the same governance (a correction of a governed one). */
export function freshState(from: GovernedState, now: number): GovernedState {
  const { agent_id, plan_id, target_agent, caller, tool, apply_conditions } = from;
  return initialState({ agent_id, plan_id, target_agent, caller, tool, apply_conditions }, now);
}

export function parseGovernance(text: string | null | undefined): GovernedState | undefined {
  return text ? (JSON.parse(text) as GovernedState) : undefined;
}

/** What a decision leads to; `state` is the state to store with it. */
export type FlowMove =
  | { move: 'send'; state: GovernedState }
  | { move: 'reject'; state: GovernedState; error: { code: string; message: string; details?: unknown } }
  | { move: 'ask'; state: GovernedState; conditions: GovernanceCondition[]; message: string }
  | { move: 'apply'; state: GovernedState; conditions: GovernanceCondition[] }
  | { move: 'review'; state: GovernedState }
  | { move: 'retry'; state: GovernedState; reason: string };

/** The step after a check's (or a finished review's) answer. Only an approval leads to the seller. */
export function afterDecision(state: GovernedState, reading: CheckReading, now: number): FlowMove {
  const decidedAt = new Date(now).toISOString();
  const base: GovernedState = { ...state, last_error: undefined };
  switch (reading.kind) {
    case 'approved':
      return {
        move: 'send',
        state: {
          ...base,
          step: 'approved',
          review: undefined,
          waiting_since: undefined,
          approval: { ...(reading.checkId ? { check_id: reading.checkId } : {}), token: reading.token, expires_at: reading.expiresAt, received_at: now },
          continuity: reading.token,
          check: view(reading.checkId, 'approved', decidedAt, { explanation: reading.explanation, expires_at: new Date(reading.expiresAt).toISOString(), task_id: state.review?.task_id }),
        },
      };
    case 'denied':
      return {
        move: 'reject',
        state: { ...base, step: 'ended', review: undefined, waiting_since: undefined, approval: undefined, check: view(reading.checkId, 'denied', decidedAt, { explanation: reading.explanation, findings: reading.findings, task_id: state.review?.task_id }) },
        error: { code: 'GOVERNANCE_DENIED', message: reading.explanation ?? 'the governance agent denied this request', details: { check_id: reading.checkId ?? null, findings: reading.findings } },
      };
    case 'conditions': {
      const next: GovernedState = {
        ...base,
        review: undefined,
        approval: undefined,
        ...(reading.token ? { continuity: reading.token } : {}),
        check: view(reading.checkId, 'conditions', decidedAt, {
          explanation: reading.explanation,
          conditions: reading.conditions,
          findings: reading.findings,
          expires_at: reading.expiresAt !== undefined ? new Date(reading.expiresAt).toISOString() : undefined,
          task_id: state.review?.task_id,
        }),
      };
      if (state.rounds >= MAX_CONDITION_ROUNDS) {
        return {
          move: 'reject',
          state: { ...next, step: 'ended', waiting_since: undefined },
          error: {
            code: 'GOVERNANCE_CONDITIONS_UNMET',
            message: `still conditions after ${MAX_CONDITION_ROUNDS} rounds of applying them: start over with a new request`,
            details: { check_id: reading.checkId ?? null, conditions: reading.conditions },
          },
        };
      }
      if (state.apply_conditions && canApplyUnattended(reading.conditions)) return { move: 'apply', state: next, conditions: reading.conditions };
      const message = `The governance agent approves on conditions: ${reading.conditions.map((c) => c.reason || c.field).join(' ')}`.trim();
      return { move: 'ask', state: { ...next, step: 'conditions', waiting_since: undefined }, conditions: reading.conditions, message };
    }
    case 'review':
      return {
        move: 'review',
        state: { ...base, step: 'reviewing', review: { task_id: reading.taskId, polls: 0 }, check: view(reading.checkId, 'submitted', decidedAt, { task_id: reading.taskId, explanation: reading.message }) },
      };
    case 'no_decision':
      return { move: 'retry', state: { ...state, review: undefined, step: 'checking', last_error: { code: 'NO_DECISION', message: reading.reason } }, reason: reading.reason };
  }
}

/** Conditions applied (by a person or at once): the changed request is checked again, as a new round. */
export function afterConditionsApplied(state: GovernedState, now: number): GovernedState {
  return { ...state, step: 'checking', rounds: state.rounds + 1, waiting_since: now };
}

/** Back to the check: the approval ran out before the seller could be called (or there was none). */
export function recheck(state: GovernedState, now: number): GovernedState {
  return { ...state, step: 'checking', approval: undefined, waiting_since: now };
}

function view(checkId: string | undefined, decision: CheckView['decision'], decidedAt: string, extra: Omit<CheckView, 'decision' | 'decided_at' | 'check_id'>): CheckView {
  const defined = Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined));
  return { ...(checkId ? { check_id: checkId } : {}), decision, decided_at: decidedAt, ...defined };
}

/** Our namespace in a check's `ext`, where a 3.0 request names its seller (checkArguments). */
export const TARGET_AGENT_EXT = 'adcp_orchestrator';

/** The check_governance arguments for the request as it stands (its exact seller arguments as the payload). */
export function checkArguments(state: GovernedState, payload: Record<string, unknown>, operationId: string, agentVersion = '3.0'): Record<string, unknown> {
  // The seller the token is for (its audience). 3.2 names it `target_agent` at the root; 3.0's
  // request is closed to unknown fields and 3.1 has no such field, so there it travels in `ext`,
  // the open vendor-namespaced place for features proposed for standardization.
  const target = agentVersion === '3.2' ? { target_agent: state.target_agent } : { ext: { [TARGET_AGENT_EXT]: { target_agent: state.target_agent } } };
  const purchaseType = purchaseTypeOf(state.tool);
  return {
    plan_id: state.plan_id,
    caller: state.caller,
    ...(purchaseType ? { purchase_type: purchaseType } : {}),
    tool: state.tool,
    payload,
    ...target,
    ...(state.continuity ? { governance_context: state.continuity } : {}),
    context: { orchestrator_operation_id: operationId },
  };
}

/** The seller arguments of an approved request: the stored ones with the approval's token. */
export function sellerArguments(request: Record<string, unknown>, token: string): Record<string, unknown> {
  return { ...request, governance_context: token };
}

/** The report_plan_outcome arguments after the seller's terminal result. */
export function outcomeRequest(
  state: GovernedState,
  key: string,
  seller: { status: string; request: Record<string, unknown>; result?: Record<string, unknown>; error?: { code: string; message?: string } },
): { outcome: OutcomeState['outcome']; request: Record<string, unknown> } {
  const purchaseType = purchaseTypeOf(state.tool);
  const base = {
    idempotency_key: key,
    plan_id: state.plan_id,
    ...(purchaseType ? { purchase_type: purchaseType } : {}),
    ...(state.approval?.check_id ? { check_id: state.approval.check_id } : {}),
    governance_context: state.approval?.token ?? state.continuity ?? '',
  };
  // A completed task whose reply is a refusal (rights rejected) committed nothing.
  const refused = seller.status === 'completed' ? refusalInResult(state.tool, seller.result) : undefined;
  if (seller.status === 'completed' && !refused) {
    return { outcome: 'completed', request: { ...base, outcome: 'completed', seller_response: sellerResponseOf(state.tool, seller.request, seller.result) } };
  }
  const error = refused ?? seller.error ?? { code: seller.status.toUpperCase(), message: `the seller's task ended ${seller.status}` };
  return { outcome: 'failed', request: { ...base, outcome: 'failed', error: { code: error.code, ...(error.message ? { message: error.message } : {}) } } };
}

/** The governance part of an operation's JSON (README.md, Using it): what was checked and reported, never a token. */
export function presentGovernance(state: GovernedState) {
  const o = state.outcome;
  return {
    agent_id: state.agent_id,
    plan_id: state.plan_id,
    target_agent: state.target_agent,
    apply_conditions: state.apply_conditions,
    step: state.step,
    rounds: state.rounds,
    checks: state.checks,
    check: state.check ? { ...state.check, ...(state.step === 'approved' && state.approval ? { usable_until: new Date(state.approval.expires_at).toISOString() } : {}) } : null,
    outcome: o
      ? {
          outcome: o.outcome,
          status: o.status,
          idempotency_key: o.request.idempotency_key,
          committed_budget: o.committed_budget ?? null,
          plan_summary: o.plan_summary ?? null,
          outcome_id: o.outcome_id ?? null,
          findings: o.findings ?? [],
          error: o.error ?? null,
          reported_at: o.reported_at ?? null,
        }
      : null,
    last_error: state.last_error ?? null,
    ...(state.seller_sync ? { seller_sync: state.seller_sync } : {}),
  };
}
