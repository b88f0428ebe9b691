/** Turns stored rows into the JSON of DESIGN.md §5. Secrets never pass through here. */
import { redactedRequest } from '../engine/sealed-request.js';
import type { AgentRow, EventRow, OperationRow } from '../store/index.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const json = (text: string | null) => (text === null ? null : JSON.parse(text));

export function presentAgent(a: AgentRow) {
  return {
    id: a.id,
    name: a.name,
    role: a.role,
    url: a.url,
    protocol: a.protocol,
    // Whether a token is set, never the token.
    auth: a.auth_token_enc ? { scheme: 'bearer', token_set: true } : null,
    webhook_signing: json(a.webhook_signing),
    created_at: iso(a.created_at),
  };
}

export function presentEvent(e: EventRow) {
  return {
    id: e.id,
    at: iso(e.at),
    source: e.source,
    kind: e.kind,
    from: e.from_status,
    to: e.to_status,
    detail: json(e.detail),
    actor: e.actor,
  };
}

export function presentOperation(o: OperationRow, events?: EventRow[]) {
  return {
    id: o.id,
    type: o.type,
    agent_id: o.agent_id,
    status: o.status,
    task_id: o.task_id,
    context_id: o.context_id,
    idempotency_key: o.idempotency_key,
    // As sent, minus every credential and the webhook URL's token.
    request: redactedRequest(o.request_body, o.webhook_token),
    result: json(o.result),
    error: json(o.error),
    needs_input: o.needs_input === 1,
    input_message: o.input_message,
    stalled: o.stalled === 1,
    stalled_reason: o.stalled_reason,
    webhook: o.webhook_mode,
    deadline_at: iso(o.deadline_at),
    next_check_at: iso(o.next_check_at),
    created_at: iso(o.created_at),
    updated_at: iso(o.updated_at),
    completed_at: iso(o.completed_at),
    parent_id: o.parent_id,
    ...(events ? { events: events.map(presentEvent) } : {}),
  };
}
