/**
 * createAdcpClient(): the AdcpClient the rest of the orchestrator uses.
 *
 * Every call runs under one deadline (AbortSignal), in a call scope
 * (call-scope.ts) that ties each of its HTTP requests to that deadline and caps
 * the size of each reply; whatever keeps us from an AdCP reply becomes an
 * AdcpTransportError (see transport-error.ts), and every reply is classified from
 * its raw payload (see classify.ts).
 */
import { setImmediate } from 'node:timers/promises';
import { A2aTransport } from './a2a-transport.js';
import { endCallScope, runInCallScope, type CallScope } from './call-scope.js';
import { DEFAULT_MAX_REPLY_BYTES, type ReplyTooLargeError } from './reply-limit.js';
import type { HttpFailure } from './http-failure.js';
import { McpTransport } from './mcp-transport.js';
import { listPageFromPayload, taskReplyFromPoll } from './poll.js';
import { protocolPayload, taskReplyFromRaw, type RawReply } from './raw-reply.js';
import { DIALECT_3_0, withVersionPin, type AgentDialect } from './dialect.js';
import { requestInvalidError } from './request-schema.js';
import { scrubbingClient } from './scrub-secrets.js';
import { withSellerSigning, type OutboundSigner } from './signing-fetch.js';
import { toTransportError } from './transport-error.js';
import { AdcpTransportError, type AdcpClient, type AgentEndpoint, type CallOptions, type ListTasksPage, type TaskReply } from './types.js';

export interface AdcpClientOptions {
  /**
   * Deadline for a task call without `timeoutMs`. Generous because a seller may
   * hold the connection while `working` (up to ~5 min, AdCP spec, polling, timeouts, retries, reconciliation).
   */
  callTimeoutMs?: number;
  /** Deadline for polls and lists without `timeoutMs`. */
  pollTimeoutMs?: number;
  /** MCP polls through the lean path (mcp-lean-poll.ts), the SDK client as fallback. Default true. */
  leanPolls?: boolean;
  /** The largest reply body read (reply-limit.ts); a larger one ends the call `reply_too_large`. */
  maxReplyBytes?: number;
  /** Our request signer (signing-fetch.ts): requests a seller's declaration calls for are signed with its key. */
  signer?: OutboundSigner;
}

type Step<T> = (signal: AbortSignal, timeoutMs: number, onHttpFailure: (f: HttpFailure) => void, replyBytes: () => number) => Promise<T>;

/** Replies larger than this are taken in steps (withJsonText). */
const LARGE_REPLY_BYTES = 256 * 1024;

/**
 * A large reply's `data` serialised once, here, for storing, in a task of the event loop
 * of its own: the task that parsed the reply ends first, and the next step (scrubbing,
 * then the write) starts in another. So no one task makes more than one pass over a
 * reply of megabytes, and calls to other agents keep being served in between.
 */
async function withJsonText(reply: TaskReply, replyBytes: number): Promise<TaskReply> {
  if (replyBytes <= LARGE_REPLY_BYTES) return reply;
  await setImmediate();
  reply.dataJson = JSON.stringify(reply.data);
  await setImmediate();
  return reply;
}

/**
 * Run `step` under a deadline, in a call scope (its HTTP requests end with it, its
 * replies are capped), and turn anything it throws into an AdcpTransportError. The
 * timer is set inside the scope, so what the abort sends runs there too (call-scope.ts).
 */
function withDeadline<T>(timeoutMs: number, maxReplyBytes: number, step: Step<T>): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  let tooLarge: ReplyTooLargeError | undefined;
  let http: HttpFailure | undefined;
  const scope: CallScope = {
    signal: controller.signal,
    maxReplyBytes,
    tooLarge: (err) => {
      tooLarge ??= err;
      controller.abort(err);
    },
    requests: new Set(),
    replyBytes: 0,
  };
  return runInCallScope(scope, async () => {
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`deadline of ${timeoutMs} ms passed`));
    }, timeoutMs);
    try {
      return await step(controller.signal, timeoutMs, (f) => (http = f), () => scope.replyBytes);
    } catch (err) {
      // A reply past the cap is why the call ended, whatever the transport made of the abort.
      throw toTransportError(tooLarge ?? err, { timedOut: timedOut && !tooLarge, timeoutMs, ...(http ? { http } : {}) });
    } finally {
      clearTimeout(timer);
      // Whatever is still open for this call (a reply stream the seller keeps open) is closed with it.
      endCallScope(scope, new Error('call ended'));
    }
  });
}

/** Nothing leaves us that the agent's schema refuses (request-schema.ts): refused here, unsent. */
function invalidRequest(task: string, params: Record<string, unknown>, dialect: AgentDialect): AdcpTransportError | null {
  const error = requestInvalidError(task, params, dialect.version);
  return error ? new AdcpTransportError(error.message!, 'request_invalid', undefined, error) : null;
}

/**
 * The task tool to call: the dialect's own (`get_task_status` at 3.1+, `tasks/get` at 3.0), else
 * the other version's name when only that one is listed; null when the agent lists its tools and
 * neither is among them: then it is never called (an agent without task tools, as some are).
 * An agent whose tools we could not list is called with the dialect's own.
 */
export function chooseTaskTool(preferred: string, other: string, listed: ReadonlySet<string> | null): string | null {
  if (!listed || listed.size === 0 || listed.has(preferred)) return preferred;
  return listed.has(other) ? other : null;
}

/** A task tool the agent does not offer: nothing was sent. */
function unsupportedTaskTool(what: string, names: string[]): AdcpTransportError {
  const message = `the agent offers no tool to ${what} (neither ${names.join(' nor ')})`;
  return new AdcpTransportError(message, 'unsupported', undefined, { code: 'UNSUPPORTED_FEATURE', message, recovery: 'terminal' });
}

type ListTasksQuery = Parameters<AdcpClient['listTasks']>[1];

/** The `tasks/get` (or `get_task_status`) arguments: the task, with its result when it has one. */
export function getTaskArgs(taskId: string): Record<string, unknown> {
  return { task_id: taskId, include_result: true };
}

/** The `tasks/list` (or `list_tasks`) arguments for a page of the seller's tasks (a page holds 1–100). */
export function listTasksArgs(query: ListTasksQuery): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (query.statuses && query.statuses.length > 0) body.filters = { statuses: query.statuses };
  const pagination: Record<string, unknown> = {};
  if (query.maxResults !== undefined) pagination.max_results = Math.min(100, Math.max(1, Math.floor(query.maxResults)));
  if (query.cursor !== undefined) pagination.cursor = query.cursor;
  if (Object.keys(pagination).length > 0) body.pagination = pagination;
  return body;
}

export function createAdcpClient(options: AdcpClientOptions = {}): AdcpClient {
  const callTimeoutMs = options.callTimeoutMs ?? 300_000;
  const pollTimeoutMs = options.pollTimeoutMs ?? 30_000;
  const maxReplyBytes = options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
  const mcp = new McpTransport({ leanPolls: options.leanPolls, maxReplyBytes, signer: options.signer });
  const a2a = new A2aTransport({ maxReplyBytes, signer: options.signer });

  async function send(
    agent: AgentEndpoint,
    task: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
    onHttpFailure: (f: HttpFailure) => void,
  ): Promise<RawReply> {
    // `params` go on the wire exactly as given: no version envelope, no
    // idempotency_key, no push_notification_config added (the SDK's
    // ProtocolClient.callTool would add `adcp_major_version`).
    if (agent.protocol === 'mcp') {
      return { protocol: 'mcp', result: await mcp.callTool(agent, task, params, signal, timeoutMs, onHttpFailure) };
    }
    return { protocol: 'a2a', result: await a2a.send(agent, task, params, signal) };
  }

  /** Tools the agent advertises; null when they could not be listed (then nothing is ruled out). */
  async function advertised(agent: AgentEndpoint, signal: AbortSignal): Promise<Set<string> | null> {
    try {
      return agent.protocol === 'mcp' ? await mcp.toolNames(agent, signal) : await a2a.skills(agent, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      return null;
    }
  }

  // Whatever an agent answers is cleaned of the secrets we sent it (see scrub-secrets.ts);
  // every call runs with its agent's signing declaration in scope (signing-fetch.ts).
  return scrubbingClient(inSellerScope({
    callTask(agent, task, params, opts?: CallOptions): Promise<TaskReply> {
      const dialect = agent.dialect ?? DIALECT_3_0;
      // The version pin the agent's dialect calls for (a stored request already carries it).
      const pinned = withVersionPin(params, dialect);
      const refusal = opts?.requestChecked ? null : invalidRequest(task, pinned, dialect);
      if (refusal) return Promise.reject(refusal);
      return withDeadline(opts?.timeoutMs ?? callTimeoutMs, maxReplyBytes, async (signal, ms, onHttp, bytes) =>
        withJsonText(taskReplyFromRaw(await send(agent, task, pinned, signal, ms, onHttp)), bytes()),
      );
    },

    continueTask(agent, continuation, task, params, opts?: CallOptions): Promise<TaskReply> {
      const dialect = agent.dialect ?? DIALECT_3_0;
      const pinned = withVersionPin(params, dialect);
      const refusal = opts?.requestChecked ? null : invalidRequest(task, pinned, dialect);
      if (refusal) return Promise.reject(refusal);
      return withDeadline(opts?.timeoutMs ?? callTimeoutMs, maxReplyBytes, async (signal, _ms, _onHttp, bytes) => {
        if (agent.protocol !== 'a2a') throw new AdcpTransportError(`${agent.protocol} has no task continuation`, 'protocol');
        return withJsonText(taskReplyFromRaw({ protocol: 'a2a', result: await a2a.send(agent, task, pinned, signal, continuation) }), bytes());
      });
    },

    getTask(agent, taskId, opts?: CallOptions): Promise<TaskReply> {
      return withDeadline(opts?.timeoutMs ?? pollTimeoutMs, maxReplyBytes, async (signal, ms, onHttp, bytes) => {
        const dialect = agent.dialect ?? DIALECT_3_0;
        const other = dialect.pollTool === 'get_task_status' ? 'tasks/get' : 'get_task_status';
        const tool = chooseTaskTool(dialect.pollTool, other, await advertised(agent, signal));
        if (!tool) throw unsupportedTaskTool('poll a task', [dialect.pollTool, other]);
        const args = withVersionPin(getTaskArgs(taskId), dialect);
        const raw: RawReply =
          agent.protocol === 'mcp'
            ? { protocol: 'mcp', result: await mcp.pollTool(agent, tool, args, signal, ms, onHttp) }
            : await send(agent, tool, args, signal, ms, onHttp);
        return withJsonText(taskReplyFromPoll(tool, protocolPayload(raw, tool), taskId), bytes());
      });
    },

    listTasks(agent, query, opts?: CallOptions): Promise<ListTasksPage> {
      return withDeadline(opts?.timeoutMs ?? pollTimeoutMs, maxReplyBytes, async (signal, ms, onHttp) => {
        const dialect = agent.dialect ?? DIALECT_3_0;
        const other = dialect.listTool === 'list_tasks' ? 'tasks/list' : 'list_tasks';
        const tool = chooseTaskTool(dialect.listTool, other, await advertised(agent, signal));
        if (!tool) throw unsupportedTaskTool('list tasks', [dialect.listTool, other]);
        const raw = await send(agent, tool, withVersionPin(listTasksArgs(query), dialect), signal, ms, onHttp);
        return listPageFromPayload(tool, protocolPayload(raw, tool));
      });
    },

    async close(): Promise<void> {
      await Promise.all([mcp.close(), a2a.close()]);
    },
  }));
}

/** Each call of `client` run with its agent's request-signing declaration in scope, so the transports' fetch signs what it asks for. */
function inSellerScope(client: AdcpClient): AdcpClient {
  return {
    callTask: (agent, ...rest) => withSellerSigning(agent.signing, () => client.callTask(agent, ...rest)),
    continueTask: (agent, ...rest) => withSellerSigning(agent.signing, () => client.continueTask(agent, ...rest)),
    getTask: (agent, ...rest) => withSellerSigning(agent.signing, () => client.getTask(agent, ...rest)),
    listTasks: (agent, ...rest) => withSellerSigning(agent.signing, () => client.listTasks(agent, ...rest)),
    close: () => client.close(),
  };
}
