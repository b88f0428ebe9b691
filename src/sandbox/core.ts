/**
 * The sandbox seller's brain, independent of any transport: the tool
 * implementations (create_media_buy, tasks/get, list_tasks, sandbox_respond;
 * the tasks on booked buys are answered from `live`, live-buys.ts), the
 * scripted async behaviours, and the hooks tests use to force things.
 * MCP and A2A both reach it through the AdcpServer built in adcp-server.ts.
 */
import {
  AUTH_REQUIRED_MESSAGE,
  buildMediaBuy,
  checkCreateRequest,
  INPUT_REQUIRED_MESSAGE,
  UNTRACKED_INPUT_MESSAGE,
  UNTRACKED_INPUT_REASON,
} from './behaviours.js';
import type { GovernanceGate } from './governance-gate.js';
import { IDEMPOTENCY_KEY_PATTERN, IdempotencyLedger, REPLAY_TTL_SECONDS, type ReplayDeclaration } from './idempotency.js';
import type { LiveBuys } from './live-buys.js';
import { getMediaBuyDeliveryReply, getMediaBuysReply } from './media-buy-reads.js';
import { wantsWindows, windowRefusal, withWindows } from './delivery-windows.js';
import { updateMediaBuy } from './update-media-buy.js';
import { listCreatives, queueAsTask, syncCreatives } from './creative-tools.js';
import type { DeliveryContent, Notifier } from './notifications.js';
import { findSandboxProduct, SANDBOX_FORMAT_IDS, type SandboxBehaviour } from './products.js';
import type { StatsRecorder } from './stats.js';
import { getTaskReply, listTasksReply, taskView } from './task-views.js';
import {
  isTerminalStatus,
  TaskRegistry,
  type PushNotificationConfig,
  type SandboxTask,
  type TaskError,
  type TaskStatus,
} from './tasks.js';
import { errorResult, isPlainObject, ok, withBody, type ToolResult } from './wire.js';
import { currentBearer } from './request-span.js';
import type { SellerVersion } from './versions.js';

export interface CoreOptions {
  submittedDelayMs: number;
  workingDelayMs: number;
  /** How many calls per idempotency_key the flaky products fail before succeeding. */
  flakyFailures: number;
  /**
   * sandbox_auth_required stops asking for credentials once a call carries this
   * bearer token (the buyer's credentials were refreshed). Unset: it always asks.
   */
  freshToken?: string;
  /** What the seller declares of replaying (and does): default a 24 h window. */
  replay?: ReplayDeclaration;
  /** The version the seller speaks: the tasks it makes behind the buyer's back speak it. Default 3.0. */
  adcpVersion?: SellerVersion;
}

/** What the HTTP layer should do to a create_media_buy call before MCP sees it. */
export type HttpFault = 'fail-500' | 'lost-reply' | 'hold-reply' | null;

export interface BehindBackTask {
  status?: TaskStatus;
  product_id?: string;
  idempotency_key?: string;
  push_notification_config?: PushNotificationConfig;
  context?: unknown;
  message?: string;
  /** For a non-terminal status: complete by itself after this many ms (default: never). */
  completeAfterMs?: number;
}

const TASK_TYPE = 'create_media_buy';

export class SellerCore {
  readonly tasks = new TaskRegistry();
  private readonly ledger: IdempotencyLedger;
  /** What its capabilities declare of replaying, as its ledger keeps it. */
  readonly replay: ReplayDeclaration;
  /** Failures already served per idempotency_key by the flaky products. */
  private readonly faultsServed = new Map<string, number>();

  constructor(
    private readonly opts: CoreOptions,
    private readonly notifier: Notifier,
    readonly stats: StatsRecorder,
    /** The buys this seller created, living their flights (live-buys.ts). */
    readonly live: LiveBuys,
    private readonly gate?: GovernanceGate,
  ) {
    this.replay = opts.replay ?? { supported: true, replay_ttl_seconds: REPLAY_TTL_SECONDS };
    this.ledger = new IdempotencyLedger(this.replay);
    // Every change after the initial reply is a webhook-worthy event.
    this.tasks.onTransition(({ task, to }) => this.notifier.notify(task, deliveryFor(task, to)));
  }

  // ─── create_media_buy ────────────────────────────────────────────────

  /** `version`: the one the call is served in; its tasks' webhooks speak it (versions.ts). */
  async createMediaBuy(args: Record<string, unknown>, principal: string, version: SellerVersion = '3.0'): Promise<ToolResult> {
    const key = args.idempotency_key;
    const echo = args.context !== undefined ? { context: args.context } : {};
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      return errorResult('INVALID_REQUEST', 'idempotency_key is required and must match ^[A-Za-z0-9_.:-]{16,255}$', {
        field: 'idempotency_key',
        extra: echo,
      });
    }
    this.stats.createCall(key);

    const accepted = checkCreateRequest(args);
    if ('code' in accepted) {
      return errorResult(accepted.code, accepted.message, { ...(accepted.field && { field: accepted.field }), extra: echo });
    }
    if (accepted.product.behaviour === 'flaky_429' && this.takeFault(key)) {
      return errorResult('RATE_LIMITED', 'sandbox: rate limited, retry after retry_after seconds', {
        retry_after: 1,
        extra: echo,
      });
    }

    const { outcome, result } = await this.ledger.run(principal, key, args, async () => {
      // A governed account's buy needs a valid governance_context; checked
      // only when the buy would execute, so a replay of a booked buy stays a replay.
      const admission = await this.gate?.admit(args);
      if (admission && 'refusal' in admission) return admission.refusal;
      const executed = await this.execute(accepted.product.behaviour, args, key, accepted.push, version);
      if (admission && !executed.isError) admission.consume();
      return executed;
    });
    if (outcome === 'replay') this.stats.replay(key);
    return result;
  }

  /** Runs once per idempotency key (the ledger guarantees it). */
  private async execute(
    behaviour: SandboxBehaviour,
    args: Record<string, unknown>,
    key: string,
    push: PushNotificationConfig | undefined,
    version: SellerVersion,
  ): Promise<ToolResult> {
    // Fresh credentials answer what sandbox_auth_required would otherwise ask for.
    if (behaviour === 'auth_required' && this.credentialIsFresh()) behaviour = 'instant';
    const echo = args.context !== undefined ? { context: args.context } : {};
    const newTask = (status: TaskStatus, message?: string): SandboxTask =>
      this.tasks.create({
        task_type: TASK_TYPE,
        status,
        ...(message !== undefined && { message }),
        ...(args.context !== undefined && { context: args.context }),
        ...(push && { push }),
        idempotency_key: key,
        request: args,
        ...(version !== '3.0' && { adcp_version: version }),
      });

    switch (behaviour) {
      case 'instant':
      case 'flaky_429':
      case 'flaky_500':
      case 'lost_reply':
      case 'held_reply': {
        const mediaBuy = buildMediaBuy(args);
        this.stats.mediaBuyCreated(key);
        this.live.record(args, mediaBuy);
        return ok({ ...mediaBuy, ...echo });
      }
      case 'submitted':
      case 'working': {
        const message =
          behaviour === 'submitted'
            ? 'Sandbox: queued for manual review; poll tasks/get or wait for the webhook.'
            : 'Sandbox: processing.';
        const task = newTask(behaviour, message);
        const delay = behaviour === 'submitted' ? this.opts.submittedDelayMs : this.opts.workingDelayMs;
        this.tasks.schedule(delay, () => this.completeWithMediaBuy(task.task_id));
        return ok({ status: behaviour, task_id: task.task_id, message, ...echo });
      }
      case 'input_required': {
        const task = newTask('input-required', INPUT_REQUIRED_MESSAGE);
        return ok({ status: 'input-required', task_id: task.task_id, message: INPUT_REQUIRED_MESSAGE, ...echo });
      }
      case 'input_required_untracked':
        // No task, so no task_id: the question lives only in this reply (and its replays).
        return ok({ status: 'input-required', reason: UNTRACKED_INPUT_REASON, message: UNTRACKED_INPUT_MESSAGE, ...echo });
      case 'auth_required': {
        const task = newTask('auth-required', AUTH_REQUIRED_MESSAGE);
        return ok({ status: 'auth-required', task_id: task.task_id, message: AUTH_REQUIRED_MESSAGE, ...echo });
      }
      case 'rejected': {
        const message = 'Sandbox: the seller declined this buy (inventory policy).';
        const task = newTask('rejected', message);
        // A terminal answer, not an error: cached like a success so a retry replays it.
        return ok({ status: 'rejected', task_id: task.task_id, message, ...echo });
      }
      case 'failed':
        return errorResult('BUDGET_TOO_LOW', 'Sandbox: budget is below the seller minimum for this product.', {
          recovery: 'correctable',
          field: 'packages[0].budget',
          extra: { status: 'failed', ...echo },
        });
    }
  }

  /** Whether the request being served carries the refreshed credential (see CoreOptions.freshToken). */
  credentialIsFresh(): boolean {
    return this.opts.freshToken !== undefined && currentBearer() === this.opts.freshToken;
  }

  /** Whether an auth-required task waits for a particular refreshed credential. */
  requiresFreshCredential(): boolean {
    return this.opts.freshToken !== undefined;
  }

  /** `update_media_buy`: cancel, pause/resume, reporting_webhook (src/sandbox/update-media-buy.ts). */
  updateMediaBuy(args: Record<string, unknown>, principal: string): Promise<ToolResult> {
    return updateMediaBuy(this.live, this.ledger, args, principal);
  }

  /** `get_media_buys`: the buys this seller created for the account (no pagination: a sandbox holds few). */
  getMediaBuys(args: Record<string, unknown>): ToolResult {
    return getMediaBuysReply(this.live.book, args, this.live.creatives);
  }

  /** `sync_creatives`: creatives into the library, assigned to the account's buys' packages, reviewed later (creative-tools.ts). */
  syncCreatives(args: Record<string, unknown>, principal: string, version: SellerVersion = '3.0'): Promise<ToolResult> {
    return syncCreatives(this.live.creatives, this.live.book, this.ledger, args, principal, {
      ...(this.live.opts.creativeAdvisoryStatus && { advisory: this.live.opts.creativeAdvisoryStatus }),
      // Queued: a task that syncs after submittedDelayMs, its result by webhook and tasks/get.
      queue: queueAsTask(this.tasks, this.opts.submittedDelayMs, version),
      formats: SANDBOX_FORMAT_IDS,
    });
  }

  /** `list_creatives`: the account's creatives and their review status. */
  listCreatives(args: Record<string, unknown>): ToolResult {
    return listCreatives(this.live.creatives, args);
  }

  /** `get_media_buy_delivery`: lifetime or date-range delivery of the account's buys (media-buy-reads.ts). */
  getMediaBuyDelivery(args: Record<string, unknown>, version: SellerVersion = '3.0'): ToolResult {
    if (version === '3.0') return getMediaBuyDeliveryReply(this.live.book, args);
    // 3.1: the same reply, with daily windows when asked for them (delivery-windows.ts).
    const refusal = windowRefusal(args);
    if (refusal) return refusal;
    const reply = getMediaBuyDeliveryReply(this.live.book, args);
    if (reply.isError === true || !wantsWindows(args)) return reply;
    const windowed = withWindows(this.live.book, reply.structuredContent, args);
    return 'refusal' in windowed ? windowed.refusal : withBody(reply, windowed.body);
  }

  /** The completion a scheduled or approved task reaches: a fresh media buy. */
  private completeWithMediaBuy(taskId: string, override?: Record<string, unknown>): SandboxTask | undefined {
    const task = this.tasks.get(taskId);
    if (!task || isTerminalStatus(task.status)) return undefined;
    const result = override ?? buildMediaBuy(task.request ?? {});
    const done = this.tasks.transition(taskId, 'completed', { result });
    if (done && !override) {
      this.stats.mediaBuyCreated(task.idempotency_key);
      this.live.record(task.request ?? {}, result, taskId);
    }
    return done;
  }

  /** Flaky products fail the first N calls per key; true means "fail this one". */
  private takeFault(key: string): boolean {
    const served = this.faultsServed.get(key) ?? 0;
    if (served >= this.opts.flakyFailures) return false;
    this.faultsServed.set(key, served + 1);
    return true;
  }

  /**
   * Decided at the HTTP layer, because these faults are about the transport:
   * `fail-500` answers 500 before anything runs; `lost-reply` runs the call
   * and then answers 500, an ambiguous send the buyer must resolve by
   * retrying with the same key; `hold-reply` runs the call and keeps its reply
   * back until released, a send in flight for as long as a test needs.
   */
  httpFaultFor(args: Record<string, unknown>): HttpFault {
    const key = args.idempotency_key;
    const packages = args.packages;
    if (typeof key !== 'string' || !Array.isArray(packages) || !isPlainObject(packages[0])) return null;
    const behaviour = findSandboxProduct(packages[0].product_id)?.behaviour;
    if (behaviour === 'flaky_500') {
      if (!this.takeFault(key)) return null;
      this.stats.createCall(key);
      return 'fail-500';
    }
    if (behaviour === 'lost_reply' || behaviour === 'held_reply') {
      const served = this.faultsServed.get(key) ?? 0;
      if (served >= 1) return null;
      this.faultsServed.set(key, 1);
      return behaviour === 'lost_reply' ? 'lost-reply' : 'hold-reply';
    }
    return null;
  }

  // ─── tasks/get, list_tasks ───────────────────────────────────────────

  getTask(args: Record<string, unknown>, tool: string, version: SellerVersion = '3.0'): ToolResult {
    return getTaskReply(this.tasks, args, (taskId) => this.stats.poll(taskId, tool), version);
  }

  listTasks(args: Record<string, unknown>): ToolResult {
    return listTasksReply(this.tasks, args);
  }

  // ─── sandbox_respond: answering input-required / auth-required ───────

  respond(args: Record<string, unknown>): ToolResult {
    const echo = args.context !== undefined ? { context: args.context } : {};
    const taskId = args.task_id;
    if (typeof taskId !== 'string') return errorResult('INVALID_REQUEST', 'task_id is required', { field: 'task_id' });
    if (typeof args.approve !== 'boolean') {
      return errorResult('INVALID_REQUEST', 'approve (boolean) is required', { field: 'approve', extra: echo });
    }
    const task = this.tasks.get(taskId);
    if (!task) return errorResult('REFERENCE_NOT_FOUND', 'no such task', { field: 'task_id', extra: echo });
    if (task.status !== 'input-required' && task.status !== 'auth-required') {
      return errorResult('INVALID_STATE', `task is ${task.status}; only input-required or auth-required tasks take an answer`, {
        field: 'task_id',
        extra: echo,
      });
    }
    const note = typeof args.message === 'string' ? args.message : undefined;
    if (!args.approve) {
      this.tasks.transition(taskId, 'rejected', { message: note ?? 'Sandbox: the buyer declined.' });
    } else if (args.then === 'submitted' || args.then === 'working') {
      // Approval that still needs back-office time: show the extra hop.
      const then = args.then;
      this.tasks.transition(taskId, then, { message: `Sandbox: approved${note ? ` (${note})` : ''}; finishing.` });
      const delay = then === 'submitted' ? this.opts.submittedDelayMs : this.opts.workingDelayMs;
      this.tasks.schedule(delay, () => this.completeWithMediaBuy(taskId));
    } else {
      this.completeWithMediaBuy(taskId);
    }
    return ok({ ...taskView(task, { includeResult: true, includeHistory: false }), ...echo });
  }

  // ─── hooks for tests ─────────────────────────────────────────────────

  /** Force a task to completed now (with `result`, or a freshly built media buy). */
  completeTask(taskId: string, result?: Record<string, unknown>): void {
    if (!this.tasks.get(taskId)) throw new Error(`unknown task ${taskId}`);
    this.completeWithMediaBuy(taskId, result);
  }

  /** Force any status change (terminal is absorbing: returns false if the task had ended). */
  setTaskStatus(taskId: string, status: TaskStatus, patch: { message?: string; result?: Record<string, unknown>; error?: TaskError } = {}): boolean {
    return this.tasks.transition(taskId, status, patch) !== undefined;
  }

  /**
   * A task the buyer never heard about (its reply was lost, or it was made
   * out of band): what list_tasks reconciliation must find.
   */
  createTaskBehindBuyersBack(opts: BehindBackTask = {}): string {
    const status = opts.status ?? 'submitted';
    const request: Record<string, unknown> = {
      packages: [{ product_id: opts.product_id ?? 'sandbox_submitted', budget: 1000 }],
    };
    const task = this.tasks.create({
      task_type: TASK_TYPE,
      status,
      ...(opts.message !== undefined && { message: opts.message }),
      ...(opts.context !== undefined && { context: opts.context }),
      ...(opts.push_notification_config && { push: opts.push_notification_config }),
      ...(opts.idempotency_key !== undefined && { idempotency_key: opts.idempotency_key }),
      request,
      ...(this.opts.adcpVersion !== undefined && this.opts.adcpVersion !== '3.0' && { adcp_version: this.opts.adcpVersion }),
      ...(status === 'completed' && { result: buildMediaBuy(request) }),
    });
    if (opts.completeAfterMs !== undefined && !isTerminalStatus(status)) {
      this.tasks.schedule(opts.completeAfterMs, () => this.completeWithMediaBuy(task.task_id));
    }
    return task.task_id;
  }

  /**
   * Send a webhook for a task outside the normal flow, e.g. a stale
   * `working` after `completed` (out of order). Each call is a new delivery
   * with its own idempotency_key.
   */
  sendWebhook(taskId: string, content: DeliveryContent): void {
    const task = this.tasks.get(taskId);
    if (!task) throw new Error(`unknown task ${taskId}`);
    if (!task.push) throw new Error(`task ${taskId} has no push_notification_config`);
    this.notifier.notify(task, content);
  }
}

function deliveryFor(task: SandboxTask, status: TaskStatus): DeliveryContent {
  const result =
    status === 'completed'
      ? task.result
      : status === 'failed' && task.error
        ? { errors: [task.error] }
        : undefined;
  return {
    status,
    timestamp: task.updated_at,
    ...(task.message !== undefined && { message: task.message }),
    ...(result !== undefined && { result }),
  };
}
