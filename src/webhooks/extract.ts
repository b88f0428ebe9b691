/**
 * Pull the AdCP facts out of a webhook body, MCP-style or A2A-style
 * (`webhook-payload-extraction.json`):
 *  - MCP: the flat envelope; the AdCP data is `result`.
 *  - A2A: a native Task or TaskStatusUpdateEvent; the data is the DataPart of
 *    the artifacts (a finished Task) or of `status.message` (a status event).
 *
 * This is deliberately lenient (it reads what is there); the receiver's
 * acceptance rules for MCP envelopes live in envelope.ts, and readWebhookPayload
 * in read-payload.ts applies both.
 */
import type { AdcpError, ErrorRecovery } from '../adcp/types.js';
import { isAdcpTaskStatus, type AdcpTaskStatus } from '../domain/status.js';
import type { DeliveryClaims } from '../engine/webhook-ingest.js';

/**
 * Everything read from a body: what the engine needs to ingest it (DeliveryClaims, the one
 * declaration of those fields) plus what only the receiver and its tests look at.
 */
export interface WebhookPayload extends DeliveryClaims {
  format: 'mcp' | 'a2a';
  protocol?: string;
  /** Our `context`, echoed verbatim. */
  context?: unknown;
  notificationId?: string;
  token?: string;
  /** A2A only: the A2A Task id and contextId, transport handles (never AdCP ids). */
  a2aTaskId?: string;
  a2aContextId?: string;
}

export type ExtractResult =
  | { ok: true; payload: WebhookPayload }
  | { ok: false; code: 'webhook_payload_unrecognized'; message: string };

type Json = Record<string, unknown>;

export function extractWebhookPayload(body: unknown): ExtractResult {
  if (!isObject(body)) return unrecognized('Webhook body is not a JSON object.');
  return isA2aShape(body) ? extractA2a(body) : extractMcp(body);
}

/** A2A Tasks and status events carry `status` as an object with `state`. */
export function isA2aShape(body: Json): boolean {
  return isObject(body.status) && 'state' in body.status;
}

function extractMcp(body: Json): ExtractResult {
  const taskId = str(body.task_id);
  if (!taskId) return unrecognized('Webhook body has no task_id.');
  if (!isAdcpTaskStatus(body.status)) return unrecognized('Webhook body has no AdCP task status.');
  if (body.result !== undefined && body.result !== null && !isObject(body.result)) {
    return unrecognized('Webhook result must be an object.');
  }
  const data = isObject(body.result) ? body.result : null;
  return {
    ok: true,
    payload: compact({
      format: 'mcp',
      taskId,
      taskIdSource: 'adcp',
      status: body.status,
      timestamp: time(body.timestamp),
      idempotencyKey: str(body.idempotency_key),
      operationId: str(body.operation_id),
      taskType: str(body.task_type),
      protocol: str(body.protocol),
      contextId: str(body.context_id),
      message: str(body.message),
      data,
      error: errorFrom(data),
      context: body.context,
      notificationId: str(body.notification_id),
      token: str(body.token),
    }),
  };
}

function extractA2a(body: Json): ExtractResult {
  const status = body.status as Json;
  const state = a2aState(status.state);
  if (!state) return unrecognized(`A2A state ${JSON.stringify(status.state)} is not an AdCP task status.`);
  const a2aTaskId = str(body.taskId) ?? str(body.id);
  const statusMessage = isObject(status.message) ? status.message : undefined;
  // A finished Task's result is in its artifacts; a status event's in its message.
  const data = lastDataPart(artifactParts(body.artifacts)) ?? lastDataPart(parts(statusMessage)) ?? null;
  const adcpTaskId = str(data?.task_id);
  const taskId = adcpTaskId ?? a2aTaskId;
  if (!taskId) return unrecognized('A2A webhook body has no task id.');
  // AdCP over A2A v3: the A2A call may be `completed` while the AdCP work it
  // started is still pending; the DataPart's AdCP status then tells the truth.
  const inner = data?.status;
  const adcpStatus: AdcpTaskStatus =
    state === 'completed' && isAdcpTaskStatus(inner) && ['submitted', 'working', 'input-required', 'auth-required'].includes(inner)
      ? inner
      : state;
  const text = textOf(parts(statusMessage)) ?? textOf(artifactParts(body.artifacts));
  return {
    ok: true,
    payload: compact({
      format: 'a2a',
      taskId,
      taskIdSource: adcpTaskId ? 'adcp' : 'a2a',
      status: adcpStatus,
      timestamp: time(status.timestamp),
      idempotencyKey: str(data?.idempotency_key),
      operationId: str(data?.operation_id),
      taskType: str(data?.task_type),
      contextId: str(data?.context_id),
      message: str(data?.message) ?? text,
      data,
      error: errorFrom(data),
      context: data?.context,
      a2aTaskId,
      a2aContextId: str(body.contextId),
    }),
  };
}

/**
 * A2A task states are the AdCP ones in A2A 0.x (`input-required`); A2A 1.0's
 * JSON uses `TASK_STATE_INPUT_REQUIRED`. Accept both spellings.
 */
function a2aState(value: unknown): AdcpTaskStatus | undefined {
  if (typeof value !== 'string') return undefined;
  let s = value.replace(/^TASK_STATE_/, '').toLowerCase().replace(/_/g, '-');
  if (s === 'cancelled') s = 'canceled';
  return isAdcpTaskStatus(s) ? s : undefined;
}

function parts(message: Json | undefined): unknown[] {
  return message && Array.isArray(message.parts) ? message.parts : [];
}

function artifactParts(artifacts: unknown): unknown[] {
  if (!Array.isArray(artifacts)) return [];
  return artifacts.flatMap((a) => (isObject(a) && Array.isArray(a.parts) ? a.parts : []));
}

/** The last DataPart wins: later parts refine earlier ones in streamed artifacts. */
function lastDataPart(list: unknown[]): Json | undefined {
  for (let i = list.length - 1; i >= 0; i--) {
    const part = list[i];
    if (isObject(part) && (part.kind === 'data' || part.kind === undefined) && isObject(part.data)) return part.data;
  }
  return undefined;
}

function textOf(list: unknown[]): string | undefined {
  const texts = list.filter((p): p is Json => isObject(p) && typeof p.text === 'string').map((p) => p.text as string);
  return texts.length > 0 ? texts.join('\n') : undefined;
}

const RECOVERIES: ReadonlySet<string> = new Set(['transient', 'correctable', 'terminal']);

/** The AdCP error in a result: `adcp_error`, else the first of `errors[]`. */
export function errorFrom(data: Json | null | undefined): AdcpError | undefined {
  if (!data) return undefined;
  const candidate = isObject(data.adcp_error)
    ? data.adcp_error
    : Array.isArray(data.errors)
      ? data.errors.find((e): e is Json => isObject(e) && typeof e.code === 'string')
      : undefined;
  if (!candidate || typeof candidate.code !== 'string') return undefined;
  const error: AdcpError = { code: candidate.code };
  if (typeof candidate.message === 'string') error.message = candidate.message;
  if (typeof candidate.recovery === 'string' && RECOVERIES.has(candidate.recovery)) {
    error.recovery = candidate.recovery as ErrorRecovery;
  }
  if (typeof candidate.retry_after === 'number' && Number.isFinite(candidate.retry_after)) {
    // Seconds, 1..3600, rounded up: never retry earlier than asked (AdCP spec, polling, timeouts, retries, reconciliation).
    error.retryAfterSeconds = Math.min(3600, Math.max(1, Math.ceil(candidate.retry_after)));
  }
  if (typeof candidate.field === 'string') error.field = candidate.field;
  if (candidate.details !== undefined) error.details = candidate.details;
  return error;
}

function time(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Drop undefined members so results compare and serialise cleanly. */
function compact<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key];
  return value;
}

function unrecognized(message: string): ExtractResult {
  return { ok: false, code: 'webhook_payload_unrecognized', message };
}
