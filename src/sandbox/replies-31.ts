/**
 * The sandbox seller's replies in AdCP 3.1, made from the 3.0 replies its tools
 * build (each already checked against its 3.0 schema) and checked against the
 * 3.1.19 response schemas before they are sent: a reply off the schema is a bug
 * here, never something to ship.
 *
 * What 3.1 changes on the wire (3.1.19 schemas):
 * - Every reply carries the protocol envelope's `status`, the task's status
 *   (core/protocol-envelope.json: `completed` for a synchronous answer, `failed`
 *   for an error), and `adcp_version`, the release served (core/version-envelope.json).
 * - `create_media_buy` and `update_media_buy` successes: the root `status` is the
 *   task's `completed`; the buy's own status moves to `media_buy_status` (3.0 put
 *   the buy's status at the root, where it collided with the task's).
 * - A create that ends `rejected`, or stops `auth-required`, answers in the error
 *   shape: `errors[]` saying why (3.1 has no other shape for it).
 * - A task's `result` (polls, webhooks) is the 3.1 reply of its task.
 * - `get_media_buys`: each buy's dependency `health` (`ok`: the sandbox's buys
 *   depend on nothing that goes offline) and its open `impairments` (none).
 */
import { responseErrors, schemaErrors } from '../adcp/response-schema.js';
import { issuesOf } from '../adcp/schemas/schema-issues.js';
import { MEDIA_BUY_STATUSES } from './media-buy-book.js';
import { isPlainObject, withBody, type ToolResult } from './wire.js';

const V31 = '3.1';

/** Tools whose reply names a task and may carry its `result`. */
const TASK_VIEWS: ReadonlySet<string> = new Set(['get_task_status', 'tasks/get', 'tasks_get', 'sandbox_respond']);

/** The tools whose AdCP schema is another's (the 3.0 names of the task tools). */
const SCHEMA_OF: Readonly<Record<string, string>> = { 'tasks/get': 'get_task_status', tasks_get: 'get_task_status', 'tasks/list': 'list_tasks' };

/** `result` as the 3.1 reply of `tool`, checked; an error is marked `failed` and sent as built (as the SDK sends errors). */
export function reply31(tool: string, result: ToolResult): ToolResult {
  const body = { ...result.structuredContent };
  if (result.isError === true) return withBody(result, { ...body, status: body.status ?? 'failed', adcp_version: V31 });
  const shaped = { ...body31(tool, body), adcp_version: V31 };
  assertValid31Reply(tool, shaped);
  return withBody(result, shaped);
}

/**
 * A 3.0 body of `taskType` (a reply, or a task's result) in its 3.1 shape, its
 * envelope `status` `taskStatus` unless it has one. Not checked.
 */
export function body31(taskType: string, body: Record<string, unknown>, taskStatus = 'completed'): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body };
  if (taskType === 'create_media_buy' || taskType === 'update_media_buy') {
    if (typeof out.media_buy_id === 'string') {
      // The buy's status leaves the root, which belongs to the task.
      if ((MEDIA_BUY_STATUSES as readonly unknown[]).includes(out.status)) out.media_buy_status = out.status;
      out.status = taskStatus;
    } else if (out.status === 'rejected' && !hasErrors(out)) {
      out.errors = [{ code: 'POLICY_VIOLATION', message: String(out.message ?? 'the seller declined this buy'), recovery: 'terminal' }];
    } else if (out.status === 'auth-required' && !hasErrors(out)) {
      out.errors = [{ code: 'AUTH_REQUIRED', message: String(out.message ?? 'fresh credentials are needed'), recovery: 'correctable' }];
    }
  }
  if (TASK_VIEWS.has(taskType) && isPlainObject(out.result) && typeof out.task_type === 'string') {
    out.result = body31(out.task_type, out.result);
  }
  if (taskType === 'get_media_buys' && Array.isArray(out.media_buys)) {
    out.media_buys = out.media_buys.map((b: unknown) => (isPlainObject(b) ? { ...b, health: 'ok', impairments: [] } : b));
  }
  out.status ??= taskStatus;
  return out;
}

/** Throws when `body` is not a valid 3.1 reply to `tool` (tools without an AdCP schema pass). */
export function assertValid31Reply(tool: string, body: Record<string, unknown>): void {
  const errors = responseErrors(SCHEMA_OF[tool] ?? tool, body, V31);
  if (errors && errors.length > 0) throw offSchema(`reply to ${tool}`, errors);
}

/** Throws when `payload` is not a valid 3.1 document of the schema at `path` (e.g. `core/mcp-webhook-payload.json`). */
export function assertValid31Document(what: string, path: string, payload: Record<string, unknown>): void {
  const errors = schemaErrors(path, payload, V31);
  if (errors === null) throw new Error(`AdCP ${V31} has no schema ${path}`);
  if (errors.length > 0) throw offSchema(what, errors);
}

function offSchema(what: string, errors: Parameters<typeof issuesOf>[0]): Error {
  const detail = issuesOf(errors).map((i) => `${i.pointer} ${i.message}`).join('; ');
  return new Error(`sandbox seller ${what} is off the AdCP ${V31} schema: ${detail}`);
}

const hasErrors = (body: Record<string, unknown>): boolean => Array.isArray(body.errors) && body.errors.length > 0;
