/**
 * What every governed step shares: calling the governance agent (behind its
 * circuit breaker), committing a step's outcome under the lease it was claimed
 * with, and retrying with backoff when the agent gives no answer. A step whose
 * operation moved on meanwhile (canceled, answered, another step) writes
 * nothing but the release of its lease.
 */
import type { Logger } from 'pino';
import { retriedWithinBudgetOnly } from '../../adcp/recovery.js';
import { AdcpTransportError, type AdcpClient, type AdcpError, type TaskReply } from '../../adcp/types.js';
import { CHECK_STEP, parseGovernance, REPORT_STEP, REVIEW_STEP, type GovernedState, type GovernedStep } from '../../domain/governed-flow.js';
import { retryDelayMs } from '../../domain/timing.js';
import type { AgentRow, Lease, OperationRow, Store } from '../../store/index.js';
import type { MutateResult, MutationPlan, NewEvent, OperationPatch } from '../../store/operations-repo.js';
import type { SecretBox } from '../../store/secret-box.js';
import { endpointFor } from '../agent-endpoints.js';
import { AgentBusyError, BrokenCircuitError, type AgentBreakers } from '../breakers.js';
import type { ChangeBus } from '../change-bus.js';
import type { Clock } from '../clock.js';
import type { Metrics } from '../metrics.js';
import { STALLED_SLOWDOWN } from '../observation-plan.js';
import type { OperationService } from '../operation-service.js';
import { GovernanceTokens } from './sealed-tokens.js';

export interface FlowDeps {
  store: Store;
  adcp: AdcpClient;
  secrets: SecretBox;
  bus: ChangeBus;
  operations: OperationService;
  breakers: AgentBreakers;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
  /** Look for due work now (the scheduler). */
  wake: () => void;
}

/** A call to the governance agent that got no AdCP answer, or an error answer. */
export interface CallFailure {
  error: AdcpError;
  /** Worth trying again with the same bytes: the agent was unreachable, slow, or said so (transient). */
  transient: boolean;
}

export type CallResult = { reply: TaskReply } | { failure: CallFailure };

export const leaseOf = (row: OperationRow): Lease => ({ owner: row.lease_owner ?? '', epoch: row.lease_epoch });
export const released = { lease_owner: null, lease_until: null } as const;
export const json = (v: unknown): string => JSON.stringify(v);

export class StepWriter {
  /** Governance tokens sealed in the state, opened only to be sent (sealed-tokens.ts). */
  readonly tokens: GovernanceTokens;

  constructor(readonly deps: FlowDeps) {
    this.tokens = new GovernanceTokens(deps.secrets);
  }

  now(): number {
    return this.deps.clock.now();
  }

  async governanceAgent(state: GovernedState): Promise<AgentRow | undefined> {
    return this.deps.store.agents.get(state.agent_id);
  }

  /** One call to the governance agent, under its breaker, counted in the agent-call metrics. */
  async call(agent: AgentRow, task: string, body: Record<string, unknown>): Promise<CallResult> {
    const { adcp, breakers, secrets, metrics, operations } = this.deps;
    let reply: TaskReply;
    try {
      reply = await breakers.execute(agent.id, agent.name, () => adcp.callTask(endpointFor(agent, secrets), task, body, { timeoutMs: operations.options.callTimeoutMs }));
    } catch (err) {
      metrics.agentCall(agent.name, task, 'transport_error');
      return { failure: failureOf(err) };
    }
    metrics.agentCall(agent.name, task, reply.error ? 'error' : 'ok');
    if (reply.error) metrics.agentError(agent.name, reply.error.code);
    if (reply.status === 'failed' || reply.status === 'rejected' || reply.status === 'canceled') {
      const error = reply.error ?? { code: reply.status.toUpperCase(), message: reply.message };
      // An unknown code without `recovery` resolves to transient (recovery.ts): retried within the budget
      // only, then stalled (retryLater); correctable and terminal errors need the request fixed.
      return { failure: { error, transient: error.recovery === undefined || error.recovery === 'transient' } };
    }
    return { reply };
  }

  /** Polls a task at the governance agent (a human review). */
  async poll(agent: AgentRow, taskId: string): Promise<CallResult> {
    const { adcp, breakers, secrets, metrics, operations } = this.deps;
    try {
      const reply = await breakers.execute(agent.id, agent.name, () => adcp.getTask(endpointFor(agent, secrets), taskId, { timeoutMs: operations.options.callTimeoutMs }));
      metrics.poll(agent.name, 'ok');
      return { reply };
    } catch (err) {
      metrics.poll(agent.name, 'error');
      return { failure: failureOf(err) };
    }
  }

  /**
   * Writes a step's outcome if the operation is still at `step` (and not ended,
   * unless the step is the outcome report, which follows the end). Otherwise
   * only the lease is released (and the timer cleared once it has ended).
   */
  async commit<T>(row: OperationRow, lease: Lease, step: GovernedStep | GovernedStep[], plan: (current: OperationRow, state: GovernedState) => MutationPlan<T>): Promise<MutateResult<T | undefined>> {
    const steps = Array.isArray(step) ? step : [step];
    const result = await this.deps.store.operations.mutate<T | undefined>(
      row.id,
      lease,
      (current) => {
        const state = parseGovernance(current.governance);
        const ended = isEnded(current.status) && !steps.includes('reporting');
        if (!state || ended || !steps.includes(state.step)) {
          return { patch: { ...released, ...(ended ? { next_check_at: null, check_kind: null } : {}) }, value: undefined };
        }
        return plan(current, state);
      },
      this.now(),
    );
    if (result.outcome === 'applied') {
      if (result.events.length > 0) this.deps.bus.publish({ operation: result.row, events: result.events, notifications: result.notifications });
      // Due at once and not held by anyone: look now rather than at the next tick.
      if (result.row.next_check_at !== null && result.row.next_check_at <= this.now() && result.row.lease_owner === null) this.deps.wake();
    }
    if (result.outcome === 'lease_lost') this.deps.log.info({ operation_id: row.id }, 'governed step: lease lost before writing; discarded');
    return result;
  }

  /**
   * No answer to use (unreachable, GOVERNANCE_UNAVAILABLE, no decision): try again after
   * the backoff, never before `retry_after`. Past the retry budget the operation is
   * marked stalled (people are told) and tried on at a slower pace, never given up:
   * nothing is sent to the seller without a decision, and an outcome is the plan's ledger.
   * Except an error code we do not know (`retriedWithinBudgetOnly`): its `transient` is a
   * default the spec bounds by the budget, so past it the step waits for a person, untried.
   */
  async retryLater(row: OperationRow, lease: Lease, step: GovernedStep, failure: CallFailure, state?: (s: GovernedState) => GovernedState): Promise<void> {
    const { clock, operations } = this.deps;
    const now = this.now();
    const exhausted = row.attempt >= operations.options.maxAttempts;
    const spent = this.budgetSpent(row, failure);
    const slow = Math.min(60_000, operations.options.pollIntervalMs * STALLED_SLOWDOWN);
    const wait = exhausted ? slow + Math.round(slow * 0.2 * clock.random()) : retryDelayMs(row.attempt, failure.error.retryAfterSeconds, clock.random);
    const reporting = step === 'reporting';
    if (spent) this.deps.log.warn({ operation_id: row.id, step, error: failure.error.code }, 'governance agent answered an unknown error code past the retry budget; a person must look');
    else this.deps.log.warn({ operation_id: row.id, step, error: failure.error.code, retry_in_ms: wait }, 'governance agent gave no answer; will retry');
    await this.commit(row, lease, step, (current, s) => {
      const next = { ...(state ? state(s) : s), last_error: { code: failure.error.code, ...(failure.error.message ? { message: failure.error.message } : {}) } };
      const events: NewEvent[] = [
        {
          source: step === 'reviewing' ? 'poll' : 'call',
          kind: reporting ? 'outcome_report_failed' : 'governance_unavailable',
          from: current.status,
          to: current.status,
          detail: { error: failure.error, ...(spent ? { retry_budget_spent: true } : { retry_in_ms: wait }), attempt: current.attempt },
        },
      ];
      // The timer runs the step the state is at (a review that failed goes back to checking).
      const patch: OperationPatch = { governance: json(next), next_check_at: now + wait, check_kind: STEP_KIND[next.step] ?? current.check_kind, ...released };
      if (spent) {
        Object.assign(patch, { next_check_at: null, check_kind: null, attempt: 0, stalled: 1 });
        patch.stalled_reason = `the governance agent answered ${failure.error.code}, an error code we do not know, on each of ${current.attempt} tries (ADCP_ORCH_RETRY_ATTEMPTS), taken as transient; not tried again${reporting ? ': the outcome report is not sent' : ': nothing is sent to the seller'}. A person must look`;
        events.push({ source: 'timer', kind: 'stalled', from: current.status, to: current.status, detail: { reason: patch.stalled_reason, error: failure.error } });
      } else if (exhausted) {
        patch.attempt = 0;
        if (!current.stalled) {
          patch.stalled = 1;
          patch.stalled_reason = reporting
            ? `the outcome report to the governance agent keeps failing (${failure.error.code}); it is retried until accepted`
            : `no governance decision after ${current.attempt} attempts (${failure.error.code}); nothing is sent to the seller until there is one`;
          events.push({ source: 'timer', kind: 'stalled', from: current.status, to: current.status, detail: { reason: patch.stalled_reason } });
        }
      }
      return { patch, events, value: null };
    });
    if (!reporting) this.deps.metrics.governanceCheck(failure.transient ? 'unavailable' : 'no_decision');
  }

  /** This try was the last the retry budget gives an error code we do not know (`retriedWithinBudgetOnly`). */
  budgetSpent(row: OperationRow, failure: CallFailure): boolean {
    return row.attempt >= this.deps.operations.options.maxAttempts && retriedWithinBudgetOnly(failure.error);
  }

  /** The local deadline passed while waiting for a decision: stalled (people are told), and the wait goes on. */
  async noteDeadline(row: OperationRow, lease: Lease): Promise<OperationRow> {
    const now = this.now();
    if (row.deadline_at === null || now < row.deadline_at || row.stalled === 1) return row;
    const result = await this.commit(row, lease, ['checking', 'reviewing'], (current) => {
      const reason = `deadline passed at ${new Date(current.deadline_at!).toISOString()} without a governance decision; nothing is sent to the seller until there is one`;
      return {
        patch: { stalled: 1, stalled_reason: reason },
        events: [{ source: 'timer', kind: 'deadline_passed', from: current.status, to: current.status, detail: { deadline_at: current.deadline_at, reason } }],
        value: true,
      };
    });
    if (result.outcome !== 'applied' || !result.value) return row;
    this.deps.metrics.timedOutOne(row.type);
    return result.row;
  }
}

const STEP_KIND: Partial<Record<GovernedStep, string>> = { checking: CHECK_STEP, reviewing: REVIEW_STEP, reporting: REPORT_STEP };

function isEnded(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'canceled' || status === 'rejected';
}

/** No AdCP answer: network, timeout, HTTP or protocol trouble, a reply too large to read, or the agent's breaker is open or its bulkhead full. */
export function failureOf(err: unknown): CallFailure {
  if (err instanceof AgentBusyError) return { error: { code: 'AGENT_BUSY', message: err.message }, transient: true };
  if (err instanceof BrokenCircuitError) return { error: { code: 'CIRCUIT_OPEN', message: 'the governance agent failed repeatedly; its circuit breaker is open' }, transient: true };
  if (!(err instanceof AdcpTransportError)) return { error: { code: 'EXCEPTION', message: err instanceof Error ? err.message : String(err) }, transient: true };
  // An unknown code without `recovery` arrives as transient (recovery.ts), bounded by retryLater.
  if (err.adcpError) return { error: err.adcpError, transient: err.adcpError.recovery === undefined || err.adcpError.recovery === 'transient' };
  // An answer we would not read (past ADCP_ORCH_MAX_REPLY_BYTES): asking again gets the same one.
  if (err.kind === 'reply_too_large') return { error: { code: 'reply_too_large', message: err.message }, transient: false };
  // No AdCP answer at all (unreachable, slow, an HTTP error, a reply we cannot read): there is no
  // decision to act on, so the step is retried; it never turns into permission to spend.
  return { error: { code: err.kind === 'http' ? `HTTP_${err.httpStatus ?? 'ERROR'}` : err.kind.toUpperCase(), message: err.message }, transient: true };
}
