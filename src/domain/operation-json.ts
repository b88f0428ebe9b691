/**
 * The JSON of an operation and of one of its events (README.md, Using it), as the API
 * answers it and as notifications carry it. Pure, so the store can build a
 * notification body in the transaction that writes the change, and the API
 * shows exactly the same thing. Secrets never pass through here: every
 * credential field of the request and the webhook URL's token are redacted
 * (credential-fields.ts), and the sealed secret column is never read.
 *
 * The shapes below are the columns read, spelled out so this module depends on
 * nothing outside the domain (the store's rows satisfy them).
 */
import { presentGovernance, type GovernedState } from './governed-flow.js';
import { redactedRequest } from './credential-fields.js';

export interface OperationJsonSource {
  id: string;
  type: string;
  agent_id: string;
  status: string;
  task_id: string | null;
  context_id: string | null;
  idempotency_key: string;
  request_body: string;
  result: string | null;
  error: string | null;
  needs_input: number;
  input_message: string | null;
  /** JSON of what a person is asked (src/domain/input-request.ts), while needs_input. */
  input_request?: string | null;
  stalled: number;
  stalled_reason: string | null;
  webhook_mode: string;
  /** Hidden wherever it appears in the request (the webhook URL). */
  webhook_token?: string | null;
  /** The reporting webhook URL's token of a create_media_buy, hidden likewise. */
  reporting_token?: string | null;
  deadline_at: number | null;
  next_check_at: number | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  parent_id: string | null;
  /** JSON of a governed operation's flow (src/domain/governed-flow.ts); null or absent when ungoverned. */
  governance?: string | null;
}

export interface EventJsonSource {
  id: number;
  at: number;
  source: string;
  kind: string;
  from_status: string | null;
  to_status: string | null;
  detail: string | null;
  /** The key name of the person who caused it; null when no person did. */
  actor: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const json = (text: string | null) => (text === null ? null : JSON.parse(text));

/**
 * Where a bounded copy of an operation is shown (notification bodies: SSE, subscriptions),
 * a JSON field whose stored text is larger than this many bytes is replaced by an
 * omission marker: `{"$omitted": {"bytes": N, "href": "/v1/operations/<id>"}}`. 16 KiB
 * keeps every ordinary request, result and error as it is, and a notification of a
 * many-megabyte reply small: the reply is stored once, on the operation, and read there.
 */
export const SUMMARY_FIELD_MAX_BYTES = 16 * 1024;

export interface Omitted {
  $omitted: { bytes: number; href: string };
}

/** The size of `text` in UTF-8 when it is over `max` bytes, else undefined (no scan for short text). */
function bytesOver(text: string, max: number): number | undefined {
  // UTF-8 takes at most three bytes per UTF-16 unit.
  if (text.length * 3 <= max) return undefined;
  const bytes = Buffer.byteLength(text, 'utf8');
  return bytes > max ? bytes : undefined;
}

export function omitted(operationId: string, bytes: number): Omitted {
  return { $omitted: { bytes, href: `/v1/operations/${encodeURIComponent(operationId)}` } };
}

export function isOmitted(value: unknown): value is Omitted {
  return typeof value === 'object' && value !== null && '$omitted' in value;
}


/** An event's JSON; with `bounded` (operation id and byte limit), a larger `detail` is an omission marker. */
export function presentEvent(e: EventJsonSource, bounded?: { operationId: string; maxFieldBytes: number }) {
  const over = bounded && e.detail !== null ? bytesOver(e.detail, bounded.maxFieldBytes) : undefined;
  return {
    id: e.id,
    at: iso(e.at),
    source: e.source,
    kind: e.kind,
    from: e.from_status,
    to: e.to_status,
    detail: over === undefined ? json(e.detail) : omitted(bounded!.operationId, over),
    actor: e.actor,
  };
}

/**
 * The operation JSON. With `maxFieldBytes` (a bounded copy, see SUMMARY_FIELD_MAX_BYTES),
 * `request`, `result`, `error`, `input_request` and `input_message` larger than that are
 * omission markers, never parsed.
 */
export function presentOperation(o: OperationJsonSource, events?: EventJsonSource[], opts: { maxFieldBytes?: number } = {}) {
  const max = opts.maxFieldBytes;
  const bounded = <T>(text: string | null, show: (text: string) => T): T | Omitted | null => {
    if (text === null) return null;
    const bytes = max === undefined ? undefined : bytesOver(text, max);
    return bytes === undefined ? show(text) : omitted(o.id, bytes);
  };
  return {
    id: o.id,
    type: o.type,
    agent_id: o.agent_id,
    status: o.status,
    task_id: o.task_id,
    context_id: o.context_id,
    idempotency_key: o.idempotency_key,
    // As sent, minus every credential and the webhook URL's token.
    request: bounded(o.request_body, (text) => redactedRequest(text, o.webhook_token ?? null, o.reporting_token)),
    result: bounded(o.result, json),
    error: bounded(o.error, json),
    needs_input: o.needs_input === 1,
    input_message: bounded(o.input_message, (text) => text),
    // What a person is asked and may answer (docs/ARCHITECTURE.md, People in the loop); null unless needs_input.
    input_request: o.needs_input === 1 ? bounded(o.input_request ?? null, json) : null,
    stalled: o.stalled === 1,
    stalled_reason: o.stalled_reason,
    webhook: o.webhook_mode,
    deadline_at: iso(o.deadline_at),
    next_check_at: iso(o.next_check_at),
    created_at: iso(o.created_at),
    updated_at: iso(o.updated_at),
    completed_at: iso(o.completed_at),
    parent_id: o.parent_id,
    // Only on governed operations: the check and the outcome report (tokens never shown).
    ...(o.governance ? { governance: presentGovernance(JSON.parse(o.governance) as GovernedState) } : {}),
    ...(events ? { events: events.map((e) => presentEvent(e)) } : {}),
  };
}

export type OperationJson = ReturnType<typeof presentOperation>;
export type EventJson = ReturnType<typeof presentEvent>;
