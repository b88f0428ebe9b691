/**
 * The AdCP A2A profile v3 vectors (test/fixtures/adcp-vectors/a2a-profile-extension-v3.json)
 * and what the tests need to run them: the file, the page's rules for an Agent Card and for
 * a SendMessage response (a2a-profile-extension.mdx, "Advertisement and activation",
 * "Response mapping", "Submitted AdCP work"), and the step between the vectors' A2A 1.0
 * wire form and the A2A 0.3 JSON-RPC that our client and the sandbox speak.
 *
 * The invocation rules are not here: the sandbox's own (src/sandbox/a2a-profile.ts) are
 * run against every invocation vector (test/unit/sandbox/a2a-profile-vectors.test.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

type Json = Record<string, any>;

export interface ProfileVectors {
  version: string;
  extension_uri: string;
  a2a_protocol_version: string;
  advertisement_vectors: Array<{ id: string; valid: boolean; expected_error?: string; agent_card: Json }>;
  invocation_vectors: Array<{ id: string; valid: boolean; expected_error?: string; headers: Record<string, string>; message: Json }>;
  response_vectors: Array<{ id: string; valid: boolean; expected_error?: string; handler_return: string; response: Json; expected_adcp_task_id?: string }>;
}

const FILE = fileURLToPath(new URL('../fixtures/adcp-vectors/a2a-profile-extension-v3.json', import.meta.url));

export function loadProfileVectors(): ProfileVectors {
  return JSON.parse(readFileSync(FILE, 'utf8')) as ProfileVectors;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What is wrong with a card's declaration of the profile (the vectors' error names), or null. */
export function advertisementError(card: Json, uri: string): string | null {
  const declared = card.capabilities?.extensions;
  if (!Array.isArray(declared)) {
    return Array.isArray(card.extensions) && card.extensions.some((e: Json) => e?.uri === uri) ? 'extension_not_under_capabilities' : 'extension_not_advertised';
  }
  const ext = declared.find((e: Json) => e?.uri === uri);
  if (!ext) return 'extension_not_advertised';
  if (ext.required !== true) return 'extension_not_required';
  if (ext.params !== undefined && !(isObject(ext.params) && Object.keys(ext.params).length === 0)) return 'extension_params_not_empty';
  // Dispatch keys are AgentSkill.id, never name.
  if (!(card.skills ?? []).some((s: Json) => s?.id === 'get_adcp_capabilities')) return 'missing_get_adcp_capabilities_skill_id';
  return null;
}

/**
 * What is wrong with a non-streaming SendMessage response under the profile (the vectors'
 * error names), or null. `handlerReturn` is what the AdCP handler returned (`submitted`, ...).
 */
export function responseError(response: Json, handlerReturn: string, expectedTaskId?: string): string | null {
  if (!isObject(response) || Object.keys(response).length !== 1 || !isObject(response.task)) return 'invalid_send_message_response';
  const task = response.task;
  const artifacts: Json[] = Array.isArray(task.artifacts) ? task.artifacts : [];
  const parts: Json[] = artifacts[0]?.parts ?? [];
  const data = parts.filter((p) => isObject(p.data)).at(-1)?.data as Json | undefined;
  if (!data) return 'missing_adcp_datapart';
  // The AdCP handle appears once, in the DataPart.
  if (artifacts.some((a) => isObject(a.metadata) && 'adcp_task_id' in a.metadata)) return 'adcp_task_id_metadata_duplication';
  if (handlerReturn === 'submitted') {
    // A2A task state and AdCP task state are separate: the invocation itself completed.
    if (task.status?.state !== 'TASK_STATE_COMPLETED') return 'submitted_handler_return_not_a2a_completed';
    if (data.status !== 'submitted' || typeof data.task_id !== 'string') return 'invalid_submitted_datapart';
  }
  if (expectedTaskId !== undefined && data.task_id !== expectedTaskId) return 'wrong_adcp_task_id';
  return null;
}

/** An A2A 1.0 message (vector form) as A2A 0.3 JSON-RPC carries it: `kind` on message and parts, lower-case role. */
export function toA2a03Message(message: Json): Json {
  const part = (p: Json): Json => {
    if ('data' in p) return { kind: 'data', ...p };
    if ('text' in p) return { kind: 'text', ...p };
    const { url, mediaType, filename, ...rest } = p;
    return { kind: 'file', ...rest, file: { uri: url, ...(mediaType && { mimeType: mediaType }), ...(filename && { name: filename }) } };
  };
  const { role, parts, ...rest } = message;
  return { kind: 'message', ...rest, role: role === 'ROLE_USER' ? 'user' : role === 'ROLE_AGENT' ? 'agent' : role, parts: (parts as Json[]).map(part) };
}

/** An A2A 0.3 message as the vectors write it (A2A 1.0): no `kind`, ProtoJSON role. */
export function toA2a10Message(message: Json): Json {
  const { kind: _k, role, parts, ...rest } = message;
  return { ...rest, role: role === 'user' ? 'ROLE_USER' : role === 'agent' ? 'ROLE_AGENT' : role, parts: (parts as Json[]).map(({ kind: _pk, ...p }) => p) };
}

/** An A2A 0.3 `message/send` result (the bare Task) as A2A 1.0's SendMessageResponse task branch. */
export function toA2a10Response(task: Json): Json {
  const state = String(task.status?.state ?? '');
  const parts = (ps: unknown) => (Array.isArray(ps) ? ps.map(({ kind: _k, ...p }: Json) => p) : ps);
  const { kind: _k, artifacts, status, ...rest } = task;
  return {
    task: {
      ...rest,
      status: { ...status, state: `TASK_STATE_${state.replace(/-/g, '_').toUpperCase()}` },
      ...(Array.isArray(artifacts) && { artifacts: artifacts.map((a: Json) => ({ ...a, parts: parts(a.parts) })) }),
    },
  };
}

/** The URIs an `A2A-Extensions` (or `X-A2A-Extensions`) value activates. */
export function extensionsIn(value: string | string[] | undefined): string[] {
  const lines = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return lines.flatMap((l) => l.split(',')).map((u) => u.trim()).filter((u) => u !== '');
}
