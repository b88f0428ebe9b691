/**
 * Reading `get_task_status` / `tasks/get` and `list_tasks` / `tasks/list`
 * replies (AdCP spec, poll and list responses) into TaskReply and ListTasksPage.
 */
import { isAdcpTaskStatus } from '../domain/status.js';
import { payloadError, readWireError, toAdcpError } from './extract-error.js';
import { epochMs, isJsonObject, nonEmptyString, type JsonObject } from './json.js';
import { AdcpTransportError, type ListedTask, type ListTasksPage, type TaskReply } from './types.js';

function pollFailure(tool: string, payload: JsonObject): AdcpTransportError {
  const wire = payloadError(payload);
  return new AdcpTransportError(
    `${tool} failed${wire ? `: ${wire.code}` : ': reply is not a task'}`,
    'protocol',
    undefined,
    wire ? toAdcpError(wire) : undefined,
  );
}

/**
 * One polled task. `data` is the task's `result` (3.1+, asked for with
 * `include_result`) when present, else the whole reply (3.0 sellers put result
 * fields beside the task fields, or nothing). Status missing or off-enum is
 * `unknown`: keep reconciling, never guess.
 */
export function taskReplyFromPoll(tool: string, payload: JsonObject, requestedTaskId: string): TaskReply {
  // Some 3.0 sellers nest the task as {task: {...}}.
  const body = payload.status === undefined && isJsonObject(payload.task) ? payload.task : payload;
  if (body.status === undefined && body.task_id === undefined) throw pollFailure(tool, payload);
  const result = isJsonObject(body.result) ? body.result : undefined;
  const reply: TaskReply = {
    status: isAdcpTaskStatus(body.status) ? body.status : 'unknown',
    taskId: nonEmptyString(body.task_id) ?? requestedTaskId,
    data: result ?? body,
  };
  const wire = readWireError(body.error) ?? payloadError(result);
  if (wire) reply.error = toAdcpError(wire);
  const contextId = nonEmptyString(body.context_id);
  if (contextId) reply.contextId = contextId;
  const message = nonEmptyString(body.message) ?? nonEmptyString(result?.message) ?? wire?.message;
  if (message) reply.message = message;
  const timestamp = epochMs(body.timestamp) ?? epochMs(body.updated_at);
  if (timestamp !== undefined) reply.timestamp = timestamp;
  return reply;
}

export function listPageFromPayload(tool: string, payload: JsonObject): ListTasksPage {
  if (!Array.isArray(payload.tasks)) throw pollFailure(tool, payload);
  const tasks: ListedTask[] = [];
  for (const t of payload.tasks) {
    const taskId = isJsonObject(t) ? nonEmptyString(t.task_id) : undefined;
    if (!isJsonObject(t) || !taskId) continue; // an entry without a handle cannot be reconciled
    const listed: ListedTask = {
      taskId,
      taskType: nonEmptyString(t.task_type) ?? 'unknown',
      status: isAdcpTaskStatus(t.status) ? t.status : 'unknown',
    };
    if (typeof t.created_at === 'string') listed.createdAt = t.created_at;
    if (typeof t.updated_at === 'string') listed.updatedAt = t.updated_at;
    if (t.context !== undefined) listed.context = t.context;
    tasks.push(listed);
  }
  const pagination = isJsonObject(payload.pagination) ? payload.pagination : {};
  const cursor = nonEmptyString(pagination.cursor);
  // has_more without a cursor cannot be followed; saying "more" would make callers spin.
  const page: ListTasksPage = { tasks, hasMore: pagination.has_more === true && cursor !== undefined };
  if (cursor) page.cursor = cursor;
  return page;
}
