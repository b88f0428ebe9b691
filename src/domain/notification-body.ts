/**
 * The body of a notification (docs/ARCHITECTURE.md, Telling users), exactly as stored, streamed over
 * SSE and posted to subscribers:
 * `{id, type, created_at, tenant_id, data: {operation, event, …}}` where
 * `operation` is the operation JSON of the API without its events (after the
 * change) and `event` the event that raised it. Extras a reader needs without
 * digging: for input required the message, reason and estimated time when known
 * (and `reminder: true` on a reminder); for a completed media buy its
 * `media_buy_id`; with a public URL, a `link` to the operation's page.
 *
 * The copy of the operation is bounded: `request`, `result`, `error`, `input_request`,
 * `input_message` and the event's `detail` larger than SUMMARY_FIELD_MAX_BYTES are
 * `{"$omitted": {"bytes", "href"}}` markers, the href the operation's API route, where
 * the whole of it is read. A many-megabyte reply is then stored once (on the operation),
 * not again in every notification that reports it, and streaming or posting a
 * notification never costs more than a small body.
 */
import type { NotificationType } from './notification-types.js';
import { isOmitted, presentEvent, SUMMARY_FIELD_MAX_BYTES, type EventJsonSource, type OperationJson, type OperationJsonSource } from './operation-json.js';

export interface NotificationBodyInput {
  id: string;
  type: NotificationType;
  tenantId: string;
  createdAt: number;
  /**
   * presentOperation of the row after the change, bounded (`maxFieldBytes:
   * SUMMARY_FIELD_MAX_BYTES`), built once per change and shared by its notifications.
   */
  operation: OperationJson;
  event: EventJsonSource;
  /** ADCP_ORCH_PUBLIC_URL, without a trailing slash. */
  publicUrl?: string;
}

/** The operation columns the extras read; `input_request` (people in the loop) where the schema has it. */
export type BodyOperationSource = OperationJsonSource & { input_request?: string | null };

export function notificationBody(input: NotificationBodyInput, row: BodyOperationSource) {
  const event = presentEvent(input.event, { operationId: row.id, maxFieldBytes: SUMMARY_FIELD_MAX_BYTES });
  return {
    id: input.id,
    type: input.type,
    created_at: new Date(input.createdAt).toISOString(),
    tenant_id: input.tenantId,
    data: {
      operation: input.operation,
      event,
      ...extrasFor(input.type, event.kind, event.detail, row, input.operation),
      ...(input.publicUrl ? { link: `${input.publicUrl}/operations/${encodeURIComponent(row.id)}` } : {}),
    },
  };
}

function extrasFor(type: NotificationType, kind: string, detail: unknown, row: BodyOperationSource, operation: OperationJson): Record<string, unknown> {
  if (type === 'operation.input_required') {
    const d = asObject(detail);
    const request = asObject(parseJson(row.input_request ?? null));
    return compact({
      message: str(d.message) ?? str(request.message) ?? row.input_message ?? undefined,
      reason: str(d.reason) ?? str(request.reason),
      estimated_time: str(d.estimated_time) ?? str(request.estimated_time),
      reminder: kind === 'reminder' ? true : undefined,
    });
  }
  if (type === 'operation.completed') {
    // An omitted result is read for its id only while that stays cheap (a reply of at most 1 MiB).
    const result = isOmitted(operation.result) ? (row.result && row.result.length <= 1_048_576 ? parseJson(row.result) : undefined) : operation.result;
    return compact({ media_buy_id: str(asObject(result).media_buy_id) });
  }
  return {};
}

function parseJson(text: string | null): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function asObject(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function compact(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
