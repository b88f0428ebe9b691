/**
 * The replies to `tasks/get` (`get_task_status`) and `tasks/list`
 * (`list_tasks`) over a TaskRegistry, shared by the sandbox seller and the
 * sandbox governance agent: each agent owns its registry, the wire shapes are
 * the same.
 */
import {
  InvalidCursorError,
  TASK_STATUSES,
  type SandboxTask,
  type SortDirection,
  type SortField,
  type TaskQuery,
  type TaskRegistry,
  type TaskStatus,
} from './tasks.js';
import { errorResult, isPlainObject, ok, type ToolResult } from './wire.js';

const SORT_FIELDS: readonly SortField[] = ['created_at', 'updated_at', 'status', 'task_type', 'protocol'];

const echoOf = (args: Record<string, unknown>): Record<string, unknown> =>
  args.context !== undefined ? { context: args.context } : {};

/**
 * `tasks/get` (`get_task_status`): the task, its result, its history on request. In
 * 3.0 the result comes unless `include_result: false`; in 3.1 (`version`), as its
 * schema says, only when asked for (`include_result` defaults to false) and only
 * once the task is completed.
 */
export function getTaskReply(tasks: TaskRegistry, args: Record<string, unknown>, onPoll?: (taskId: string) => void, version = '3.0'): ToolResult {
  const echo = echoOf(args);
  const taskId = args.task_id;
  if (typeof taskId !== 'string' || taskId.length === 0) {
    return errorResult('INVALID_REQUEST', 'task_id is required', { field: 'task_id', extra: echo });
  }
  onPoll?.(taskId);
  const task = tasks.get(taskId);
  if (!task) return errorResult('REFERENCE_NOT_FOUND', 'no such task', { field: 'task_id', extra: echo });
  // 3.0 has no include_result; we return the result unless asked not to,
  // so a 3.0-style poll still learns the outcome (media_buy_id, decision).
  const includeResult = version === '3.0' ? args.include_result !== false : args.include_result === true && task.status === 'completed';
  return ok({
    ...taskView(task, { includeResult, includeHistory: args.include_history === true }),
    ...echo,
  });
}

/** `tasks/list`: filters, keyset pagination and the query summary. */
export function listTasksReply(tasks: TaskRegistry, args: Record<string, unknown>): ToolResult {
  const echo = echoOf(args);
  const parsed = parseListArgs(args);
  if (typeof parsed === 'string') return errorResult('INVALID_REQUEST', parsed, { extra: echo });
  let page;
  try {
    page = tasks.query(parsed.query);
  } catch (err) {
    if (err instanceof InvalidCursorError) {
      return errorResult('INVALID_REQUEST', err.message, { field: 'pagination.cursor', extra: echo });
    }
    throw err;
  }
  const statusBreakdown: Record<string, number> = {};
  for (const t of page.tasks) statusBreakdown[t.status] = (statusBreakdown[t.status] ?? 0) + 1;
  return ok({
    query_summary: {
      total_matching: page.totalMatching,
      returned: page.tasks.length,
      domain_breakdown: { [tasks.domain]: page.tasks.length },
      status_breakdown: statusBreakdown,
      filters_applied: parsed.filtersApplied,
      sort_applied: parsed.query.sort,
    },
    tasks: page.tasks.map((t) => ({
      task_id: t.task_id,
      task_type: t.task_type,
      domain: t.domain,
      status: t.status,
      created_at: t.created_at,
      updated_at: t.updated_at,
      ...(t.completed_at && { completed_at: t.completed_at }),
      has_webhook: t.push !== undefined,
      ...(args.include_history === true && { history: historyView(t) }),
    })),
    pagination: {
      has_more: page.hasMore,
      ...(page.cursor && { cursor: page.cursor }),
      total_count: page.totalMatching,
    },
    ...echo,
  });
}

export function taskView(task: SandboxTask, o: { includeResult: boolean; includeHistory: boolean }): Record<string, unknown> {
  return {
    task_id: task.task_id,
    task_type: task.task_type,
    protocol: task.domain,
    status: task.status,
    created_at: task.created_at,
    updated_at: task.updated_at,
    ...(task.completed_at && { completed_at: task.completed_at }),
    has_webhook: task.push !== undefined,
    ...(task.message !== undefined && { message: task.message }),
    ...(task.error && { error: task.error }),
    ...(o.includeResult && task.result && { result: task.result }),
    ...(o.includeHistory && { history: historyView(task) }),
  };
}

function historyView(task: SandboxTask): Array<Record<string, unknown>> {
  return task.history.map((h) => ({
    timestamp: h.at,
    type: 'response',
    data: { status: h.status, ...(h.message !== undefined && { message: h.message }) },
  }));
}

/** Validates the tasks/list request; a string is the problem to report. */
function parseListArgs(args: Record<string, unknown>): { query: TaskQuery; filtersApplied: string[] } | string {
  const filters = args.filters === undefined ? {} : args.filters;
  if (!isPlainObject(filters)) return 'filters must be an object';
  const filtersApplied = Object.keys(filters).filter((k) => filters[k] !== undefined);

  const statuses = [
    ...(filters.status !== undefined ? [filters.status] : []),
    ...(Array.isArray(filters.statuses) ? filters.statuses : []),
  ];
  for (const s of statuses) {
    if (!TASK_STATUSES.includes(s as TaskStatus)) return `unknown task status ${JSON.stringify(s)}`;
  }
  const list = (one: unknown, many: unknown): string[] | undefined => {
    const all = [...(one !== undefined ? [one] : []), ...(Array.isArray(many) ? many : [])];
    return all.length > 0 ? all.map(String) : undefined;
  };
  const time = (v: unknown): string | undefined => {
    if (v === undefined) return undefined;
    const ms = Date.parse(String(v));
    return Number.isNaN(ms) ? 'invalid' : new Date(ms).toISOString();
  };
  const times = {
    createdAfter: time(filters.created_after),
    createdBefore: time(filters.created_before),
    updatedAfter: time(filters.updated_after),
    updatedBefore: time(filters.updated_before),
  };
  if (Object.values(times).includes('invalid')) return 'date filters must be ISO 8601 date-times';

  const sort = isPlainObject(args.sort) ? args.sort : {};
  const field = (sort.field ?? 'created_at') as SortField;
  const direction = (sort.direction ?? 'desc') as SortDirection;
  if (!SORT_FIELDS.includes(field)) return `sort.field must be one of ${SORT_FIELDS.join(', ')}`;
  if (direction !== 'asc' && direction !== 'desc') return 'sort.direction must be asc or desc';

  const pagination = isPlainObject(args.pagination) ? args.pagination : {};
  const maxResults = pagination.max_results ?? 50;
  if (typeof maxResults !== 'number' || !Number.isInteger(maxResults) || maxResults < 1 || maxResults > 100) {
    return 'pagination.max_results must be an integer from 1 to 100';
  }
  const cursor = pagination.cursor;
  if (cursor !== undefined && typeof cursor !== 'string') return 'pagination.cursor must be a string';

  const query: TaskQuery = {
    sort: { field, direction },
    maxResults,
    ...(cursor !== undefined && { cursor }),
    ...(statuses.length > 0 && { statuses: statuses as TaskStatus[] }),
  };
  const taskTypes = list(filters.task_type, filters.task_types);
  if (taskTypes) query.taskTypes = taskTypes;
  const protocols = list(filters.protocol, filters.protocols);
  if (protocols) query.protocols = protocols;
  if (Array.isArray(filters.task_ids)) query.taskIds = filters.task_ids.map(String);
  if (typeof filters.context_contains === 'string') query.contextContains = filters.context_contains;
  if (typeof filters.has_webhook === 'boolean') query.hasWebhook = filters.has_webhook;
  for (const [k, v] of Object.entries(times)) if (v !== undefined) (query as unknown as Record<string, string>)[k] = v;
  return { query, filtersApplied };
}
