/**
 * A sandbox agent's task registry: the durable-work handles (`task_id`) it
 * hands out for async replies (the seller's `create_media_buy`, the governance
 * agent's human reviews), their status history, and the queries `tasks/get`
 * and `list_tasks` answer from.
 *
 * State lives in process memory on purpose: this is the *seller*, and a buyer
 * under test must cope with whatever the seller remembers. Terminal statuses
 * are absorbing here too, so a late timer can never resurrect a task that a
 * test already forced to an end.
 */
import { randomUUID } from 'node:crypto';

export const TASK_STATUSES = [
  'submitted',
  'working',
  'input-required',
  'completed',
  'canceled',
  'failed',
  'rejected',
  'auth-required',
  'unknown',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'canceled', 'rejected']);
export const isTerminalStatus = (s: TaskStatus): boolean => TERMINAL.has(s);

/** The buyer's `push_notification_config`, kept verbatim for webhook delivery. */
export interface PushNotificationConfig {
  url: string;
  operation_id?: string;
  token?: string;
  authentication?: { schemes: string[]; credentials?: string };
}

export interface TaskError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export interface TaskHistoryEntry {
  status: TaskStatus;
  at: string;
  message?: string;
}

/** The AdCP protocol a registry's tasks belong to (`enums/adcp-protocol.json`). */
export type TaskDomain = 'media-buy' | 'governance';

export interface SandboxTask {
  task_id: string;
  task_type: string;
  /** tasks/list reports `domain`; tasks/get reports the same value as `protocol`. */
  domain: TaskDomain;
  status: TaskStatus;
  created_at: string;
  updated_at: string;
  completed_at?: string;
  message?: string;
  result?: Record<string, unknown>;
  error?: TaskError;
  /** The buyer's opaque `context`, echoed in every webhook for this task. */
  context?: unknown;
  push?: PushNotificationConfig;
  /** The request's idempotency_key, so stats can attribute completions to it. */
  idempotency_key?: string;
  /** The original request, so a later completion can build the media buy from it. */
  request?: Record<string, unknown>;
  /** The AdCP release the task's request was served in ('3.0' when unset): its webhooks speak it. */
  adcp_version?: string;
  history: TaskHistoryEntry[];
  /** Creation order; breaks ties in sorting so pagination cursors are total. */
  seq: number;
}

export interface TaskTransition {
  task: SandboxTask;
  from: TaskStatus;
  to: TaskStatus;
  at: string;
}

export interface NewTask {
  task_type: string;
  status: TaskStatus;
  message?: string;
  result?: Record<string, unknown>;
  error?: TaskError;
  context?: unknown;
  push?: PushNotificationConfig;
  idempotency_key?: string;
  request?: Record<string, unknown>;
  adcp_version?: string;
}

export interface TaskPatch {
  message?: string;
  result?: Record<string, unknown>;
  error?: TaskError;
}

export type SortField = 'created_at' | 'updated_at' | 'status' | 'task_type' | 'protocol';
export type SortDirection = 'asc' | 'desc';

export interface TaskQuery {
  statuses?: TaskStatus[];
  taskTypes?: string[];
  protocols?: string[];
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  updatedBefore?: string;
  taskIds?: string[];
  contextContains?: string;
  hasWebhook?: boolean;
  sort: { field: SortField; direction: SortDirection };
  maxResults: number;
  cursor?: string;
}

export interface TaskPage {
  tasks: SandboxTask[];
  totalMatching: number;
  hasMore: boolean;
  cursor?: string;
}

export class InvalidCursorError extends Error {}

/** Keyset cursor: the sort value and seq of the last row served. */
interface CursorState {
  f: SortField;
  d: SortDirection;
  v: string;
  s: number;
}

export class TaskRegistry {
  private readonly tasks = new Map<string, SandboxTask>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly listeners: Array<(t: TaskTransition) => void> = [];
  private nextSeq = 1;
  private lastStamp = 0;

  /** The seller's tasks are `media-buy`; the governance agent's review tasks are `governance`. */
  constructor(readonly domain: TaskDomain = 'media-buy') {}

  /** Called after every status change (not on creation: the buyer got that in the reply). */
  onTransition(listener: (t: TaskTransition) => void): void {
    this.listeners.push(listener);
  }

  create(init: NewTask): SandboxTask {
    const at = this.now();
    const task: SandboxTask = {
      task_id: `task_${randomUUID()}`,
      task_type: init.task_type,
      domain: this.domain,
      status: init.status,
      created_at: at,
      updated_at: at,
      ...(isTerminalStatus(init.status) && { completed_at: at }),
      ...(init.message !== undefined && { message: init.message }),
      ...(init.result !== undefined && { result: init.result }),
      ...(init.error !== undefined && { error: init.error }),
      ...(init.context !== undefined && { context: init.context }),
      ...(init.push !== undefined && { push: init.push }),
      ...(init.idempotency_key !== undefined && { idempotency_key: init.idempotency_key }),
      ...(init.request !== undefined && { request: init.request }),
      ...(init.adcp_version !== undefined && { adcp_version: init.adcp_version }),
      history: [{ status: init.status, at, ...(init.message !== undefined && { message: init.message }) }],
      seq: this.nextSeq++,
    };
    this.tasks.set(task.task_id, task);
    return task;
  }

  get(taskId: string): SandboxTask | undefined {
    return this.tasks.get(taskId);
  }

  get size(): number {
    return this.tasks.size;
  }

  /**
   * Move a task to `to`. Returns undefined (and changes nothing) when the task
   * is unknown or already terminal: terminal is absorbing, so a scheduled
   * completion racing a forced one is harmless.
   */
  transition(taskId: string, to: TaskStatus, patch: TaskPatch = {}): SandboxTask | undefined {
    const task = this.tasks.get(taskId);
    if (!task || isTerminalStatus(task.status)) return undefined;
    const from = task.status;
    const at = this.now();
    task.status = to;
    task.updated_at = at;
    if (isTerminalStatus(to)) task.completed_at = at;
    // A message belongs to the status it explains; don't let a stale one linger.
    if (patch.message !== undefined) task.message = patch.message;
    else delete task.message;
    if (patch.result !== undefined) task.result = patch.result;
    if (patch.error !== undefined) task.error = patch.error;
    task.history.push({ status: to, at, ...(patch.message !== undefined && { message: patch.message }) });
    const transition = { task, from, to, at };
    for (const l of this.listeners) l(transition);
    return task;
  }

  /** setTimeout that close() can cancel, so a closed seller leaves no timers behind. */
  schedule(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref?.();
    this.timers.add(t);
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  query(q: TaskQuery): TaskPage {
    const matching = [...this.tasks.values()].filter((t) => matches(t, q));
    const { field, direction } = q.sort;
    const sign = direction === 'asc' ? 1 : -1;
    const cmp = (a: SandboxTask, b: SandboxTask): number => {
      const va = sortValue(a, field);
      const vb = sortValue(b, field);
      if (va !== vb) return (va < vb ? -1 : 1) * sign;
      return (a.seq - b.seq) * sign;
    };
    matching.sort(cmp);

    let start = 0;
    if (q.cursor) {
      const c = decodeCursor(q.cursor);
      if (c.f !== field || c.d !== direction) {
        throw new InvalidCursorError('cursor was issued for a different sort order');
      }
      // First row strictly after the cursor position in sort order. Keyset,
      // not offset: tasks created between pages don't shift what comes next.
      start = matching.findIndex((t) => {
        const v = sortValue(t, field);
        if (v !== c.v) return (v < c.v ? -1 : 1) * sign > 0;
        return (t.seq - c.s) * sign > 0;
      });
      if (start < 0) start = matching.length;
    }
    const page = matching.slice(start, start + q.maxResults);
    const hasMore = start + page.length < matching.length;
    const last = page[page.length - 1];
    return {
      tasks: page,
      totalMatching: matching.length,
      hasMore,
      ...(hasMore && last && { cursor: encodeCursor({ f: field, d: direction, v: sortValue(last, field), s: last.seq }) }),
    };
  }

  /** Strictly increasing ISO timestamps, so `updated_at` ordering is never ambiguous. */
  private now(): string {
    const ms = Math.max(Date.now(), this.lastStamp + 1);
    this.lastStamp = ms;
    return new Date(ms).toISOString();
  }
}

function sortValue(t: SandboxTask, field: SortField): string {
  return field === 'protocol' ? t.domain : t[field];
}

function matches(t: SandboxTask, q: TaskQuery): boolean {
  if (q.statuses && !q.statuses.includes(t.status)) return false;
  if (q.taskTypes && !q.taskTypes.includes(t.task_type)) return false;
  if (q.protocols && !q.protocols.includes(t.domain)) return false;
  if (q.createdAfter && !(t.created_at > q.createdAfter)) return false;
  if (q.createdBefore && !(t.created_at < q.createdBefore)) return false;
  if (q.updatedAfter && !(t.updated_at > q.updatedAfter)) return false;
  if (q.updatedBefore && !(t.updated_at < q.updatedBefore)) return false;
  if (q.taskIds && !q.taskIds.includes(t.task_id)) return false;
  if (q.hasWebhook !== undefined && (t.push !== undefined) !== q.hasWebhook) return false;
  if (q.contextContains) {
    // The spec searches "media_buy_id, signal_id, etc.": look through the
    // buyer context and the result text.
    const hay = JSON.stringify([t.context ?? null, t.result ?? null]);
    if (!hay.includes(q.contextContains)) return false;
  }
  return true;
}

function encodeCursor(c: CursorState): string {
  return Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');
}

function decodeCursor(raw: string): CursorState {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as CursorState;
    if (typeof c.v === 'string' && typeof c.s === 'number' && typeof c.f === 'string' && typeof c.d === 'string') {
      return c;
    }
  } catch {
    // fall through
  }
  throw new InvalidCursorError('cursor is not one this seller issued');
}
