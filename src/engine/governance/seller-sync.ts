/**
 * The sync step of a governed operation (`gov_sync`): before the first governed
 * request for an account at a governance-aware seller, the buyer's governance
 * agent is registered there with `sync_governance` (domain/governance-sync.ts),
 * so the seller can consult it. Durable like every step: its own events, its own
 * retries with backoff, a stall after the retry budget, and one commit for what
 * it leads to.
 *
 * - The seller already has this agent (governance_syncs names the same agent, URL
 *   and credentials for the account): nothing is sent; on to the check.
 * - Otherwise the registration is sent, and once the seller says `synced` it is
 *   recorded (governance_syncs) and the check follows at once. A registration the
 *   seller refuses (an error answer, the account `failed`) ends the operation
 *   `failed` before any check or spend: a buy the seller would judge against
 *   another agent, or none, is not one to make. No answer: retried, never skipped.
 * - Credentials removed since the request was made: not sent, said so, checked on.
 *
 * Governed buys for one account started together may each send it before either
 * has recorded it: the same registration twice, which replace semantics makes
 * harmless.
 */
import { withVersionPin } from '../../adcp/dialect.js';
import { requestInvalidError } from '../../adcp/request-schema.js';
import { accountKey, readSyncReply, syncGovernanceRequest, syncIdempotencyKey, urlProblem, type SyncReading } from '../../domain/governance-sync.js';
import { CHECK_STEP, SYNC_STEP, type GovernedState, type SellerSyncState } from '../../domain/governed-flow.js';
import { isTerminal, type OperationStatus } from '../../domain/status.js';
import { pollDelayMs, retryDelayMs } from '../../domain/timing.js';
import type { AgentRow, Lease, OperationRow } from '../../store/index.js';
import type { NewEvent, OperationPatch } from '../../store/operations-repo.js';
import { dialectOf } from '../agent-endpoints.js';
import { STALLED_SLOWDOWN } from '../observation-plan.js';
import { leasedDueNow } from './governance-check.js';
import { json, leaseOf, released, type CallFailure, type CallResult, type StepWriter } from './step-writes.js';

type Problem = { code: string; message: string; details?: Record<string, unknown> };

export class SellerSync {
  constructor(
    private readonly writer: StepWriter,
    /** The check, run at once on the row the sync's last write left (leased by us). */
    private readonly next: (row: OperationRow) => Promise<void>,
  ) {}

  async run(row: OperationRow): Promise<void> {
    const lease = leaseOf(row);
    const state = JSON.parse(row.governance!) as GovernedState;
    if (isTerminal(row.status as OperationStatus) || state.step !== 'syncing') {
      await this.writer.commit(row, lease, 'syncing', () => ({ value: null }));
      return;
    }
    const { store, secrets, operations } = this.writer.deps;
    const [seller, agent] = [await store.agents.get(row.agent_id), await this.writer.governanceAgent(state)];
    if (!seller || !agent) {
      await this.fail(row, lease, { code: agent ? 'AGENT_NOT_FOUND' : 'GOVERNANCE_AGENT_NOT_FOUND', message: agent ? 'the seller agent was removed' : `governance agent ${state.agent_id} was removed` });
      return;
    }
    const request = operations.requests.open(row.request_body);
    const account = request.account;
    const key = accountKey(account);
    if (key === undefined) return this.proceed(row, lease, { status: 'skipped', reason: 'the request names no account to register the governance agent for' });
    if (!agent.seller_credentials_enc) {
      return this.proceed(row, lease, { status: 'skipped', reason: `${agent.name} has no seller_credentials (removed since the request was made): sync_governance is not sent` });
    }
    const problem = urlProblem(agent.url);
    if (problem) {
      await this.fail(row, lease, { code: 'GOVERNANCE_SYNC_IMPOSSIBLE', message: `${agent.name} cannot be registered with ${seller.name}: ${problem}; nothing was sent`, details: { url: agent.url } });
      return;
    }
    const credentials = secrets.open(agent.seller_credentials_enc);
    // Tells another URL or rotated credentials apart without keeping either in clear.
    const fingerprint = secrets.digest(`${agent.url}\n${credentials}`);
    const record = await store.governanceSyncs.get(seller.id, key);
    if (record && record.governance_agent_id === agent.id && record.fingerprint === fingerprint) {
      return this.proceed(row, lease, { status: 'current', idempotency_key: record.idempotency_key });
    }

    const idempotencyKey = syncIdempotencyKey(row.id, fingerprint);
    let answer: CallResult;
    const pending = state.seller_sync?.task_id;
    if (pending) {
      answer = await this.writer.poll(seller, pending);
    } else {
      const body = withVersionPin(syncGovernanceRequest({ idempotencyKey, account, url: agent.url, credentials }), dialectOf(seller));
      // Nothing leaves that the seller's schema refuses: say which part, never the credentials.
      const invalid = requestInvalidError('sync_governance', body, dialectOf(seller).version);
      if (invalid) {
        await this.fail(row, lease, { code: invalid.code, message: `the sync_governance request for ${agent.name} is not valid for ${seller.name}: ${invalid.message}`, details: invalid.details as Record<string, unknown> });
        return;
      }
      answer = await this.writer.call(seller, 'sync_governance', body);
    }
    if ('failure' in answer) {
      if (answer.failure.transient) await this.retryLater(row, lease, answer.failure);
      else await this.fail(row, lease, refusal(seller, answer.failure.error));
      return;
    }
    const { reply } = answer;
    if ((reply.status === 'submitted' || reply.status === 'working') && (reply.taskId ?? pending)) {
      await this.waitForTask(row, lease, reply.taskId ?? pending!);
      return;
    }
    const reading: SyncReading = reply.status === 'completed' ? readSyncReply(reply.data) : { kind: 'no_answer', reason: `the seller's task is ${reply.status}` };
    if (reading.kind === 'refused') {
      await this.fail(row, lease, refusal(seller, reading.error));
      return;
    }
    if (reading.kind === 'no_answer') {
      await this.retryLater(row, lease, { error: { code: 'NO_SYNC_ANSWER', message: reading.reason }, transient: true });
      return;
    }
    const now = this.writer.now();
    await store.governanceSyncs.put({
      seller_agent_id: seller.id,
      account_key: key,
      tenant_id: row.tenant_id,
      governance_agent_id: agent.id,
      governance_url: agent.url,
      fingerprint,
      idempotency_key: idempotencyKey,
      operation_id: row.id,
      synced_at: now,
    });
    await this.proceed(row, lease, { status: 'synced', idempotency_key: idempotencyKey }, {
      kind: 'governance_synced',
      detail: { seller_agent_id: seller.id, account, governance_agent_id: agent.id, url: agent.url, idempotency_key: idempotencyKey },
    });
  }

  /** On to the check, now, leased by us (a crash leaves it due). */
  private async proceed(row: OperationRow, lease: Lease, sync: SellerSyncState, event?: { kind: string; detail: Record<string, unknown> }): Promise<void> {
    const at = new Date(this.writer.now()).toISOString();
    const result = await this.writer.commit(row, lease, 'syncing', (current, s) => ({
      patch: { governance: json({ ...s, step: 'checking', seller_sync: { ...sync, at } }), stalled: 0, stalled_reason: null, ...leasedDueNow(this.writer, current, CHECK_STEP) },
      events: [
        {
          source: 'call',
          kind: event?.kind ?? (sync.status === 'skipped' ? 'governance_sync_skipped' : 'governance_sync_current'),
          from: current.status,
          to: current.status,
          detail: event?.detail ?? { ...(sync.reason ? { reason: sync.reason } : {}), ...(sync.idempotency_key ? { idempotency_key: sync.idempotency_key } : {}) },
        },
      ],
      value: true,
    }));
    if (result.outcome === 'applied' && result.value) await this.next(result.row);
  }

  /** The seller took the sync as a task: polled until it ends. */
  private async waitForTask(row: OperationRow, lease: Lease, taskId: string): Promise<void> {
    const { pollIntervalMs } = this.writer.deps.operations.options;
    const now = this.writer.now();
    await this.writer.commit(row, lease, 'syncing', (_current, s) => ({
      patch: {
        governance: json({ ...s, seller_sync: { ...(s.seller_sync ?? { status: 'pending' }), task_id: taskId } }),
        // A registration is quick (the spec says ~1 s): a steady poll, no growth.
        next_check_at: now + pollDelayMs(0, pollIntervalMs, this.writer.deps.clock.random),
        check_kind: SYNC_STEP,
        attempt: 0,
        ...released,
      },
      value: null,
    }));
  }

  /** No answer to use: the same registration again after the backoff; past the retry budget, stalled (people told) and tried on slower. */
  private async retryLater(row: OperationRow, lease: Lease, failure: CallFailure): Promise<void> {
    const { clock, operations, log } = this.writer.deps;
    const now = this.writer.now();
    const exhausted = row.attempt >= operations.options.maxAttempts;
    const slow = Math.min(60_000, operations.options.pollIntervalMs * STALLED_SLOWDOWN);
    const wait = exhausted ? slow + Math.round(slow * 0.2 * clock.random()) : retryDelayMs(row.attempt, failure.error.retryAfterSeconds, clock.random);
    log.warn({ operation_id: row.id, error: failure.error.code, retry_in_ms: wait }, 'sync_governance got no answer from the seller; will retry');
    await this.writer.commit(row, lease, 'syncing', (current, s) => {
      const lastError = { code: failure.error.code, ...(failure.error.message ? { message: failure.error.message } : {}) };
      const patch: OperationPatch = {
        governance: json({ ...s, seller_sync: { ...(s.seller_sync ?? { status: 'pending' }), last_error: lastError } }),
        next_check_at: now + wait,
        check_kind: SYNC_STEP,
        ...released,
      };
      const events: NewEvent[] = [{ source: 'call', kind: 'governance_sync_failed', from: current.status, to: current.status, detail: { error: failure.error, retry_in_ms: wait, attempt: current.attempt } }];
      if (exhausted) {
        patch.attempt = 0;
        if (!current.stalled) {
          patch.stalled = 1;
          patch.stalled_reason = `the seller gave no answer to sync_governance after ${current.attempt} attempts (${failure.error.code}); nothing is checked or sent until it registers the governance agent`;
          events.push({ source: 'timer', kind: 'stalled', from: current.status, to: current.status, detail: { reason: patch.stalled_reason } });
        }
      }
      return { patch, events, value: null };
    });
  }

  /** The registration cannot be made or was refused: the operation ends failed, nothing checked or sent. */
  private async fail(row: OperationRow, lease: Lease, error: Problem): Promise<void> {
    const now = this.writer.now();
    const result = await this.writer.commit(row, lease, 'syncing', (current, s) => ({
      patch: {
        status: 'failed',
        status_since: now,
        completed_at: now,
        next_check_at: null,
        check_kind: null,
        stalled: 0,
        stalled_reason: null,
        attempt: 0,
        ...released,
        governance: json({ ...s, step: 'ended', seller_sync: { ...(s.seller_sync ?? { status: 'pending' }), last_error: { code: error.code, message: error.message } } }),
        error: json({ ...error, details: { ...(error.details ?? {}), step: 'sync_governance', seller_agent_id: current.agent_id, governance_agent_id: s.agent_id } }),
      },
      events: [{ source: 'call', kind: 'transition', from: current.status, to: 'failed', detail: { error, step: 'sync_governance' } }],
      value: true,
    }));
    if (result.outcome === 'applied' && result.value) this.writer.deps.metrics.transition(row.type, row.status, 'failed', 'call');
  }
}

/** The seller refused the registration: why, in its words, and that nothing was spent. */
function refusal(seller: AgentRow, error: { code: string; message?: string; details?: unknown }): Problem {
  return {
    code: 'GOVERNANCE_SYNC_REFUSED',
    message: `${seller.name} refused to register the governance agent (sync_governance: ${error.code}${error.message ? `: ${error.message}` : ''}); nothing was checked or sent`,
    details: { seller_error: error },
  };
}
