/**
 * A2A transport for the sandbox: `message/send` with a `{skill, input}` DataPart,
 * `tasks/get` and `tasks/cancel` for the A2A task, and the agent card, built on
 * the A2A library's request handler with our own executor.
 *
 * Why our own executor rather than the AdCP SDK's A2A adapter: the adapter ends
 * every A2A task (completed or failed) when the tool returns, so a seller built on
 * it cannot keep a task open for `input-required`. Here a tool reply of
 * `input-required` or `auth-required` leaves the A2A task in that state, and a
 * follow-up message on the same taskId + contextId (AdCP spec, task status: a new
 * messageId, the full valid input of the same skill) is taken as the answer
 * (continuations.ts). Everything else is answered as the adapter does: the AdCP
 * reply as a DataPart artifact, `completed` (even for AdCP `submitted`, with
 * `adcp_task_id` on the artifact metadata) or `failed`.
 *
 * Before a follow-up reaches the executor it is checked: the contextId must be
 * the task's, the task must still wait; a messageId already on the task is the
 * same message again (a buyer's resend after an ambiguous send) and is answered
 * with the task as it stands, never taken twice. `sandbox_respond` remains an
 * out-of-band channel of its own (over MCP it is the only one).
 *
 * With `requireProfile` the seller requires the AdCP A2A profile v3 (a2a-profile.ts):
 * declared `required` on the card, every request refused unless it activates it, and a
 * submitted task's handle only in its DataPart (the profile forbids the metadata copy).
 *
 * Express is not a direct dependency of this project, but the MCP and A2A SDKs
 * depend on it, so it is always installed; it is loaded dynamically and typed
 * minimally here to keep that coupling in one place.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentCard, Message, MessageSendParams, Task, TaskState } from '@a2a-js/sdk';
import {
  A2AError,
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import type { AdcpServer } from '@adcp/sdk/server';
import { parseErrorAsJsonRpc, REQUIRED_PROFILE, requireProfile } from './a2a-profile.js';
import { SURFACE_3_0, onWire, type SellerSurface } from './adcp-server.js';
import { continueTask, refusalFor } from './continuations.js';
import { servedVersion, taskToolNames } from './versions.js';
import { ok } from './wire.js';
import type { SellerCore } from './core.js';
import { runWithBearer } from './request-span.js';
import { isPlainObject } from './wire.js';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

interface ExpressApp extends NodeHandler {
  use(path: string, ...handlers: unknown[]): unknown;
}

interface ExpressModule {
  (): ExpressApp;
  json(): unknown;
}

/**
 * Skills advertised on the agent card. get_adcp_capabilities is listed so that
 * the SDK's buyer client takes the agent for an AdCP v3 seller (without it, it
 * rewrites requests into the 2.5 shape).
 */
const SKILLS: Array<[string, string]> = [
  ['get_adcp_capabilities', 'AdCP capabilities of this seller.'],
  ['get_products', 'The sandbox catalogue; each product id selects a create_media_buy behaviour.'],
  ['create_media_buy', 'Create a media buy; behaviour chosen by packages[0].product_id. input-required keeps the A2A task open for the answer.'],
  ['update_media_buy', 'Cancel, pause or resume a media buy this seller created, or replace its reporting_webhook.'],
  ['get_media_buys', 'Media buys this seller created: status, revision, valid actions, packages, history.'],
  ['get_media_buy_delivery', 'Delivery of media buys (lifetime or a date range) with aggregated totals.'],
  ['tasks/get', 'Poll a task by AdCP task_id.'],
  ['tasks_get', 'Alias of tasks/get.'],
  ['get_task_status', 'Poll a task by AdCP task_id (the 3.1 name of tasks/get).'],
  ['tasks/list', 'List tasks with filters and cursor pagination.'],
  ['list_tasks', 'List tasks with filters and cursor pagination (the 3.1 name of tasks/list).'],
  ['sandbox_respond', 'Out-of-band answer to an input-required/auth-required task: {task_id, approve, message?, then?}.'],
];

const WAITING: ReadonlySet<string> = new Set(['input-required', 'auth-required']);

/** The caller as the A2A library hands it to the executor: who, and the bearer token the request carried. */
interface Caller {
  readonly isAuthenticated: boolean;
  readonly userName: string;
  readonly bearer?: string;
}

/** A2A task id → the AdCP task that waited on it (a sandbox holds few; never pruned). */
type OpenTasks = Map<string, { adcpTaskId: string; skill: string }>;

export interface A2aOptions {
  submittedDelayMs: number;
  /** Require the AdCP A2A profile v3 on every request (see the module comment). */
  requireProfile?: boolean;
  /** The version the seller speaks and the task tools it serves (the card lists only those). Default 3.0. */
  surface?: SellerSurface;
}

export async function createA2AHandler(adcp: AdcpServer, core: SellerCore, a2aUrl: string, opts: A2aOptions): Promise<NodeHandler> {
  const moduleName = 'express';
  const mod = (await import(moduleName)) as { default: ExpressModule };
  const app = mod.default();
  const surface = opts.surface ?? SURFACE_3_0;
  const tasks = taskToolNames(surface.version, surface.legacyTaskTools);
  const served = new Set(['get_adcp_capabilities', 'get_products', 'create_media_buy', 'update_media_buy', 'get_media_buys', 'get_media_buy_delivery', 'sandbox_respond', ...tasks.poll, ...tasks.list]);
  const card: AgentCard = {
    name: surface.version === '3.0' ? 'AdCP sandbox seller' : `AdCP sandbox seller (${surface.version})`,
    description: 'Sandbox seller for testing buyers: create_media_buy behaviour is selected by the product id (see get_products).',
    url: a2aUrl,
    version: '1.0.0',
    protocolVersion: '0.3.0',
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    capabilities: { streaming: false, pushNotifications: false, ...(opts.requireProfile && { extensions: [REQUIRED_PROFILE] }) },
    skills: SKILLS.filter(([id]) => served.has(id)).map(([id, description]) => ({ id, name: id, description, tags: ['adcp'] })),
  };
  const store = new InMemoryTaskStore();
  const open: OpenTasks = new Map();
  const executor = new SellerExecutor(adcp, core, open, opts);
  const handler = new ContinuationCheckingHandler(card, store, executor, core, open);
  const userBuilder = async (req: { headers: Record<string, string | string[] | undefined> }): Promise<Caller> => {
    const header = req.headers.authorization;
    const m = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header) : null;
    return m ? { isAuthenticated: true, userName: 'bearer', bearer: m[1]!.trim() } : { isAuthenticated: false, userName: 'anonymous' };
  };
  const cardHandler = agentCardHandler({ agentCardProvider: handler });
  app.use('/a2a/.well-known/agent-card.json', cardHandler);
  app.use('/.well-known/agent-card.json', cardHandler);
  if (opts.requireProfile) app.use('/a2a', mod.default.json(), requireProfile, parseErrorAsJsonRpc);
  app.use('/a2a', jsonRpcHandler({ requestHandler: handler, userBuilder: userBuilder as never }));
  return app;
}

/** Checks a follow-up message before the library hands it to the executor (see the module comment). */
class ContinuationCheckingHandler extends DefaultRequestHandler {
  constructor(
    card: AgentCard,
    private readonly tasks: InMemoryTaskStore,
    executor: AgentExecutor,
    private readonly core: SellerCore,
    private readonly open: OpenTasks,
  ) {
    super(card, tasks, executor, new DefaultExecutionEventBusManager());
  }

  override async sendMessage(params: MessageSendParams, context?: ServerCallContext): Promise<Message | Task> {
    const message = params.message;
    if (message.taskId) {
      const task = await this.tasks.load(message.taskId);
      if (!task) throw A2AError.taskNotFound(message.taskId);
      if (message.contextId !== task.contextId) throw A2AError.invalidParams("a follow-up must carry the task's own contextId");
      if (task.history?.some((m) => m.messageId === message.messageId)) {
        const waiting = this.open.get(task.id);
        if (waiting) this.core.stats.continuation({ a2a_task_id: task.id, task_id: waiting.adcpTaskId, message_id: message.messageId, outcome: 'duplicate' });
        return task;
      }
      const waiting = this.open.get(task.id);
      const refusal = waiting ? refusalFor(this.core, waiting.adcpTaskId) : 'this task does not wait for input';
      if (refusal) {
        this.core.stats.continuation({ a2a_task_id: task.id, task_id: waiting?.adcpTaskId ?? '', message_id: message.messageId, outcome: 'refused' });
        throw A2AError.invalidRequest(refusal);
      }
    }
    return super.sendMessage(params, context);
  }
}

class SellerExecutor implements AgentExecutor {
  constructor(
    private readonly adcp: AdcpServer,
    private readonly core: SellerCore,
    private readonly open: OpenTasks,
    private readonly opts: A2aOptions,
  ) {}

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = ctx;
    const bearer = (ctx.context?.user as Caller | undefined)?.bearer;
    try {
      if (!ctx.task) bus.publish({ kind: 'task', id: taskId, contextId, status: { state: 'working', timestamp: now() }, history: [userMessage] });
      const invocation = invocationOf(userMessage);
      if (typeof invocation === 'string') {
        // A malformed answer leaves an open task waiting (asked again); a malformed first message fails its call.
        const waiting = ctx.task ? this.open.get(taskId) : undefined;
        if (waiting && ctx.task) {
          const state = ctx.task.status.state;
          this.ask(bus, taskId, contextId, state, { status: state, task_id: waiting.adcpTaskId, message: `Sandbox: ${invocation}` });
        } else {
          this.finish(bus, taskId, contextId, 'failed', { reason: 'INVALID_INVOCATION', message: invocation });
        }
        return;
      }
      await runWithBearer(bearer, () => (ctx.task ? this.answer(ctx, bus, invocation) : this.invoke(ctx, bus, invocation)));
    } finally {
      bus.finished();
    }
  }

  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    bus.publish({ kind: 'status-update', taskId, contextId: '', status: { state: 'canceled', timestamp: now() }, final: true });
  }

  private async invoke(ctx: RequestContext, bus: ExecutionEventBus, { skill, input }: Invocation): Promise<void> {
    const { taskId, contextId } = ctx;
    const response = await this.adcp.invoke({ toolName: skill, args: input });
    const body = (response.structuredContent ?? {}) as Record<string, unknown>;
    if (response.isError !== true && WAITING.has(String(body.status)) && typeof body.task_id === 'string') {
      // The AdCP task waits for the buyer: so does the A2A task, for the answer on this taskId.
      this.open.set(taskId, { adcpTaskId: body.task_id, skill });
      this.ask(bus, taskId, contextId, body.status as TaskState, body);
      return;
    }
    const submitted = body.status === 'submitted' && typeof body.task_id === 'string';
    this.finish(bus, taskId, contextId, response.isError === true ? 'failed' : 'completed', body, submitted ? (body.task_id as string) : undefined);
  }

  /** A follow-up on an open task: the answer (already checked by the handler). */
  private async answer(ctx: RequestContext, bus: ExecutionEventBus, { skill, input }: Invocation): Promise<void> {
    const { taskId, contextId, userMessage } = ctx;
    const waiting = this.open.get(taskId)!;
    // Served in the version the answer pins, as every call is (versions.ts).
    const seller = (this.opts.surface ?? SURFACE_3_0).version;
    const served = servedVersion(input, seller);
    const version = typeof served === 'string' ? served : seller;
    const outcome = continueTask(this.core, waiting.adcpTaskId, skill, input, { ...this.opts, version });
    this.core.stats.continuation({
      a2a_task_id: taskId,
      task_id: waiting.adcpTaskId,
      message_id: userMessage.messageId,
      outcome: outcome.kind,
      ...(typeof input.idempotency_key === 'string' && { idempotency_key: input.idempotency_key }),
    });
    const payload = onWire(version, skill, ok(outcome.payload)).structuredContent;
    if (outcome.kind === 'asked_again') {
      this.ask(bus, taskId, contextId, payload.status as TaskState, payload);
      return;
    }
    // Kept: a later message on this task is refused (or, the same one again, recorded) by what its AdCP task says.
    this.finish(bus, taskId, contextId, 'completed', payload, outcome.kind === 'submitted' ? waiting.adcpTaskId : undefined);
  }

  /** Leaves the A2A task waiting, the question in its status message. */
  private ask(bus: ExecutionEventBus, taskId: string, contextId: string, state: TaskState, body: Record<string, unknown>): void {
    const message: Message = { kind: 'message', role: 'agent', messageId: randomUUID(), taskId, contextId, parts: [{ kind: 'data', data: body }] };
    bus.publish({ kind: 'status-update', taskId, contextId, status: { state, message, timestamp: now() }, final: true });
  }

  /** Ends the A2A call: the AdCP reply as the artifact, then the final state. */
  private finish(bus: ExecutionEventBus, taskId: string, contextId: string, state: 'completed' | 'failed', body: Record<string, unknown>, adcpTaskId?: string): void {
    bus.publish({
      kind: 'artifact-update',
      taskId,
      contextId,
      artifact: {
        artifactId: randomUUID(),
        name: state === 'failed' ? 'error' : adcpTaskId ? 'submitted' : 'result',
        parts: [{ kind: 'data', data: body }],
        ...(adcpTaskId && !this.opts.requireProfile && { metadata: { adcp_task_id: adcpTaskId } }),
      },
      append: false,
      lastChunk: true,
    });
    bus.publish({ kind: 'status-update', taskId, contextId, status: { state, timestamp: now() }, final: true });
  }
}

interface Invocation {
  skill: string;
  input: Record<string, unknown>;
}

/** The one DataPart `{skill, input}` of a message (text parts beside it are a person's note), or what is wrong. */
function invocationOf(message: Message): Invocation | string {
  const data = (message.parts ?? []).filter((p) => p.kind === 'data');
  if (data.length !== 1) return 'a message must carry exactly one DataPart {skill, input}';
  const payload = (data[0] as { data: unknown }).data;
  if (!isPlainObject(payload) || typeof payload.skill !== 'string' || payload.skill === '') return 'the DataPart must name a skill';
  const input = payload.input ?? payload.parameters ?? {};
  if (!isPlainObject(input)) return 'the DataPart input must be an object';
  return { skill: payload.skill, input };
}

const now = () => new Date().toISOString();
