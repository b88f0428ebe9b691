/**
 * The check step of a governed operation: the intent `check_governance` with
 * the exact seller arguments as `payload`, and the poll of a human review. Each
 * answer is written in one commit with what it leads to (src/domain/governed-flow.ts):
 * - approved: the approval is stored and the seller send is due now, leased by
 *   us, and sent at once (a crash leaves it due: the scheduler sends it, after
 *   checking the approval is still usable);
 * - denied: the operation ends `rejected` with the findings; nothing is sent;
 * - conditions: a person is asked (`governance_conditions`), or, when the request
 *   said `apply_conditions`, they are applied and the changed request (a new
 *   idempotency_key) is checked again at once;
 * - submitted / working: a human review, polled like any task;
 * - no answer or no decision: retried with backoff (step-writes.ts).
 */
import { randomUUID } from 'node:crypto';
import { versionOfRelease } from '../../adcp/dialect.js';
import { describeIssues, requestInvalidError, requestIssues } from '../../adcp/request-schema.js';
import { dialectOf } from '../agent-endpoints.js';
import { applyConditions } from '../../domain/governance-conditions.js';
import { readCheckReply, type CheckReading } from '../../domain/governance-decision.js';
import {
  afterConditionsApplied,
  afterDecision,
  checkArguments,
  CHECK_STEP,
  REVIEW_STEP,
  type FlowMove,
  type GovernedState,
} from '../../domain/governed-flow.js';
import { governanceConditionsRequest } from '../../domain/input-request.js';
import { withExpiry, type InputExpiryPolicy } from '../../domain/input-timers.js';
import type { RequestSealer } from '../sealed-request.js';
import { heldTimer, reminderPolicyOf } from '../input-timers.js';
import { isTerminal, type OperationStatus } from '../../domain/status.js';
import { pollDelayMs } from '../../domain/timing.js';
import type { Lease, OperationRow } from '../../store/index.js';
import type { NewEvent, OperationPatch } from '../../store/operations-repo.js';
import { json, leaseOf, released, type CallFailure, type StepWriter } from './step-writes.js';

export class GovernanceCheck {
  constructor(private readonly writer: StepWriter) {}

  /** Sends the check and acts on its answer. */
  async check(claimed: OperationRow): Promise<void> {
    const lease = leaseOf(claimed);
    const row = await this.writer.noteDeadline(claimed, lease);
    const state = JSON.parse(row.governance!) as GovernedState;
    if (isTerminal(row.status as OperationStatus) || state.step !== 'checking') {
      await this.writer.commit(row, lease, 'checking', () => ({ value: null }));
      return;
    }
    const agent = await this.writer.governanceAgent(state);
    if (!agent) {
      await this.fail(row, lease, 'checking', { code: 'GOVERNANCE_AGENT_NOT_FOUND', message: `governance agent ${state.agent_id} was removed` });
      return;
    }
    // The payload is the request exactly as the seller will get it (credentials opened, as they will be sent).
    const payload = this.writer.deps.operations.requests.open(row.request_body);
    // A request the seller's schema refuses is never shown for approval: no approval could make it a buy.
    const seller = await this.writer.deps.store.agents.get(row.agent_id);
    const invalid = requestInvalidError(state.tool, payload, seller ? dialectOf(seller).version : undefined);
    if (invalid) {
      await this.fail(row, lease, 'checking', invalid);
      return;
    }
    const body = checkArguments(this.writer.tokens.forCheck(state), payload, row.id, dialectOf(agent).version);
    const answer = await this.writer.call(agent, 'check_governance', body);
    const counted = (s: GovernedState): GovernedState => ({ ...s, checks: s.checks + 1 });
    if ('failure' in answer) {
      await this.onFailure(row, lease, 'checking', answer.failure, counted);
      return;
    }
    const { reply } = answer;
    await this.decided(row, lease, readCheckReply(reply.data, this.writer.now(), reply.status, reply.taskId), 'call', counted);
  }

  /** Polls the human review; its result is the decision. */
  async review(claimed: OperationRow): Promise<void> {
    const lease = leaseOf(claimed);
    const row = await this.writer.noteDeadline(claimed, lease);
    const state = JSON.parse(row.governance!) as GovernedState;
    if (isTerminal(row.status as OperationStatus) || state.step !== 'reviewing' || !state.review) {
      await this.writer.commit(row, lease, 'reviewing', () => ({ value: null }));
      return;
    }
    const agent = await this.writer.governanceAgent(state);
    if (!agent) {
      await this.fail(row, lease, 'reviewing', { code: 'GOVERNANCE_AGENT_NOT_FOUND', message: `governance agent ${state.agent_id} was removed` });
      return;
    }
    const answer = await this.writer.poll(agent, state.review.task_id);
    if ('failure' in answer) {
      await this.writer.retryLater(row, lease, 'reviewing', answer.failure);
      return;
    }
    const { reply } = answer;
    if (reply.status === 'completed') {
      await this.decided(row, lease, readCheckReply(reply.data, this.writer.now(), undefined, undefined), 'poll');
      return;
    }
    if (reply.status === 'failed' || reply.status === 'canceled' || reply.status === 'rejected') {
      // The review ended without a decision: check again from the start (with backoff), never spend.
      const failure: CallFailure = { error: reply.error ?? { code: `REVIEW_${reply.status.toUpperCase()}`, message: reply.message }, transient: true };
      await this.writer.retryLater(row, lease, 'reviewing', failure, (s) => ({ ...s, step: 'checking', review: undefined }));
      return;
    }
    // Still under review: the next poll, a little later each time.
    const { pollIntervalMs } = this.writer.deps.operations.options;
    await this.writer.commit(row, lease, 'reviewing', (_current, s) => ({
      patch: {
        governance: json({ ...s, review: { task_id: s.review!.task_id, polls: s.review!.polls + 1 } }),
        next_check_at: this.writer.now() + pollDelayMs(s.review!.polls, pollIntervalMs, this.writer.deps.clock.random),
        attempt: 0,
        ...released,
      },
      value: null,
    }));
  }

  /** A failed call: transient → retried; anything else → the operation cannot be checked as it is, and fails (nothing sent). */
  private async onFailure(row: OperationRow, lease: Lease, step: 'checking' | 'reviewing', failure: CallFailure, state?: (s: GovernedState) => GovernedState): Promise<void> {
    if (failure.transient) {
      await this.writer.retryLater(row, lease, step, failure, state);
      return;
    }
    this.writer.deps.metrics.governanceCheck('error');
    await this.fail(row, lease, step, failure.error, state);
  }

  private async fail(row: OperationRow, lease: Lease, step: 'checking' | 'reviewing', error: { code: string; message?: string; details?: unknown }, state?: (s: GovernedState) => GovernedState): Promise<void> {
    const now = this.writer.now();
    const result = await this.writer.commit(row, lease, step, (current, s) => ({
      patch: {
        ...ended('failed', now),
        governance: json({ ...(state ? state(s) : s), step: 'ended', last_error: error }),
        error: json({ ...error, details: { ...(isPlainObject(error.details) ? error.details : {}), step: 'check_governance', governance_agent_id: s.agent_id } }),
      },
      events: [{ source: 'call', kind: 'transition', from: current.status, to: 'failed', detail: { error, step: 'check_governance' } }],
      value: true,
    }));
    if (result.outcome === 'applied' && result.value) this.writer.deps.metrics.transition(row.type, row.status, 'failed', 'call');
  }

  /** Writes what a decision leads to, and carries on with it (the seller send, a re-check) when it is ours to do now. */
  async decided(row: OperationRow, lease: Lease, reading: CheckReading, source: 'call' | 'poll', before: (s: GovernedState) => GovernedState = (s) => s): Promise<void> {
    const { operations, metrics } = this.writer.deps;
    const now = this.writer.now();
    const fromStep = source === 'poll' ? 'reviewing' : 'checking';
    const state = before(JSON.parse(row.governance!) as GovernedState);
    // Its token is sealed before it enters the state (sealed-tokens.ts).
    const move = afterDecision(state, this.writer.tokens.sealedReading(reading), now);
    if (move.move === 'retry') {
      await this.writer.retryLater(row, lease, fromStep, { error: { code: 'NO_DECISION', message: move.reason }, transient: true }, () => move.state);
      return;
    }
    metrics.governanceCheck(reading.kind);
    if (move.move !== 'review' && state.waiting_since !== undefined) metrics.governanceWait.observe((now - state.waiting_since) / 1000);
    const decisionEvent = (current: OperationRow): NewEvent => ({ source, kind: 'governance_decision', from: current.status, to: current.status, detail: decisionDetail(move, reading) });
    // A person may be asked: the tenant's expiry rule for governance conditions applies to the request.
    const expiry = move.move === 'ask' || move.move === 'apply' ? (await this.writer.deps.store.settings.get(row.tenant_id)).settings.input_expiry : undefined;

    if (move.move === 'apply') {
      const applied = await this.writer.commit(row, lease, fromStep, (current) => {
        const rekeyed = rekeyedRequest(operations.requests, current, move.conditions);
        if ('problem' in rekeyed) return this.askPlan(current, { ...move, move: 'ask', state: { ...move.state, step: 'conditions' }, message: `${rekeyed.problem}: a person must decide` }, decisionEvent, expiry);
        return {
          patch: { ...rekeyed.patch, governance: json(afterConditionsApplied(move.state, now)), ...leasedDueNow(this.writer, current, CHECK_STEP) },
          events: [decisionEvent(current), { source, kind: 'conditions_applied', from: current.status, to: current.status, detail: { by: 'apply_conditions', conditions: move.conditions, idempotency_key: rekeyed.key } }],
          value: true,
        };
      });
      if (applied.outcome === 'applied' && applied.value) await this.check(applied.row);
      return;
    }
    const result = await this.writer.commit(row, lease, fromStep, (current) => {
      switch (move.move) {
        case 'send':
          return {
            patch: { governance: json(move.state), stalled: 0, stalled_reason: null, ...leasedDueNow(this.writer, current, 'send') },
            events: [decisionEvent(current)],
            value: 'send' as const,
          };
        case 'reject':
          return this.rejectPlan(current, move, now, decisionEvent);
        case 'ask':
          return this.askPlan(current, move, decisionEvent, expiry);
        case 'review':
          return {
            patch: {
              governance: json(move.state),
              check_kind: REVIEW_STEP,
              next_check_at: now + pollDelayMs(0, operations.options.pollIntervalMs, this.writer.deps.clock.random),
              attempt: 0,
              ...released,
            },
            events: [decisionEvent(current)],
            value: null,
          };
      }
    });
    if (result.outcome !== 'applied') return;
    if (result.value === 'send') await operations.send(result.row);
    if (result.value === 'rejected') metrics.transition(row.type, row.status, 'rejected', source);
  }

  private rejectPlan(current: OperationRow, move: Extract<FlowMove, { move: 'reject' }>, now: number, decisionEvent: (c: OperationRow) => NewEvent) {
    // After a send that may have reached the seller (a re-check of an expired approval), a
    // refusal cannot mean nothing was bought: that is for a person to find out, not to assume.
    if (current.status !== 'requested') {
      const reason = `the re-check was refused (${move.error.code}) after a send whose fate is unknown: not sent again; check the seller`;
      return {
        patch: { governance: json(move.state), status: 'unknown', status_since: now, stalled: 1, stalled_reason: reason, next_check_at: null, check_kind: null, attempt: 0, ...released },
        events: [decisionEvent(current), { source: 'call', kind: 'transition', from: current.status, to: 'unknown', detail: { reason, error: move.error } }],
        value: 'unknown' as const,
      };
    }
    return {
      patch: { ...ended('rejected', now), governance: json(move.state), error: json(move.error) },
      events: [decisionEvent(current), { source: 'call', kind: 'transition', from: current.status, to: 'rejected', detail: { reason: move.error.message, error: move.error } }],
      value: 'rejected' as const,
    };
  }

  private askPlan(current: OperationRow, move: Extract<FlowMove, { move: 'ask' }>, decisionEvent: (c: OperationRow) => NewEvent, expiry: InputExpiryPolicy | undefined) {
    const request = withExpiry(governanceConditionsRequest(move.message, move.conditions, this.writer.now()), expiry);
    return {
      patch: {
        governance: json(move.state),
        needs_input: 1,
        input_request: json(request),
        input_message: request.message,
        answer: null,
        // Its only timer is the request's clock (reminders, expiry), which sends nothing.
        ...heldTimer(request, reminderPolicyOf(this.writer.deps.operations.options)),
        attempt: 0,
        stalled: 0,
        stalled_reason: null,
        ...released,
      },
      events: [decisionEvent(current), { source: 'call', kind: 'input_requested', from: current.status, to: current.status, detail: { input_request: request } }],
      value: null,
    };
  }
}

/** The request with the conditions met (and a person's params over them), under a new idempotency_key: the payload changed. */
export function rekeyedRequest(
  requests: RequestSealer,
  row: OperationRow,
  conditions: Parameters<typeof applyConditions>[1],
  params?: Record<string, unknown>,
): { patch: OperationPatch; key: string } | { problem: string } {
  const applied = applyConditions(requests.open(row.request_body), conditions, params);
  if ('problem' in applied) return applied;
  const key = randomUUID();
  const request: Record<string, unknown> = { ...applied.payload, idempotency_key: key };
  // Conditions (or a person's params) that make the request one the seller's schema refuses cannot be
  // met so. Its own version pin says which release it is built for (none: 3.0).
  const pinned = typeof request.adcp_version === 'string' ? versionOfRelease(request.adcp_version) : undefined;
  const issues = requestIssues(row.type, request, pinned);
  if (issues && issues.length > 0) return { problem: `the request with the conditions applied is not valid for the seller (${describeIssues(issues)})` };
  // Stored as every request is: built once, credentials sealed in place, sent byte for byte.
  return { patch: { request_body: requests.seal(request), idempotency_key: key }, key };
}

/** Due now and leased by this instance, which carries on at once; if it dies, the lease runs out and the scheduler does. */
export function leasedDueNow(writer: StepWriter, current: OperationRow, checkKind: string): OperationPatch {
  const { operations } = writer.deps;
  const now = writer.now();
  return { next_check_at: now, check_kind: checkKind, lease_owner: operations.options.instanceId, lease_until: now + operations.leaseMs, lease_epoch: current.lease_epoch + 1, attempt: 1 };
}

function ended(status: 'rejected' | 'failed', now: number): OperationPatch {
  return { status, status_since: now, completed_at: now, needs_input: 0, input_request: null, input_message: null, next_check_at: null, check_kind: null, stalled: 0, stalled_reason: null, attempt: 0, ...released };
}

function decisionDetail(move: FlowMove, reading: CheckReading): Record<string, unknown> {
  const check = move.state.check;
  return {
    decision: reading.kind === 'review' ? 'submitted' : reading.kind,
    ...(check?.check_id ? { check_id: check.check_id } : {}),
    ...(check?.explanation ? { explanation: check.explanation } : {}),
    ...(check?.expires_at ? { expires_at: check.expires_at } : {}),
    ...(check?.findings?.length ? { findings: check.findings } : {}),
    ...(check?.conditions ? { conditions: check.conditions } : {}),
    ...(reading.kind === 'review' ? { task_id: reading.taskId } : {}),
    round: move.state.rounds,
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
