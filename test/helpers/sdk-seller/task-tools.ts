/**
 * `tasks/get` and `tasks/list`, the AdCP 3.0 task tools. The SDK's
 * `createAdcpServer` has no first-class handler for them, so they are custom
 * tools, which the framework does NOT validate: each request is checked here
 * with the SDK's validator (tools `tasks_get`, `tasks_list`) and refused the
 * way the framework refuses its own tools (VALIDATION_ERROR, `details.side:
 * "request"`), so the request log reads both alike. Replies are checked against
 * the response schemas before they leave.
 */
import { z } from 'zod';
import { adcpError } from '@adcp/sdk/server';
import type { McpToolResponse } from '@adcp/sdk/server';
import { assertValidResponse, checkRequest, describeIssues } from './schema.js';
import type { SellerTask, TaskBook } from './tasks.js';

type Json = Record<string, unknown>;

/** An open input schema: the MCP layer must pass every argument through to our validator untouched. */
const openInput = z.looseObject({});

function refusedIfInvalid(tool: string, args: Json): McpToolResponse | undefined {
  const outcome = checkRequest(tool, args);
  if (outcome.valid) return undefined;
  return adcpError('VALIDATION_ERROR', {
    message: `${tool} request failed schema validation: ${describeIssues(outcome.issues)}`,
    issues: outcome.issues as never,
    details: { tool, side: 'request', issues: outcome.issues },
  });
}

function answer(tool: string, payload: Json): McpToolResponse {
  assertValidResponse(tool, payload);
  return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload };
}

const iso = (ms: number): string => new Date(ms).toISOString();

function taskView(t: SellerTask): Json {
  return {
    task_id: t.task_id,
    task_type: t.task_type,
    status: t.status,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
    has_webhook: t.push !== undefined,
    ...(t.status !== 'submitted' ? { completed_at: iso(t.updated_at) } : {}),
  };
}

export function taskTools(tasks: TaskBook) {
  const get = async (args: Json): Promise<McpToolResponse> => {
    const refused = refusedIfInvalid('tasks_get', args);
    if (refused) return refused;
    const task = tasks.get(String(args.task_id));
    if (!task) return adcpError('REFERENCE_NOT_FOUND', { message: `no task ${String(args.task_id)}`, field: 'task_id' });
    return answer('tasks_get', {
      ...taskView(task),
      protocol: 'media-buy',
      // The result beside the task (3.1's include_result; 3.0's schema leaves the reply open for it).
      ...(task.result && args.include_result !== false ? { result: task.result } : {}),
      ...(task.error ? { error: task.error } : {}),
    });
  };
  const list = async (args: Json): Promise<McpToolResponse> => {
    const refused = refusedIfInvalid('tasks_list', args);
    if (refused) return refused;
    const filters = (args.filters ?? {}) as { statuses?: string[]; status?: string };
    const wanted = filters.statuses ?? (filters.status ? [filters.status] : undefined);
    const matching = tasks.all().filter((t) => !wanted || wanted.includes(t.status));
    const pagination = (args.pagination ?? {}) as { max_results?: number; cursor?: string };
    const offset = Number(pagination.cursor ?? 0) || 0;
    const page = matching.slice(offset, offset + (pagination.max_results ?? 100));
    const more = offset + page.length < matching.length;
    return answer('tasks_list', {
      query_summary: { total_matching: matching.length, returned: page.length },
      tasks: page.map((t) => ({ ...taskView(t), domain: 'media-buy' })),
      pagination: { has_more: more, ...(more ? { cursor: String(offset + page.length) } : {}) },
    });
  };
  return {
    'tasks/get': { description: 'AdCP 3.0 tasks/get: one task by task_id, with its result once completed.', inputSchema: openInput, annotations: { readOnlyHint: true }, handler: get },
    'tasks/list': { description: 'AdCP 3.0 tasks/list: the tasks of this seller, filtered by status.', inputSchema: openInput, annotations: { readOnlyHint: true }, handler: list },
  };
}
