/**
 * Turning one raw AdCP payload into a TaskReply (AdCP spec, task status).
 *
 * The status is read from the payload itself, never from the SDK's TaskExecutor
 * mapping (which turns `auth-required` into completed and `rejected`/`canceled`
 * into failed). Order:
 *   1. root `status` that is an AdCP task status → that status;
 *   2. the transport said the call failed (MCP `isError`, A2A failed/rejected/...)
 *      → the transport's word;
 *   3. `adcp_error`, or non-empty `errors[]` without `media_buy_id` (or a sync's
 *      `plans[]`) → `failed`;
 *   4. otherwise `completed`: this covers a 3.0 create_media_buy whose root
 *      `status` is a MediaBuyStatus (`pending_creatives`, `active`, ...).
 * A root `status` that is both words (MediaBuyStatus `completed`, `rejected`,
 * `canceled`) is read as the task status: same terminal meaning either way, with
 * one exception. `canceled` beside a `media_buy_id` and no error is the buy's
 * status in the reply of an update that canceled it (`canceled: true`): that task
 * completed, and reading it as a canceled task would say the cancel did not happen.
 * A task that is itself canceled names no buy at the root.
 */
import { isAdcpTaskStatus, type AdcpTaskStatus } from '../domain/status.js';
import { epochMs, isJsonObject, nonEmptyString, type JsonObject } from './json.js';
import { payloadError, toAdcpError, type WireAdcpError } from './extract-error.js';
import type { TaskReply } from './types.js';

export interface TransportView {
  /**
   * What the transport said about the call when it was not plain success:
   * `failed` for MCP isError; the A2A Task state when it is not `completed`.
   */
  transportStatus?: AdcpTaskStatus;
  /** An error the transport carried outside the payload (e.g. MCP text JSON). */
  transportError?: WireAdcpError;
  /** Fallbacks for envelope fields the payload lacks. */
  taskId?: string;
  contextId?: string;
  text?: string;
  a2a?: { taskId?: string; contextId?: string; state?: AdcpTaskStatus };
}

const FAILURE_WORDS: ReadonlySet<AdcpTaskStatus> = new Set(['failed', 'rejected', 'canceled']);

export function classifyStatus(payload: JsonObject, view: TransportView = {}): AdcpTaskStatus {
  const root = payload.status;
  const transport = view.transportStatus;
  const hasEnvelopeError = isJsonObject(payload.adcp_error);
  const hasErrors = Array.isArray(payload.errors) && payload.errors.length > 0;
  if (isAdcpTaskStatus(root) && !(root === 'canceled' && isCanceledBuy(payload, hasEnvelopeError || hasErrors))) {
    // A payload claiming success inside a failed call is not believed.
    if (root === 'completed' && transport && FAILURE_WORDS.has(transport)) return transport;
    return root;
  }
  if (transport && transport !== 'completed') return transport;
  // errors[] beside a media_buy_id are warnings on a buy that exists (3.0 partial success); beside
  // a sync_plans `plans[]` they are the per-plan errors of a sync that was processed.
  const processed = payload.media_buy_id !== undefined || Array.isArray(payload.plans);
  if (hasEnvelopeError || (hasErrors && !processed)) return 'failed';
  return 'completed';
}

/** A root `canceled` that is the buy's status: it names the buy and reports no error. */
function isCanceledBuy(payload: JsonObject, reportsError: boolean): boolean {
  return typeof payload.media_buy_id === 'string' && payload.media_buy_id !== '' && !reportsError;
}

export function classifyPayload(payload: JsonObject, view: TransportView = {}): TaskReply {
  const wireError = payloadError(payload) ?? view.transportError;
  const reply: TaskReply = { status: classifyStatus(payload, view), data: payload };
  const taskId = nonEmptyString(payload.task_id) ?? view.taskId;
  if (taskId) reply.taskId = taskId;
  const contextId = nonEmptyString(payload.context_id) ?? view.contextId;
  if (contextId) reply.contextId = contextId;
  const message = nonEmptyString(payload.message) ?? wireError?.message ?? view.text;
  if (message) reply.message = message;
  const timestamp = epochMs(payload.timestamp);
  if (timestamp !== undefined) reply.timestamp = timestamp;
  if (wireError) reply.error = toAdcpError(wireError);
  if (payload.replayed === true) reply.replayed = true;
  if (view.a2a && (view.a2a.taskId || view.a2a.contextId)) reply.a2a = view.a2a;
  return reply;
}
