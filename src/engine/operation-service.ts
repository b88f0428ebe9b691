/**
 * The operation service: creates operations durably, sends them, polls them and
 * folds every observation into the stored state.
 *
 * Order of events for a new operation sent at once (createAndStart): the row is
 * stored leased by us and already marked `calling_adcp`, with a timer at the call
 * timeout, in one commit; then the bytes leave. A crash after that commit leaves
 * an ambiguous send that the scheduler resends with the same idempotency key and
 * identical bytes. Work the scheduler claims (a resend, a row stored `requested`
 * by `create`) is marked `calling_adcp` in its own commit before the call.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { retriedWithinBudgetOnly } from '../adcp/recovery.js';
import { requiresIdempotencyKey } from '../adcp/task-kinds.js';
import { AdcpTransportError, type AdcpClient, type AdcpError, type TaskReply } from '../adcp/types.js';
import { isTerminal, type OperationStatus } from '../domain/status.js';
import { retryDelayMs } from '../domain/timing.js';
import type { Store, OperationRow, Lease } from '../store/index.js';
import type { BuildOptions, CreateOperationInput } from './operation-builder.js';
import { insertOperation, type CreationDeps } from './operation-creation.js';
import { requestInvalidError } from '../adcp/request-schema.js';
import { describeError, errorKind, isRetryableSendFailure, leaseOf, releasedLease, replyToObservation } from './call-outcomes.js';
import { ObservationWriter } from './observation-writer.js';
import type { MutateResult, MutationPlan } from '../store/operations-repo.js';
import type { SecretBox } from '../store/secret-box.js';
import { RequestSealer } from './sealed-request.js';
import { dialectOf, endpointFor } from './agent-endpoints.js';
import { idempotencyUnknownPlan, ResendGuard, type GuardAction } from './resend-guard.js';
import { EXPIRED_CODE } from './resend-policy.js';
import type { ChangeBus } from './change-bus.js';
import type { Clock } from './clock.js';
import { notFound } from './errors.js';
import type { Metrics } from './metrics.js';
import { BrokenCircuitError, type AgentBreakers } from './breakers.js';
import type { ObservationOutcome, TimingPolicy } from './observation-plan.js';
import type { Tx } from '../store/tx.js';
import type { WriteSlot } from '../store/write-batch.js';
import { callingMarkPlan, giveUpPlan, nothingToPollPlan, replyTooLargePlan, retriesSpentPlan, retryLaterPlan } from './work-plans.js';
import { INPUT_TIMER_CHECK, type InputTimers } from './input-timers.js';
import type { GovernanceHooks } from './governance/hooks.js';
import type { StrandedLeases } from './stranded-leases.js';

export type { CreateOperationInput, WebhookMode } from './operation-builder.js';
export { isAgentFailure, replyToObservation } from './call-outcomes.js';

export interface EngineOptions extends TimingPolicy {
  publicUrl?: string;
  callTimeoutMs: number;
  syncWaitMs: number;
  /** Claims beyond this many attempts without progress end the operation as `unknown` + stalled. */
  maxAttempts: number;
  instanceId: string;
  /** Per task type overrides of the overall deadline (key `default` for all others). */
  deadlinesMs: Record<string, number>;
  replayWindowMs: number;
}

export class OperationService {
  /** Stored requests keep their credentials sealed (sealed-request.ts); everything that sends one opens it here. */
  readonly requests: RequestSealer;
  /** Governed operations' own steps and their two points in the send path (set once the governance flow is built). */
  governance?: GovernanceHooks;
  /** Where a first send the database's absence cut short leaves its lease, to be handed back once it returns. */
  stranded?: StrandedLeases;

  constructor(
    private readonly store: Store,
    private readonly adcp: AdcpClient,
    private readonly secrets: SecretBox,
    private readonly bus: ChangeBus,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
    private readonly log: Logger,
    readonly options: EngineOptions,
    private readonly breakers: AgentBreakers,
    /** Reminders and expiry of what waits for a person (src/engine/input-timers.ts). */
    readonly inputTimers: InputTimers,
  ) {
    this.requests = new RequestSealer(secrets);
    this.creation = { store, secrets, bus, metrics, clock, requests: this.requests };
    this.observations = new ObservationWriter({ store, bus, metrics, clock, log, timing: options, governance: () => this.governance });
    this.resends = new ResendGuard({ store, adcp, secrets, requests: this.requests, callTimeoutMs: options.callTimeoutMs, replayWindowMs: options.replayWindowMs });
  }

  private readonly creation: CreationDeps;
  /** Where observations are folded into the stored operation (src/engine/observation-writer.ts). */
  private readonly observations: ObservationWriter;
  /** Whether an ambiguous send may go again under its key, by what the seller declared (src/engine/resend-guard.ts). */
  private readonly resends: ResendGuard;

  /**
   * Lease long enough to cover one call plus writing its outcome, and the wait for a slot
   * in the agent's bulkhead before it (at most the call timeout: src/app.ts).
   */
  get leaseMs(): number {
    return 2 * this.options.callTimeoutMs + 15_000;
  }

  async create(input: CreateOperationInput): Promise<OperationRow> {
    return (await insertOperation(this.creation, input, this.buildOptions(), false)).row;
  }

  private buildOptions(sendingNow = false): BuildOptions {
    return { ...this.options, leaseMs: this.leaseMs, ...(sendingNow ? { sendingNowTimeoutMs: this.options.callTimeoutMs } : {}) };
  }

  /**
   * Creates, then sends at once and waits a little (`waitMs`, default ADCP_ORCH_SYNC_WAIT_MS) for
   * the first reply, so quick answers come back in the same request. The send goes on after the wait.
   */
  async createAndStart(input: CreateOperationInput, waitMs = this.options.syncWaitMs): Promise<OperationRow> {
    const { row, inserted } = await insertOperation(this.creation, input, this.buildOptions(true), true);
    // An existing operation (the same idempotency key again) is already being driven;
    // a held one waits for a person.
    if (!inserted || input.hold) return row;
    let written: OperationRow | undefined;
    const first = this.governance?.handles(row.check_kind)
      ? this.governance.run(row)
      : row.status === 'calling_adcp'
        ? this.call(row, leaseOf(row), this.requests.open(row.request_body)).then((r) => {
            written = r;
          }) // stored already marked: straight to the wire
        : this.send(row);
    const sending = first.catch((err) => this.stranded?.note(row, err, 'operation') || this.log.error({ err, operation_id: row.id }, 'send failed'));
    await Promise.race([sending, sleep(waitMs, undefined, { ref: false })]);
    // The row as the reply's write left it when that write ended the wait (no read needed); else as stored now.
    return written ?? (await this.store.operations.get(row.id)) ?? row;
  }

  /**
   * Runs one piece of claimed work: a send (first or resend) or a poll. Before the
   * call: timers that are due for their own sake (deadline passed, a reminder owed),
   * the retry budget, and the agent's circuit breaker.
   */
  async runClaimed(row: OperationRow, writes?: WriteSlot): Promise<void> {
    const now = this.clock.now();
    // A held request's clock: never a send, only a person's answer sends what waits for one.
    if (row.check_kind === INPUT_TIMER_CHECK) return this.inputTimers.run(row);
    if (isTerminal(row.status as OperationStatus)) {
      await this.finish(row.id, leaseOf(row), () => ({ patch: { next_check_at: null, check_kind: null }, value: null }));
      return;
    }
    row = await this.noteTimers(row, now);
    const noted = await this.inputTimers.noteClaimed(row);
    if (!noted) return; // its request expired and the operation ended (or the lease moved on)
    row = noted;
    if (row.attempt > this.options.maxAttempts) {
      await this.giveUp(row, `no progress after ${row.attempt - 1} attempts`);
      return;
    }
    const openUntil = this.breakers.retryAt(row.agent_id, now);
    if (openUntil !== null) {
      await this.waitForBreaker(row, openUntil);
      return;
    }
    if (row.check_kind === 'send') await this.send(row);
    else await this.poll(row, writes);
  }

  /** Deadline passed → stalled (not a seller failure), recorded once. Reminders are the input timers' (above). */
  private async noteTimers(row: OperationRow, now: number): Promise<OperationRow> {
    const deadlinePassed = row.deadline_at != null && now >= row.deadline_at && row.stalled === 0;
    if (!deadlinePassed) return row;
    const result = await this.commit(row.id, leaseOf(row), (current) => ({
      patch: { stalled: 1, stalled_reason: `deadline passed: ${current.type} has run past ${new Date(current.deadline_at!).toISOString()}` },
      events: [{ source: 'timer', kind: 'deadline_passed', from: current.status, to: current.status, detail: { deadline_at: current.deadline_at } }],
      value: null,
    }));
    if (result.outcome !== 'applied') return row;
    this.metrics.timedOutOne(row.type);
    this.log.warn({ operation_id: row.id, type: row.type }, 'operation passed its deadline; marked stalled');
    return result.row;
  }

  /** An open breaker: the work waits for the half-open probe, and the wait is not counted as an attempt. */
  private async waitForBreaker(row: OperationRow, openUntil: number): Promise<void> {
    const at = Math.max(openUntil, this.clock.now()) + Math.round(1000 * this.clock.random());
    await this.finish(row.id, leaseOf(row), () => ({ patch: { next_check_at: at, attempt: Math.max(0, row.attempt - 1) }, value: null }), false);
  }

  async send(row: OperationRow): Promise<void> {
    const lease = leaseOf(row);
    let args: Record<string, unknown> | undefined;
    if (row.governance && this.governance) {
      // A governed spend goes only with an approval still usable; without one it goes back to its check.
      const authorized = await this.governance.argumentsFor(row, lease);
      if (!authorized) return;
      args = authorized;
    }
    args ??= this.requests.open(row.request_body);
    if (row.status === 'requested') {
      // A first send is checked against the agent's schema; one that fails is ours to fix and is
      // never sent (request-validity.ts). A resend goes as it went: its bytes may already have
      // reached the seller, whose answer (a replay) is the only way to learn what they did.
      const agent = await this.store.agents.get(row.agent_id);
      const invalid = requestInvalidError(row.type, args, agent ? dialectOf(agent).version : undefined);
      if (invalid) {
        await this.observe(row.id, lease, { status: 'failed', source: 'call', error: invalid, message: invalid.message });
        return;
      }
    }
    const now = this.clock.now();
    const before = row.status;
    let lookedUp: string | undefined;
    if (before !== 'requested' && requiresIdempotencyKey(row.type)) {
      // The same key again only while the seller still remembers it (its declared replay window);
      // else the outcome is looked up first, and bound or left to a person (resend-guard.ts).
      const action = await this.resends.beforeResend(row, now);
      if (action.kind !== 'resend') return this.settleUnsent(row, lease, action);
      lookedUp = action.note;
    }
    const marked = await this.commit(row.id, lease, (current) => callingMarkPlan(current, now, this.options.callTimeoutMs, this.leaseMs, lookedUp), now);
    if (marked.outcome !== 'applied') return;
    if (before === 'requested') this.metrics.transition(row.type, before, 'calling_adcp', 'call');
    await this.call(marked.row, lease, args);
  }

  /**
   * The call itself, on a row already marked `calling_adcp` under `lease`, and its outcome
   * written. Returns the row as that write left it when the reply was applied.
   */
  private async call(marked: OperationRow, lease: Lease, args: Record<string, unknown>): Promise<OperationRow | undefined> {
    const row = marked;
    const agent = await this.store.agents.get(row.agent_id);
    if (!agent) {
      await this.observe(row.id, lease, { status: 'failed', source: 'call', error: { code: 'AGENT_NOT_FOUND', message: 'agent was removed' } });
      return undefined;
    }
    let reply: TaskReply;
    try {
      reply = await this.breakers.execute(agent.id, agent.name, () =>
        this.adcp.callTask(endpointFor(agent, this.secrets), row.type, args, { timeoutMs: this.options.callTimeoutMs, requestChecked: true }),
      );
    } catch (err) {
      if (err instanceof BrokenCircuitError) {
        await this.waitForBreaker(marked, this.breakers.retryAt(agent.id, this.clock.now()) ?? this.clock.now() + 1000);
        return undefined;
      }
      await this.onSendFailure(marked, lease, agent.name, err);
      return undefined;
    }
    this.metrics.agentCall(agent.name, row.type, reply.error ? 'error' : 'ok');
    if (reply.error) this.metrics.agentError(agent.name, reply.error.code);
    // The seller forgot the key: what the first send did is looked up, never taken as a failure.
    if (reply.error?.code === EXPIRED_CODE && requiresIdempotencyKey(row.type)) {
      await this.settleUnsent(row, lease, await this.resends.afterExpired(row, reply.error));
      return undefined;
    }
    // A transient AdCP error (RATE_LIMITED, SERVICE_UNAVAILABLE, …) means the request was not
    // carried out: the same key and bytes go again later, never earlier than retry_after.
    if (reply.status === 'failed' && reply.error?.recovery === 'transient' && !reply.taskId) {
      await this.onSendFailure(marked, lease, agent.name, new AdcpTransportError(reply.error.message ?? reply.error.code, 'protocol', undefined, reply.error), false);
      return undefined;
    }
    const result = await this.observe(row.id, lease, { ...replyToObservation(reply), source: 'call' });
    return result.outcome === 'applied' ? result.row : undefined;
  }

  /** `writes`: the row's slot in its claimed page's shared commit, for the reply's write. */
  async poll(row: OperationRow, writes?: WriteSlot): Promise<void> {
    const lease = leaseOf(row);
    const agent = await this.store.agents.get(row.agent_id);
    if (!agent || !row.task_id) {
      // Nothing to poll: a question waits for its person, anything else is resent.
      await this.finish(row.id, lease, (current) => nothingToPollPlan(current, this.options, this.clock.now(), this.clock.random));
      return;
    }
    let reply: TaskReply;
    try {
      reply = await this.breakers.execute(agent.id, agent.name, () =>
        this.adcp.getTask(endpointFor(agent, this.secrets), row.task_id!, { timeoutMs: this.options.callTimeoutMs }),
      );
    } catch (err) {
      if (err instanceof BrokenCircuitError) {
        await this.waitForBreaker(row, this.breakers.retryAt(agent.id, this.clock.now()) ?? this.clock.now() + 1000);
        return;
      }
      this.metrics.poll(agent.name, 'error');
      if (err instanceof AdcpTransportError && err.kind === 'reply_too_large') await this.replyTooLarge(row, lease, err, 'poll');
      // An agent without a tool to poll with is never asked: a person is told, its webhook may still come.
      else if (err instanceof AdcpTransportError && err.kind === 'unsupported') await this.giveUp(row, `${err.message}: waiting for its webhook`);
      else await this.retryLater(row, lease, err, 'poll');
      return;
    }
    this.metrics.poll(agent.name, 'ok');
    await this.observe(row.id, lease, { ...replyToObservation(reply), source: 'poll' }, undefined, writes);
  }

  /** Applies an observation (from a call, poll, webhook or reconcile): ObservationWriter.observe. */
  observe(...args: Parameters<ObservationWriter['observe']>): Promise<MutateResult<ObservationOutcome>> {
    return this.observations.observe(...args);
  }

  /** `observe` inside a write transaction the caller holds; `observed` once it committed (ObservationWriter.observeIn). */
  observeIn(...args: Parameters<ObservationWriter['observeIn']>): Promise<MutateResult<ObservationOutcome>> {
    return this.observations.observeIn(...args);
  }

  /** Several observations in one batched write (ObservationWriter.observeManyIn). */
  observeManyIn(...args: Parameters<ObservationWriter['observeManyIn']>): Promise<Array<MutateResult<ObservationOutcome>>> {
    return this.observations.observeManyIn(...args);
  }

  /** After an observation committed: change notice, metrics, log (ObservationWriter.observed). */
  observed(...args: Parameters<ObservationWriter['observed']>): Promise<void> {
    return this.observations.observed(...args);
  }

  async get(tenantId: string, id: string): Promise<OperationRow> {
    const row = await this.store.operations.getForTenant(tenantId, id);
    if (!row) throw notFound('operation', id);
    return row;
  }

  /**
   * A transient failure of a send or poll: try again after the backoff (never before the
   * seller's retry_after), keeping the attempt count so the retry budget runs out.
   */
  private async retryLater(row: OperationRow, lease: Lease, err: unknown, what: 'send' | 'poll'): Promise<void> {
    const adcpError = err instanceof AdcpTransportError ? err.adcpError : undefined;
    const wait = retryDelayMs(row.attempt, adcpError?.retryAfterSeconds, this.clock.random);
    this.log.warn({ operation_id: row.id, err: describeError(err), retry_in_ms: wait }, `${what} failed; will retry`);
    await this.finish(row.id, lease, () => retryLaterPlan(err, adcpError, what, wait, this.clock.now()), false);
  }

  private async onSendFailure(row: OperationRow, lease: Lease, agentName: string, err: unknown, countCall = true): Promise<void> {
    const transport = err instanceof AdcpTransportError ? err : undefined;
    const adcpError = transport?.adcpError;
    if (countCall) {
      this.metrics.agentCall(agentName, row.type, 'transport_error');
      this.metrics.agentError(agentName, adcpError?.code ?? errorKind(err));
    }
    if (adcpError?.code === EXPIRED_CODE && requiresIdempotencyKey(row.type)) return this.settleUnsent(row, lease, await this.resends.afterExpired(row, adcpError));
    if (isRetryableSendFailure(transport)) {
      // A code we do not know is transient only within the retry budget: its last try ends the tries.
      if (adcpError && retriedWithinBudgetOnly(adcpError) && row.attempt >= this.options.maxAttempts) {
        await this.finish(row.id, lease, (current) => retriesSpentPlan(current, adcpError, row.attempt, this.clock.now()));
        return;
      }
      // Ambiguous or refused before dispatch: resend later with the same key and bytes.
      await this.retryLater(row, lease, err, 'send');
      return;
    }
    if (transport?.kind === 'reply_too_large') return this.replyTooLarge(row, lease, transport, 'call');
    // Correctable and terminal errors are never retried automatically: a person fixes the request.
    const error: AdcpError = adcpError ?? { code: 'TRANSPORT_ERROR', message: describeError(err) };
    await this.observe(row.id, lease, { status: 'failed', source: 'call', error, message: error.message });
  }

  /** A reply past ADCP_ORCH_MAX_REPLY_BYTES: a read fails; a mutation waits for a person (replyTooLargePlan, work-plans.ts). */
  private async replyTooLarge(row: OperationRow, lease: Lease, err: AdcpTransportError, source: 'call' | 'poll'): Promise<void> {
    const error: AdcpError = { code: 'reply_too_large', message: err.message };
    if (!requiresIdempotencyKey(row.type)) await this.observe(row.id, lease, { status: 'failed', source, error, message: err.message });
    else await this.finish(row.id, lease, (current) => replyTooLargePlan(current, error, source, this.clock.now()));
  }

  /** What the resend guard decided instead of a send: bind the seller's record, fail, or stall for a person. */
  private async settleUnsent(row: OperationRow, lease: Lease, action: Exclude<GuardAction, { kind: 'resend' }>): Promise<void> {
    if (action.kind === 'bind') await this.observe(row.id, lease, { status: 'completed', source: 'reconcile', data: action.record, message: action.note });
    else if (action.kind === 'fail') await this.observe(row.id, lease, { status: 'failed', source: 'call', error: action.error, message: action.error.message });
    else await this.finish(row.id, lease, (current) => idempotencyUnknownPlan(current, action, this.clock.now(), this.options, this.clock.random));
  }

  /** Claimed work that keeps failing: escalated, never dropped (giveUpPlan, work-plans.ts). */
  private async giveUp(row: OperationRow, reason: string): Promise<void> {
    const now = this.clock.now();
    await this.finish(row.id, leaseOf(row), (current) => giveUpPlan(current, reason, now, this.options, this.clock.random));
  }

  private async finish(
    id: string,
    lease: Lease,
    plan: (row: OperationRow) => MutationPlan<null>,
    resetAttempts = true,
  ): Promise<void> {
    await this.commit(id, lease, (row) => {
      const p = plan(row);
      return { ...p, patch: { ...p.patch, ...releasedLease(resetAttempts) } };
    });
  }

  private async commit<T>(
    id: string,
    lease: Lease | null,
    plan: (row: OperationRow) => MutationPlan<T>,
    now = this.clock.now(),
    alongside?: (trx: Tx, value: T) => Promise<void>,
  ): Promise<MutateResult<T>> {
    const result = await this.store.operations.mutate(id, lease, plan, now, alongside);
    if (result.outcome === 'applied' && result.events.length > 0) this.bus.publish({ operation: result.row, events: result.events, notifications: result.notifications });
    if (result.outcome === 'lease_lost') this.log.info({ operation_id: id }, 'lease lost before writing; discarded');
    return result;
  }
}
