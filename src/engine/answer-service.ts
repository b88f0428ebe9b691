/**
 * A person answers what an operation waits for (POST /v1/operations/:id/input,
 * docs/ARCHITECTURE.md, People in the loop). Every answer is taken in one locked write that first checks
 * the operation still waits for that very request and has no answer yet, so two
 * people answering at once get one winner and one 409 naming the first answer.
 *
 * What an answer does, by kind:
 * - spend_approval: `approve` sends the held buy (the normal send path);
 *   `reject` ends it `rejected`, with no call to the seller.
 * - seller_input with a stored A2A continuation: `approve` / `respond` send the
 *   full input (the original request, with the person's corrections) on that
 *   continuation, durably (AnswerDelivery).
 * - seller_input without one (MCP, or a question learnt by poll or webhook):
 *   `respond` sends the corrected request as a new child operation with a new
 *   idempotency_key, and the original ends `canceled` (superseded), in one commit.
 * - `reject` of a seller's question ends it `rejected` locally. AdCP 3.0 offers
 *   no way to cancel a create_media_buy task that has no media buy yet
 *   (update_media_buy needs a media_buy_id), so the seller is not told; an
 *   event says so. Nothing was bought: the seller's task waits until it expires.
 * - governance_conditions: `approve` applies the conditions (with the person's
 *   `params` over them) and the changed request, under a new idempotency_key,
 *   is checked again (src/engine/governance/); `reject` ends it `rejected`.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { checkAnswer, isSameAnswer, mergeParams, type Answer, type InputRequest, type RecordedAnswer } from '../domain/input-request.js';
import { checkNewRequest } from './request-validity.js';
import { deadlineFor } from '../domain/timing.js';
import type { OperationRow, Store } from '../store/index.js';
import type { Tx } from '../store/tx.js';
import type { MutationPlan, NewEvent, OperationPatch, Written } from '../store/operations-repo.js';
import type { SecretBox } from '../store/secret-box.js';
import type { AnswerDelivery } from './answer-delivery.js';
import { answered, answeredEvent } from './answer-records.js';
import type { ChangeBus } from './change-bus.js';
import type { Clock } from './clock.js';
import { EngineError, notFound } from './errors.js';
import { ANSWER_CHECK, parseAnswer, parseContinuation, parseInputRequest, type StoredAnswer } from './input-requests.js';
import type { Metrics } from './metrics.js';
import { correctedOperation } from './corrected-operation.js';
import type { OperationService } from './operation-service.js';
import type { SpendApproval } from './spend-approval.js';
import { ended, rejectionPlan, SELLER_NOT_TOLD } from './rejection.js';
import { expiredForRejection } from '../domain/input-timers.js';
import { CHECK_STEP } from '../domain/governed-flow.js';
import { questionIdOf } from '../domain/input-question.js';
import { QUESTION_RETRIES, QuestionChanged, questionSuperseded, waitingQuestionId } from './question-match.js';
import type { GovernanceFlow } from './governance/flow.js';
import type { CreativeAnswers } from './media-buys/creative-answers.js';

export interface AnswerServiceDeps {
  store: Store;
  secrets: SecretBox;
  bus: ChangeBus;
  operations: OperationService;
  delivery: AnswerDelivery;
  spendApproval: SpendApproval;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
  /** Governed operations' flow (absent: conditions cannot be answered). */
  governance?: GovernanceFlow;
  /** Answers to rejected creatives (absent: they cannot be answered). */
  creatives?: CreativeAnswers;
}

/** Whether this answer was the one taken, and the operation to show. */
interface Taken {
  taken: boolean;
  row: OperationRow;
}

export class AnswerService {
  constructor(private readonly deps: AnswerServiceDeps) {}

  /**
   * Takes a person's answer; returns the operation that now carries the work (the child,
   * when one was made). An answer naming a question (`question_id`) is taken only for that
   * question; one naming none answers the question asked when it is written, so if the
   * seller asks something else in between, it is checked again against the new one.
   */
  async answer(tenantId: string, operationId: string, answer: Answer, actor: string): Promise<OperationRow> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.answerOnce(tenantId, operationId, answer, actor);
      } catch (err) {
        if (!(err instanceof QuestionChanged)) throw err;
        const request = parseInputRequest(err.current);
        if (answer.question_id !== undefined || attempt >= QUESTION_RETRIES || !request) {
          throw request ? questionSuperseded(err.current, request, answer.question_id) : err;
        }
      }
    }
  }

  private async answerOnce(tenantId: string, operationId: string, answer: Answer, actor: string): Promise<OperationRow> {
    const row = await this.deps.store.operations.getForTenant(tenantId, operationId);
    if (!row) throw new EngineError('operation_not_found', `operation ${operationId} not found`, 404);
    const request = parseInputRequest(row);
    if (row.needs_input !== 1 || !request) return this.alreadyDone(row, answer, actor);
    // Expired with `reject`: too late, even in the moment before the timer has ended it.
    const expiredAt = expiredForRejection(request, this.deps.clock.now());
    if (expiredAt !== null) {
      throw new EngineError('not_waiting', `operation ${row.id} no longer waits: its ${describeKind(request.kind)} request expired at ${new Date(expiredAt).toISOString()} unanswered and is rejected`, 409, {
        status: row.status,
        expired_at: new Date(expiredAt).toISOString(),
        answered: null,
      });
    }
    // An answer to a question since replaced is not an answer to the new one (nor judged by its rules).
    const questionId = questionIdOf(request);
    if (answer.question_id !== undefined && answer.question_id !== questionId) throw questionSuperseded(row, request, answer.question_id);
    const problem = checkAnswer(request, answer);
    if (problem) throw new EngineError(problem.code, problem.message, problem.status);
    const recorded: RecordedAnswer = {
      decision: answer.decision,
      ...(answer.message !== undefined ? { message: answer.message } : {}),
      // Kept with any credential in them sealed, like the request they correct (sealed-request.ts).
      ...(answer.params !== undefined ? { params: this.deps.operations.requests.sealedIn(answer.params) } : {}),
      actor,
      at: new Date(this.deps.clock.now()).toISOString(),
      kind: request.kind,
      question_id: questionId,
    };
    if (request.kind === 'creative_rejected') return this.answerCreatives(row, recorded, request);
    if (answer.decision === 'reject') return this.reject(row, recorded);
    switch (request.kind) {
      case 'spend_approval':
        return this.approveSpend(row, recorded);
      case 'seller_input':
        return parseContinuation(row) ? this.answerOnContinuation(row, recorded) : this.supersede(row, recorded);
      case 'governance_conditions':
        return this.approveConditions(row, recorded);
    }
  }

  /** A rejected creative: a correction sent, or the rejection dismissed, through this service's one locked write. */
  private answerCreatives(row: OperationRow, recorded: RecordedAnswer, request: InputRequest): Promise<OperationRow> {
    if (!this.deps.creatives) throw new EngineError('creatives_not_supported', 'this process follows no creatives', 501);
    return this.deps.creatives.answer(row, recorded, request, {
      take: (plan, alongside) => this.take(row, recorded, plan, alongside),
      drive: (child, work) => this.driveBriefly(child, work),
    });
  }

  /**
   * The agent's credentials were updated (PATCH /v1/agents/:id): every operation of
   * it waiting in `auth-required` is retried as the protocol permits. On an open A2A
   * task, the original input goes again on its continuation with the new credentials.
   * Without one, a resend under the same idempotency_key could only replay the
   * seller's auth-required answer (a seller replays the first reply to a key), so the
   * permitted new attempt is a new operation with a new key, and the original is
   * superseded: the seller never carried that request out (it was waiting for
   * credentials), so the new attempt cannot make a second buy.
   */
  async retryAfterCredentials(tenantId: string, agentId: string, actor: string): Promise<string[]> {
    const { store, clock } = this.deps;
    const waiting = await store.operations.list(tenantId, { agentId, status: 'auth-required', needsInput: true }, 500);
    const retried: string[] = [];
    for (const listed of waiting) {
      let row: OperationRow | undefined = listed;
      // Whatever it asks now is answered by the new credentials: a question replaced meanwhile is read again.
      for (let attempt = 1; row && attempt <= QUESTION_RETRIES; attempt++) {
        const questionId = waitingQuestionId(row);
        if (questionId === null || row.status !== 'auth-required') break;
        const recorded: RecordedAnswer = {
          decision: 'approve',
          message: "the agent's credentials were updated: retried",
          actor,
          at: new Date(clock.now()).toISOString(),
          kind: 'seller_input',
          question_id: questionId,
        };
        try {
          const carried = parseContinuation(row) ? await this.answerOnContinuation(row, recorded, false) : await this.supersede(row, recorded, false);
          retried.push(carried.id);
          break;
        } catch (err) {
          // Answered meanwhile by someone else: nothing to retry for this one.
          if (err instanceof EngineError && err.code === 'not_waiting') break;
          if (!(err instanceof QuestionChanged)) throw err;
          row = err.current;
        }
      }
    }
    return retried;
  }

  /** The operation waits no longer: the same answer again is taken as done; anything else is 409 naming what happened. */
  private async alreadyDone(row: OperationRow, answer: Answer, actor: string): Promise<OperationRow> {
    const first = parseAnswer(row);
    if (first?.expired_at) {
      throw new EngineError('not_waiting', `operation ${row.id} no longer waits: its ${describeKind(first.kind)} request expired at ${first.expired_at} unanswered and was rejected`, 409, {
        status: row.status,
        expired_at: first.expired_at,
        answered: { actor: first.actor, decision: first.decision, message: first.message ?? null, at: first.at },
      });
    }
    if (first && isSameAnswer({ ...first, params: this.deps.operations.requests.openedIn(first.params) }, answer, actor)) {
      const child = first.child_id ? await this.deps.store.operations.get(first.child_id) : undefined;
      return child ?? row;
    }
    const details = {
      status: row.status,
      answered: first ? { actor: first.actor, decision: first.decision, message: first.message ?? null, at: first.at } : null,
    };
    const message = first
      ? `operation ${row.id} no longer waits: ${first.actor} already answered ${first.decision} at ${first.at}${first.message ? ` ("${first.message}")` : ''}`
      : `operation ${row.id} does not wait for input (status ${row.status})`;
    throw new EngineError('not_waiting', message, 409, details);
  }

  private async reject(row: OperationRow, recorded: RecordedAnswer): Promise<OperationRow> {
    const now = this.deps.clock.now();
    const { taken, row: result } = await this.take(row, recorded, (current) =>
      rejectionPlan(
        current,
        recorded,
        {
          source: 'user',
          reason: recorded.message ?? 'rejected by a person',
          error: { code: 'REJECTED_BY_BUYER', message: recorded.message ?? `rejected by ${recorded.actor}` },
          lead: answeredEvent(current, recorded),
        },
        now,
      ),
    );
    if (taken) this.deps.metrics.transition(row.type, row.status, 'rejected', 'user');
    return result;
  }

  /** Approve a held buy: it is sent now, by us, as any new buy is (a crash leaves it due, and it is sent then). */
  private async approveSpend(row: OperationRow, recorded: RecordedAnswer): Promise<OperationRow> {
    const { operations, clock } = this.deps;
    const now = clock.now();
    const { taken, row: result } = await this.take(row, recorded, (current) => ({
      patch: {
        ...answered(recorded),
        // The seller's time starts now, not when the buy was first held.
        deadline_at: deadlineFor(current.type, now, operations.options.deadlinesMs),
        ...dueNowLeasedBy(operations.options.instanceId, current, now, operations.leaseMs, 'send'),
      },
      events: [answeredEvent(current, recorded)],
    }));
    return taken ? this.driveBriefly(result, () => operations.send(result)) : result;
  }

  /** Approve governance conditions: applied, and the changed request is checked again at once (a crash leaves the check due). */
  private async approveConditions(row: OperationRow, recorded: RecordedAnswer): Promise<OperationRow> {
    const { governance, operations, clock } = this.deps;
    if (!governance) throw new EngineError('governance_not_supported', 'this process runs no governance flow', 501);
    // Bad params are a 400 before anything is written.
    governance.conditionsApproved(row, recorded);
    const now = clock.now();
    const { taken, row: result } = await this.take(row, recorded, (current) => {
      const applied = governance.conditionsApproved(current, recorded);
      return {
        patch: { ...answered(recorded), ...applied.patch, ...dueNowLeasedBy(operations.options.instanceId, current, now, operations.leaseMs, CHECK_STEP) },
        events: [answeredEvent(current, recorded), ...applied.events],
      };
    });
    return taken ? this.driveBriefly(result, () => governance.run(result)) : result;
  }

  /** Approve or respond on the seller's open A2A task: the whole input again, as one stored message. */
  private async answerOnContinuation(row: OperationRow, recorded: RecordedAnswer, wait = true): Promise<OperationRow> {
    const { operations, clock, delivery } = this.deps;
    const now = clock.now();
    const original = operations.requests.open(row.request_body);
    const input = recorded.params ? mergeParams(original, operations.requests.openedIn(recorded.params)) : original;
    // The person's params make the whole input again: one the seller's schema refuses is theirs to fix, refused now.
    if (recorded.params) checkNewRequest(row.type, input, { idempotencyKey: true, reportingWebhook: row.reporting_token !== null, planId: row.governance !== null });
    const stored: StoredAnswer = {
      ...recorded,
      // The whole request again (our webhook secret included): stored sealed, opened to send.
      delivery: { message_id: randomUUID(), skill: row.type, input: operations.requests.sealedIn(input), ...(recorded.message ? { text: recorded.message } : {}), sent_at: null },
    };
    const { taken, row: result } = await this.take(row, recorded, (current) => ({
      patch: { ...answered(recorded), answer: JSON.stringify(stored), ...dueNowLeasedBy(operations.options.instanceId, current, now, operations.leaseMs, ANSWER_CHECK) },
      events: [answeredEvent(current, recorded)],
    }));
    return taken ? this.driveBriefly(result, () => delivery.run(result), wait) : result;
  }

  /**
   * No continuation: the corrected request goes out as a new operation (a new
   * idempotency_key: the payload changed), and the original ends canceled as
   * superseded. Both in one commit, so the answer is never half taken.
   */
  private async supersede(row: OperationRow, recorded: RecordedAnswer, wait = true): Promise<OperationRow> {
    const { store, operations, metrics } = this.deps;
    const { child, hold, now } = await correctedOperation(this.deps, row, recorded);
    let childWritten: Written = { events: [], notifications: [] };
    const { taken, row: result } = await this.take(
      row,
      recorded,
      (current) => ({
        patch: {
          ...ended('canceled', now),
          error: JSON.stringify({ code: 'SUPERSEDED', message: `superseded by operation ${child.row.id}, which carries the corrected request` }),
          answer: JSON.stringify({ ...recorded, child_id: child.row.id } satisfies RecordedAnswer),
        },
        events: [
          answeredEvent(current, recorded),
          { source: 'user', kind: 'transition', from: current.status, to: 'canceled', actor: recorded.actor, detail: { reason: 'superseded', superseded_by: child.row.id } },
          { source: 'user', kind: 'seller_not_told', from: 'canceled', to: 'canceled', detail: { reason: SELLER_NOT_TOLD } },
        ],
      }),
      async (trx) => {
        childWritten = await store.operations.insertIn(trx, child.row, child.events);
      },
    );
    if (!taken) return result;
    metrics.transition(row.type, row.status, 'canceled', 'user');
    this.deps.bus.publish({ operation: child.row, ...childWritten });
    metrics.transition(child.row.type, 'none', 'requested', 'user');
    if (hold) return child.row;
    const flow = this.deps.governance;
    return this.driveBriefly(child.row, () => (flow?.handles(child.row.check_kind) ? flow.run(child.row) : operations.send(child.row)), wait);
  }

  /**
   * The one write that takes an answer. Refused (409, naming the first answer) when,
   * under the row lock, the operation no longer waits or has been answered meanwhile;
   * when it waits on another question than the one answered, QuestionChanged is thrown
   * (nothing written) for `answer` to decide.
   */
  private async take(
    row: OperationRow,
    recorded: RecordedAnswer,
    plan: (current: OperationRow) => { patch: OperationPatch; events: NewEvent[] },
    alongside?: (trx: Tx) => Promise<void>,
  ): Promise<Taken> {
    const { store, clock, bus } = this.deps;
    const mutation = await store.operations.mutate<boolean>(
      row.id,
      null,
      (current): MutationPlan<boolean> => {
        const asked = waitingQuestionId(current);
        if (asked !== null && asked !== recorded.question_id) throw new QuestionChanged(current);
        return asked !== null ? { ...plan(current), value: true } : { value: false };
      },
      clock.now(),
      alongside ? async (trx, taken) => (taken ? alongside(trx) : undefined) : undefined,
    );
    if (mutation.outcome === 'not_found') throw notFound('operation', row.id);
    if (mutation.outcome === 'lease_lost') throw new Error('unreachable: answers are written without a lease');
    // Someone else's answer (or the seller) got there first: the same answer is done, another is 409.
    if (!mutation.value) return { taken: false, row: await this.alreadyDone(mutation.row, recorded, recorded.actor) };
    if (mutation.outcome === 'applied') bus.publish({ operation: mutation.row, events: mutation.events, notifications: mutation.notifications });
    return { taken: true, row: mutation.row };
  }

  /** Starts the work an answer set off and waits a little for its first reply, so quick answers come back at once. */
  private async driveBriefly(row: OperationRow, work: () => Promise<void>, wait = true): Promise<OperationRow> {
    const { operations, log, store } = this.deps;
    const running = work().catch((err) => log.error({ err, operation_id: row.id }, 'acting on an answer failed; the timer retries it'));
    if (!wait) return row;
    await Promise.race([running, new Promise((resolve) => setTimeout(resolve, operations.options.syncWaitMs).unref())]);
    return (await store.operations.get(row.id)) ?? row;
  }
}

function describeKind(kind: string): string {
  return kind.replace('_', ' ');
}

/** Due now and leased by this instance, which acts on it at once; if we die, the lease runs out and the scheduler does. */
function dueNowLeasedBy(instanceId: string, current: OperationRow, now: number, leaseMs: number, checkKind: string): OperationPatch {
  return { next_check_at: now, check_kind: checkKind, lease_owner: instanceId, lease_until: now + leaseMs, lease_epoch: current.lease_epoch + 1, attempt: 1 };
}
