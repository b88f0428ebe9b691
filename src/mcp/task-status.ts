/**
 * An operation seen as an MCP task (task id = operation id). MCP has five task
 * statuses; ours map onto them so that a client following a task sees what matters:
 * still going, waiting for a person, or ended and how.
 */
import type { OperationJson } from '../domain/operation-json.js';

export type McpTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

type TaskSource = Pick<OperationJson, 'id' | 'status' | 'needs_input' | 'created_at' | 'updated_at' | 'input_message'> & { input_request?: unknown };

/**
 * `input_required` whenever a person is asked (a held spend approval is still `requested`
 * here, a seller's question `input-required` or `auth-required`); `failed` for failed and
 * rejected; `cancelled` for canceled; `working` for the rest, `unknown` included, since
 * it is reconciled, not ended.
 */
export function taskStatusOf(op: Pick<OperationJson, 'status' | 'needs_input'>): McpTaskStatus {
  if (op.needs_input) return 'input_required';
  switch (op.status) {
    case 'completed':
      return 'completed';
    case 'failed':
    case 'rejected':
      return 'failed';
    case 'canceled':
      return 'cancelled';
    case 'input-required':
    case 'auth-required':
      return 'input_required';
    default:
      return 'working';
  }
}

export interface McpTask {
  taskId: string;
  status: McpTaskStatus;
  /** Null: a task lives as long as its operation, which is never dropped while anyone may ask. */
  ttl: null;
  createdAt: string;
  lastUpdatedAt: string;
  pollInterval: number;
  statusMessage?: string;
}

export function taskOf(op: TaskSource, pollInterval: number, statusMessage?: string): McpTask {
  return {
    taskId: op.id,
    status: taskStatusOf(op),
    ttl: null,
    createdAt: op.created_at ?? new Date(0).toISOString(),
    lastUpdatedAt: op.updated_at ?? op.created_at ?? new Date(0).toISOString(),
    pollInterval,
    ...(statusMessage ? { statusMessage } : {}),
  };
}
