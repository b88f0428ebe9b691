/**
 * The MCP SDK's task store, over our durable operations: a task is an operation (task
 * id = operation id), so a task outlives the session that started it and our restarts,
 * and any session of the tenant's keys can follow it (a client reconnecting after a
 * restart gets a new session). The SDK's own handlers serve tasks/get, tasks/result,
 * tasks/list and tasks/cancel through this; the `sessionId` they pass is ignored, since
 * the store is built per session for the key that opened it.
 *
 * Nothing is kept here: a task's status and result are read from the operation each
 * time, and cancelling a task is cancelling the operation, with the key's name as actor.
 */
import { ErrorCode, McpError, type Request, type RequestId, type Result } from '@modelcontextprotocol/sdk/types.js';
import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { roleRefusal } from '../api/auth.js';
import { presentOperation } from '../domain/operation-json.js';
import { roleAtLeast } from '../domain/roles.js';
import { EngineError } from '../engine/errors.js';
import { listOperations } from '../engine/operation-reads.js';
import type { OperationRow } from '../store/index.js';
import type { ToolContext } from './context.js';
import { operationSummary } from './operation-summary.js';
import { operationResult } from './results.js';
import { taskOf, taskStatusOf, type McpTask } from './task-status.js';

const TASKS_PER_PAGE = 50;

export class OperationTaskStore implements TaskStore {
  constructor(private readonly scope: Omit<ToolContext, 'signal'>) {}

  /** Called by a start tool once its operation exists (CreateTaskOptions.context.operation_id). */
  async createTask(taskParams: CreateTaskOptions, _requestId: RequestId, _request: Request): Promise<McpTask> {
    const id = taskParams.context?.operation_id;
    if (typeof id !== 'string') throw new Error('a task is an operation: only tools that start one create tasks');
    const row = await this.row(id);
    if (!row) throw new McpError(ErrorCode.InvalidParams, `operation ${id} not found`);
    return this.task(row);
  }

  async getTask(taskId: string): Promise<McpTask | null> {
    const row = await this.row(taskId);
    return row ? this.task(row) : null;
  }

  /** Asked for once the task has ended (the SDK waits until then): the operation, as the tool would answer it. */
  async getTaskResult(taskId: string): Promise<Result> {
    const row = await this.row(taskId);
    if (!row) throw new McpError(ErrorCode.InvalidParams, `task ${taskId} not found`);
    return operationResult(row, this.scope.services.links);
  }

  async storeTaskResult(): Promise<void> {
    throw new Error('an operation records its own result; a client cannot store one');
  }

  /** tasks/cancel: the operation is canceled as cancel_operation would (an operator's key; its name recorded). */
  async updateTaskStatus(taskId: string, status: McpTask['status'], statusMessage?: string): Promise<void> {
    if (status !== 'cancelled') throw new McpError(ErrorCode.InvalidRequest, 'an operation’s status is set by its agent; a client can only cancel it');
    const { auth, services } = this.scope;
    if (!roleAtLeast(auth.role, 'operator')) throw new McpError(ErrorCode.InvalidRequest, `forbidden: ${roleRefusal('operator', auth)}`);
    try {
      await services.cancel.cancel({ tenantId: auth.tenantId, operationId: taskId, actor: auth.keyName, reason: reasonOf(statusMessage) });
    } catch (err) {
      if (err instanceof EngineError) throw new McpError(ErrorCode.InvalidRequest, `${err.code}: ${err.message}`);
      throw err;
    }
  }

  async listTasks(cursor?: string): Promise<{ tasks: McpTask[]; nextCursor?: string }> {
    const page = await listOperations(this.scope.services.store, this.scope.auth.tenantId, { limit: TASKS_PER_PAGE, cursor });
    return {
      tasks: page.operations.map((op) => taskOf(op, this.scope.services.taskPollMs, statusMessageOf(op, this.scope))),
      ...(page.next_cursor ? { nextCursor: page.next_cursor } : {}),
    };
  }

  private row(id: string): Promise<OperationRow | undefined> {
    return this.scope.services.store.operations.getForTenant(this.scope.auth.tenantId, id);
  }

  private task(row: OperationRow): McpTask {
    const op = presentOperation(row);
    return taskOf(op, this.scope.services.taskPollMs, statusMessageOf(op, this.scope));
  }
}

/** Where a person must act, or how it ended: the operation's summary, which carries the dashboard link. */
function statusMessageOf(op: ReturnType<typeof presentOperation>, scope: Omit<ToolContext, 'signal'>): string | undefined {
  const status = taskStatusOf(op);
  return status === 'working' && !op.stalled ? undefined : operationSummary(op, scope.services.links);
}

/** The SDK's fixed wording for a client's cancel says nothing a person reading the timeline needs. */
function reasonOf(statusMessage: string | undefined): string {
  return !statusMessage || statusMessage === 'Client cancelled task execution.' ? 'canceled by an MCP client (tasks/cancel)' : statusMessage;
}
