/**
 * Sending a person's answer to the seller on the stored A2A continuation, durably.
 *
 * The answer and the exact message (its `messageId`, skill and full input) are
 * stored before the first send, with a timer (`check_kind` = answer). Each send
 * is marked first (`sent_at`), so a claim that finds the mark does not know
 * whether the last send arrived: an *ambiguous continuation*. Resending blindly
 * could hand the seller the same answer twice (a second purchase, if it took the
 * first as done and the second as new input), so the runner looks first: it polls
 * the AdCP task (by its `task_id`, never the A2A task). Still waiting → the
 * answer did not take effect, and the same message (same `messageId`, same bytes)
 * goes again, which a seller that dedupes on messageId sees as one; moved on →
 * the answer landed (or the seller moved by itself) and that observation is
 * applied instead. With no task id to look at, it fails closed: stalled, for a
 * person to confirm with the seller. A JSON-RPC refusal (task unknown, closed,
 * the message invalid) means the continuation is gone: the operation waits for
 * a person again, without a continuation.
 */
import type { Logger } from 'pino';
import { retriedWithinBudgetOnly } from '../adcp/recovery.js';
import { AdcpTransportError, type AdcpClient, type TaskReply } from '../adcp/types.js';
import { sellerInputRequest } from '../domain/input-request.js';
import { withExpiry } from '../domain/input-timers.js';
import { NEEDS_INPUT_STATUSES, type OperationStatus } from '../domain/status.js';
import { retryDelayMs } from '../domain/timing.js';
import type { Lease, OperationRow, Store } from '../store/index.js';
import type { MutationPlan, OperationPatch } from '../store/operations-repo.js';
import type { SecretBox } from '../store/secret-box.js';
import { endpointFor } from './agent-endpoints.js';
import { BrokenCircuitError, type AgentBreakers } from './breakers.js';
import type { ChangeBus } from './change-bus.js';
import type { Clock } from './clock.js';
import {
  ANSWER_CHECK,
  inputColumnsForQuestion,
  parseAnswer,
  parseContinuation,
  withoutDelivery,
  type StoredAnswer,
} from './input-requests.js';
import { withInputExpiry } from './input-timers.js';
import type { Metrics } from './metrics.js';
import { nextCheckFor, planObservation, STALLED_SLOWDOWN, type TaskObservation } from './observation-plan.js';
import { replyToObservation, type OperationService } from './operation-service.js';

/** A2A / JSON-RPC codes by which a server refuses a message before acting on it. */
const REFUSALS = new Set([-32600, -32602, -32001, -32002, -32004]);

export interface AnswerDeliveryDeps {
  store: Store;
  adcp: AdcpClient;
  secrets: SecretBox;
  bus: ChangeBus;
  operations: OperationService;
  breakers: AgentBreakers;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
}

export class AnswerDelivery {
  constructor(private readonly deps: AnswerDeliveryDeps) {}

  /** Runs one claimed operation whose check is ANSWER_CHECK. */
  async run(row: OperationRow): Promise<void> {
    const { store, adcp, secrets, breakers, clock, metrics, operations } = this.deps;
    const lease = leaseOf(row);
    const answer = parseAnswer(row);
    const delivery = answer?.delivery;
    const continuation = parseContinuation(row);
    if (!answer || !delivery || !continuation || !NEEDS_INPUT_STATUSES.has(row.status as OperationStatus)) {
      await this.finish(row, lease, (current) => ({
        patch: { ...(answer ? { answer: JSON.stringify(withoutDelivery(answer)) } : {}), ...this.normalTimer(current) },
        events: [{ source: 'timer', kind: 'answer_dropped', from: current.status, to: current.status, detail: { reason: `the task is ${current.status}: nothing to answer` } }],
        value: null,
      }));
      return;
    }
    if (row.attempt > operations.options.maxAttempts) {
      await this.stall(row, lease, `the answer could not be delivered after ${row.attempt - 1} attempts`, true);
      return;
    }
    const now = clock.now();
    const openUntil = breakers.retryAt(row.agent_id, now);
    if (openUntil !== null) {
      await this.waitUntil(row, lease, openUntil);
      return;
    }
    const agent = await store.agents.get(row.agent_id);
    if (!agent) {
      await this.stall(row, lease, 'the agent was removed before the answer could be sent', false);
      return;
    }
    const endpoint = endpointFor(agent, secrets);
    const timeoutMs = operations.options.callTimeoutMs;

    if (delivery.sent_at !== null) {
      // An earlier send may have arrived: look before sending again.
      if (!row.task_id) {
        await this.stall(row, lease, 'the answer may or may not have reached the seller, and without a task id there is no way to check: confirm with the seller', false);
        return;
      }
      let polled: TaskReply;
      try {
        polled = await breakers.execute(agent.id, agent.name, () => adcp.getTask(endpoint, row.task_id!, { timeoutMs }));
      } catch (err) {
        if (err instanceof BrokenCircuitError) return this.waitUntil(row, lease, breakers.retryAt(agent.id, clock.now()) ?? clock.now() + 1000);
        metrics.poll(agent.name, 'error');
        await this.retryLater(row, lease, err);
        return;
      }
      metrics.poll(agent.name, 'ok');
      if (polled.status !== row.status) {
        await this.applyReply(row, lease, { ...replyToObservation(polled), source: 'poll' });
        return;
      }
    }

    const marked = await this.commit(row, lease, (current) => ({
      patch: {
        answer: JSON.stringify({ ...answer, delivery: { ...delivery, sent_at: now } } satisfies StoredAnswer),
        next_check_at: now + timeoutMs + 5_000,
        lease_until: now + operations.leaseMs,
      },
      events: [
        {
          source: 'call',
          kind: delivery.sent_at === null ? 'answer_sent' : 'answer_resent',
          from: current.status,
          to: current.status,
          detail: { message_id: delivery.message_id, a2a_task_id: continuation.a2a_task_id, attempt: current.attempt },
        },
      ],
      value: null,
    }));
    if (marked.outcome !== 'applied') return;

    let reply: TaskReply;
    try {
      reply = await breakers.execute(agent.id, agent.name, () =>
        adcp.continueTask(
          endpoint,
          { taskId: continuation.a2a_task_id, contextId: continuation.a2a_context_id, messageId: delivery.message_id, ...(delivery.text ? { text: delivery.text } : {}) },
          delivery.skill,
          operations.requests.openedIn(delivery.input),
          { timeoutMs },
        ),
      );
    } catch (err) {
      if (err instanceof BrokenCircuitError) return this.waitUntil(marked.row, lease, breakers.retryAt(agent.id, clock.now()) ?? clock.now() + 1000);
      metrics.agentCall(agent.name, row.type, 'transport_error');
      // Refused by the seller before dispatch, or here, unsent, for failing its schema: the person answers again.
      const refusedBySeller = err instanceof AdcpTransportError && err.kind === 'rpc' && err.rpcCode !== undefined && REFUSALS.has(err.rpcCode) && err.adcpError?.recovery !== 'transient';
      if (refusedBySeller || (err instanceof AdcpTransportError && err.kind === 'request_invalid')) {
        await this.refused(marked.row, lease, err);
        return;
      }
      if (err instanceof AdcpTransportError && err.kind === 'reply_too_large') {
        // The seller has the answer and replied past ADCP_ORCH_MAX_REPLY_BYTES: sending it again would not help.
        await this.stall(marked.row, lease, `the seller answered the person's answer, but its reply was too large to read (${err.message}): check at the seller`, false);
        return;
      }
      await this.retryLater(marked.row, lease, err);
      return;
    }
    metrics.agentCall(agent.name, row.type, reply.error ? 'error' : 'ok');
    await this.applyReply(marked.row, lease, { ...replyToObservation(reply), source: 'call' });
  }

  /**
   * The seller's reply to the answer (or what the look-first poll found) ends the
   * delivery, whatever it says. If the seller asks again (still input-required,
   * e.g. the input was not valid), that is a new question for a person.
   */
  private async applyReply(row: OperationRow, lease: Lease, obs: TaskObservation): Promise<void> {
    const { store, operations, clock } = this.deps;
    obs = await withInputExpiry(store, row.id, obs);
    const now = clock.now();
    const result = await store.operations.mutate(
      row.id,
      lease,
      (current) => {
        const pending = current.check_kind === ANSWER_CHECK;
        const plan = planObservation(pending ? { ...current, check_kind: null } : current, obs, operations.options, now, clock.random);
        const patch: OperationPatch = { ...plan.patch, ...released() };
        const events = [...(plan.events ?? [])];
        const answer = parseAnswer(current);
        if (answer?.delivery && patch.answer === undefined) patch.answer = JSON.stringify(withoutDelivery(answer));
        const status = (patch.status ?? current.status) as OperationStatus;
        if (pending && plan.value === 'same' && (status === 'input-required' || status === 'auth-required')) {
          Object.assign(patch, inputColumnsForQuestion(status, obs, now));
          if (obs.message !== undefined) patch.input_message = obs.message;
          // The new request's clock counts in the timer (its first reminder, its expiry).
          Object.assign(patch, nextCheckFor(status, { ...current, ...patch }, operations.options, now, clock.random, obs.source));
          events.push({ source: obs.source, kind: 'input_requested', from: status, to: status, detail: { message: obs.message, reason: 'the seller asked again after the answer' } });
        }
        return { patch, events, value: plan.value };
      },
      now,
    );
    await operations.observed(row.id, result);
  }

  /** The seller refused the message on this continuation: it is gone, and the operation waits for a person again. */
  private async refused(row: OperationRow, lease: Lease, err: AdcpTransportError): Promise<void> {
    const expiry = (await this.deps.store.settings.forOperation(row.id)).input_expiry;
    const now = this.deps.clock.now();
    await this.finish(row, lease, (current) => {
      const status = current.status as 'input-required' | 'auth-required';
      const asked: OperationPatch = {
        needs_input: 1,
        input_request: JSON.stringify(withExpiry(sellerInputRequest(status, { message: current.input_message ?? undefined }, false, now), expiry)),
        continuation: null,
        answer: null,
      };
      return {
        // The new request's clock counts in the timer (its first reminder, its expiry).
        patch: { ...asked, ...this.normalTimer({ ...current, ...asked }) },
        events: [
          {
            source: 'call',
            kind: 'continuation_refused',
            from: current.status,
            to: current.status,
            detail: { error: err.adcpError ?? { code: `JSONRPC_${err.rpcCode}`, message: err.message }, reason: 'the seller no longer takes answers on this task; a person may respond with a new request or reject' },
          },
        ],
        value: null,
      };
    });
  }

  /** A failed or ambiguous send: try again after the backoff (the next try looks first), counting the attempt. */
  private async retryLater(row: OperationRow, lease: Lease, err: unknown): Promise<void> {
    const { clock, log } = this.deps;
    const adcpError = err instanceof AdcpTransportError ? err.adcpError : undefined;
    if (adcpError && retriedWithinBudgetOnly(adcpError) && row.attempt >= this.deps.operations.options.maxAttempts) {
      // A code we do not know is transient only within the retry budget (recovery.ts): not sent again, not even slowly.
      const reason = `the seller answered ${adcpError.code}, an error code we do not know, to each of ${row.attempt} sends of the answer (ADCP_ORCH_RETRY_ATTEMPTS); not sent again: a person must look`;
      await this.stall(row, lease, reason, false);
      return;
    }
    const wait = retryDelayMs(row.attempt, adcpError?.retryAfterSeconds, clock.random);
    const message = err instanceof Error ? err.message : String(err);
    log.warn({ operation_id: row.id, err: message, retry_in_ms: wait }, 'sending an answer failed; will look and retry');
    await this.finish(
      row,
      lease,
      (current) => ({
        patch: { next_check_at: clock.now() + wait },
        events: [{ source: 'call', kind: 'answer_send_failed', from: current.status, to: current.status, detail: { error: adcpError ?? { code: err instanceof AdcpTransportError ? err.kind : 'exception', message }, retry_in_ms: wait } }],
        value: null,
      }),
      false,
    );
  }

  /** Escalate to people: stalled. `keepTrying` keeps the answer due at the slow stalled pace; else only a person moves it. */
  private async stall(row: OperationRow, lease: Lease, reason: string, keepTrying: boolean): Promise<void> {
    const { clock, operations } = this.deps;
    const retryIn = Math.min(operations.options.pollIntervalMs * STALLED_SLOWDOWN, 3_600_000);
    await this.finish(row, lease, (current) => ({
      patch: { stalled: 1, stalled_reason: reason, next_check_at: keepTrying ? clock.now() + retryIn : null, ...(keepTrying ? {} : { check_kind: null }) },
      events: current.stalled ? [] : [{ source: 'timer', kind: 'stalled', from: current.status, to: current.status, detail: { reason } }],
      value: null,
    }));
  }

  private async waitUntil(row: OperationRow, lease: Lease, at: number): Promise<void> {
    const when = Math.max(at, this.deps.clock.now()) + Math.round(1000 * this.deps.clock.random());
    await this.finish(row, lease, () => ({ patch: { next_check_at: when, attempt: Math.max(0, row.attempt - 1) }, value: null }), false);
  }

  private normalTimer(row: OperationRow): Pick<OperationPatch, 'next_check_at' | 'check_kind'> {
    const { operations, clock } = this.deps;
    return nextCheckFor(row.status as OperationStatus, row, operations.options, clock.now(), clock.random);
  }

  private async finish(row: OperationRow, lease: Lease, plan: (current: OperationRow) => MutationPlan<null>, resetAttempts = true): Promise<void> {
    await this.commit(row, lease, (current) => {
      const p = plan(current);
      return { ...p, patch: { ...p.patch, ...released(resetAttempts) } };
    });
  }

  private async commit(row: OperationRow, lease: Lease, plan: (current: OperationRow) => MutationPlan<null>) {
    const result = await this.deps.store.operations.mutate(row.id, lease, plan, this.deps.clock.now());
    if (result.outcome === 'applied' && result.events.length > 0) this.deps.bus.publish({ operation: result.row, events: result.events, notifications: result.notifications });
    return result;
  }
}

function leaseOf(row: OperationRow): Lease {
  return { owner: row.lease_owner ?? '', epoch: row.lease_epoch };
}

function released(resetAttempts = true) {
  return { lease_owner: null, lease_until: null, ...(resetAttempts ? { attempt: 0 } : {}) };
}
