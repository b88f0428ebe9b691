/**
 * Pulling the AdCP payload out of an A2A reply (a Task, a Message, or a stream
 * / push envelope around one), per a2a-response-extraction.json.
 *
 * A2A has two lifecycles in one reply: the transport Task's `status.state` (did
 * the call finish?) and the AdCP `status` inside the DataPart (is the work done?).
 * A completed A2A Task may carry AdCP `submitted`. This module reports both; the
 * classifier decides.
 */
import { isAdcpTaskStatus, type AdcpTaskStatus } from '../domain/status.js';
import { isJsonObject, nonEmptyString, type JsonObject } from './json.js';
import { payloadError, type WireAdcpError } from './extract-error.js';

export interface A2aExtraction {
  /** The transport Task's state as an AdCP status word, when the reply has one. */
  state?: AdcpTaskStatus;
  /** The AdCP payload: last DataPart of the first artifact, else of `status.message`. */
  data: JsonObject | null;
  /** Where `data` came from. */
  source: 'artifact' | 'status_message' | 'message' | 'none';
  /** The DataPart was a `{response: {...}}` wrapper, which the A2A profile forbids. */
  wrapperDetected: boolean;
  /** A2A Task id and context id: a continuation handle, not the AdCP task_id. */
  a2aTaskId?: string;
  a2aContextId?: string;
  /** AdCP task handle the SDK's server puts on `artifact.metadata.adcp_task_id`. */
  adcpTaskId?: string;
  /** Text parts joined, for a human-readable message. */
  text?: string;
}

/**
 * A2A 0.3 spells states `input-required`; A2A 1.0 `TASK_STATE_INPUT_REQUIRED`.
 * Both become the AdCP word; anything else (e.g. UNSPECIFIED) is `unknown`.
 */
export function normalizeA2aState(state: unknown): AdcpTaskStatus | undefined {
  if (typeof state !== 'string' || state === '') return undefined;
  let word = state.toLowerCase().replace(/^task_state_/, '').replace(/_/g, '-');
  if (word === 'cancelled') word = 'canceled';
  return isAdcpTaskStatus(word) ? word : 'unknown';
}

/** A DataPart: `kind: "data"` (A2A 0.3) or a part with a `data` member and no kind (A2A 1.0). */
function dataOf(part: unknown): JsonObject | undefined {
  if (!isJsonObject(part)) return undefined;
  const isData = part.kind === 'data' || (part.kind === undefined && 'data' in part);
  // Null, scalar and array data are skipped: an AdCP payload is an object.
  return isData && isJsonObject(part.data) ? part.data : undefined;
}

function lastDataPart(parts: unknown): JsonObject | undefined {
  if (!Array.isArray(parts)) return undefined;
  let found: JsonObject | undefined;
  for (const part of parts) found = dataOf(part) ?? found; // progress parts come first; the last one is the result
  return found;
}

function textOf(parts: unknown): string[] {
  if (!Array.isArray(parts)) return [];
  return parts.flatMap((p) =>
    isJsonObject(p) && (p.kind === 'text' || p.kind === undefined) && typeof p.text === 'string' ? [p.text] : [],
  );
}

/** Strip JSON-RPC and stream/push envelopes down to a Task, Message or status-update event. */
function unwrap(response: unknown): { body?: JsonObject; artifactOnly: boolean } {
  let body = isJsonObject(response) ? response : undefined;
  if (body && 'jsonrpc' in body && isJsonObject(body.result)) body = body.result;
  if (body && isJsonObject(body.task)) return { body: body.task, artifactOnly: false };
  if (body && isJsonObject(body.statusUpdate)) return { body: body.statusUpdate, artifactOnly: false };
  if (body && isJsonObject(body.message) && !isJsonObject(body.status)) return { body: body.message, artifactOnly: false };
  // An artifact-update event carries no task state, so there is nothing to classify.
  if (body && (isJsonObject(body.artifactUpdate) || body.kind === 'artifact-update')) return { artifactOnly: true };
  return { body, artifactOnly: false };
}

function isWrapper(data: JsonObject): boolean {
  const keys = Object.keys(data);
  return keys.length === 1 && keys[0] === 'response' && isJsonObject(data.response);
}

export function extractA2aReply(response: unknown): A2aExtraction {
  const { body } = unwrap(response);
  const none: A2aExtraction = { data: null, source: 'none', wrapperDetected: false };
  if (!body) return none;

  const status = isJsonObject(body.status) ? body.status : undefined;
  const statusMessage = status && isJsonObject(status.message) ? status.message : undefined;
  const artifacts = Array.isArray(body.artifacts) ? body.artifacts : [];
  const firstArtifact = isJsonObject(artifacts[0]) ? artifacts[0] : undefined;
  const isMessage = body.kind === 'message' || (!status && Array.isArray(body.parts));

  const out: A2aExtraction = { ...none };
  const state = normalizeA2aState(status?.state);
  if (state) out.state = state;
  const a2aTaskId = nonEmptyString(isMessage ? body.taskId : body.id ?? body.taskId);
  if (a2aTaskId) out.a2aTaskId = a2aTaskId;
  const a2aContextId = nonEmptyString(body.contextId);
  if (a2aContextId) out.a2aContextId = a2aContextId;
  const metadata = firstArtifact && isJsonObject(firstArtifact.metadata) ? firstArtifact.metadata : undefined;
  const adcpTaskId = nonEmptyString(metadata?.adcp_task_id);
  if (adcpTaskId) out.adcpTaskId = adcpTaskId;

  let data: JsonObject | undefined;
  if (isMessage) {
    data = lastDataPart(body.parts);
    if (data) out.source = 'message';
  } else {
    data = lastDataPart(firstArtifact?.parts);
    if (data) out.source = 'artifact';
    else {
      data = lastDataPart(statusMessage?.parts);
      if (data) out.source = 'status_message';
    }
  }
  const text = [
    ...textOf(isMessage ? body.parts : firstArtifact?.parts),
    ...textOf(statusMessage?.parts),
  ].join('\n');
  if (text.trim() !== '') out.text = text.trim();

  if (data && isWrapper(data)) {
    out.wrapperDetected = true;
    return out;
  }
  if (data) out.data = data;
  return out;
}

/** The AdCP error an A2A reply carries in its DataPart (artifact or status message). */
export function a2aError(response: unknown): WireAdcpError | undefined {
  const { data } = extractA2aReply(response);
  return payloadError(data ?? undefined);
}
