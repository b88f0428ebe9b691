/**
 * The narrow interface the rest of the orchestrator uses to talk AdCP.
 * Everything behind it (src/adcp/*) is the only code that imports @adcp/sdk.
 */
import type { AdcpTaskStatus } from '../domain/status.js';
import type { AgentDialect } from './dialect.js';
import type { SellerSigning } from './signing-policy.js';

export type AdcpProtocol = 'mcp' | 'a2a';
export type ErrorRecovery = 'transient' | 'correctable' | 'terminal';

export interface AgentEndpoint {
  /** Agent URL as registered (MCP endpoint, or A2A base URL / agent card URL). */
  url: string;
  protocol: AdcpProtocol;
  /** Bearer token for the agent, already decrypted. Never logged. */
  authToken?: string;
  /** The AdCP version we speak with it (dialect.ts); absent: 3.0, as to an agent that declared nothing. */
  dialect?: AgentDialect;
  /** What it declared of request signing (`request_signing`) and the wire profile: absent, nothing is signed (signing-policy.ts). */
  signing?: SellerSigning;
}

/** The AdCP error pulled out of a reply or a transport failure. */
export interface AdcpError {
  code: string;
  message?: string;
  recovery?: ErrorRecovery;
  /** Seconds, as the seller said it (already clamped to 1..3600). */
  retryAfterSeconds?: number;
  field?: string;
  /** Seller's hint on how to fix a correctable error (shown to people, never acted on). */
  suggestion?: string;
  details?: unknown;
}

/**
 * One reply from an agent, read from the raw payload (never from the SDK's mapped
 * status, which turns `auth-required` into completed and `rejected`/`canceled` into failed).
 */
export interface TaskReply {
  /** The AdCP task status the reply stands for (for a sync create_media_buy success, `completed`). */
  status: AdcpTaskStatus;
  taskId?: string;
  contextId?: string;
  message?: string;
  /** Seller's `timestamp` on the reply if any, epoch ms. */
  timestamp?: number;
  /** The AdCP response payload (the task's data, envelope fields included). */
  data: Record<string, unknown>;
  /**
   * `data` as JSON text, set for a large reply (see client.ts), so that storing it does
   * not serialise it again: each pass over a reply of megabytes is a long task of its own.
   */
  dataJson?: string;
  /** Present when the reply carries an AdCP error (errors[] / adcp_error / error). */
  error?: AdcpError;
  /** `replayed: true` from an idempotent replay. */
  replayed?: boolean;
  /**
   * A2A only: the transport Task's own ids. They are a continuation handle (for
   * resuming `input-required`), never the AdCP `task_id` (AdCP spec, roles, transports, identifiers).
   */
  a2a?: { taskId?: string; contextId?: string; state?: AdcpTaskStatus };
}

/** A follow-up on an open A2A task: its ids from the reply that asked, and this answer's message id. */
export interface ContinuationHandle {
  taskId: string;
  contextId: string;
  messageId: string;
  /** A person's note, sent as a text part beside the input. */
  text?: string;
}

export interface ListedTask {
  taskId: string;
  taskType: string;
  status: AdcpTaskStatus;
  createdAt?: string;
  updatedAt?: string;
  context?: unknown;
}

export interface ListTasksPage {
  tasks: ListedTask[];
  hasMore: boolean;
  cursor?: string;
}

export interface CallOptions {
  /** Abort the call after this many ms (the reply is then unknown: an ambiguous send). */
  timeoutMs?: number;
  /**
   * The caller checked the request against the agent's schema itself, or deliberately sends
   * it unchecked (a resend of bytes that may already have reached the seller): the call does
   * not check it again. Otherwise a request off the schema is refused here, unsent.
   */
  requestChecked?: boolean;
}

/**
 * Thrown when no AdCP reply was obtained: network failure, timeout, HTTP error,
 * or a JSON-RPC error before dispatch; or, kind `reply_too_large`, when the agent
 * answered past the cap on reply size and the reply was not read (the agent did
 * receive the request); or, kind `request_invalid`, when the request was refused
 * here, unsent, for failing the agent's schema (`adcpError` REQUEST_INVALID, with the
 * issues); or, kind `unsupported`, when the agent offers no tool for the call (a task
 * tool it does not list), unsent. `adcpError` is set when the transport carried one (e.g.
 * 429 with `retry_after`).
 */
export class AdcpTransportError extends Error {
  constructor(
    message: string,
    readonly kind: 'network' | 'timeout' | 'http' | 'rpc' | 'protocol' | 'reply_too_large' | 'request_invalid' | 'unsupported',
    readonly httpStatus?: number,
    readonly adcpError?: AdcpError,
    /** The JSON-RPC error code, for kind `rpc`. */
    readonly rpcCode?: number,
  ) {
    super(message);
    this.name = 'AdcpTransportError';
  }
}

export interface AdcpClient {
  /** Call any AdCP task; `params` are sent as given (idempotency_key etc. already inside). */
  callTask(agent: AgentEndpoint, task: string, params: Record<string, unknown>, opts?: CallOptions): Promise<TaskReply>;
  /**
   * Answer an open A2A task on its continuation: the full input of `task` again,
   * as a new message on the task's `taskId` + `contextId`. MCP has no continuation:
   * this rejects with a `protocol` AdcpTransportError there.
   */
  continueTask(agent: AgentEndpoint, continuation: ContinuationHandle, task: string, params: Record<string, unknown>, opts?: CallOptions): Promise<TaskReply>;
  /** Poll one task (`tasks/get`, or `get_task_status` where the seller offers it). */
  getTask(agent: AgentEndpoint, taskId: string, opts?: CallOptions): Promise<TaskReply>;
  /** One page of the seller's tasks (`list_tasks` / `tasks/list`). */
  listTasks(
    agent: AgentEndpoint,
    query: { statuses?: AdcpTaskStatus[]; cursor?: string; maxResults?: number },
    opts?: CallOptions,
  ): Promise<ListTasksPage>;
  /** Close cached connections. */
  close(): Promise<void>;
}
