/**
 * tools/call, the same way for every tool: the key's role, the input schema, the
 * caller's idempotency key (the API's rules, src/engine/request-idempotency.ts), then
 * the tool's work, its answer as a result (or, for a task-augmented call of a tool that
 * starts an operation, the task), and `mcp_tool_calls_total{tool,outcome}`.
 *
 * A refused or malformed call does nothing at all: no operation, no event, no key
 * reserved. An unknown tool is a protocol error (the MCP spec's "unknown tool");
 * everything else a model can correct is an `isError` result it can read.
 */
import { ErrorCode, McpError, type CallToolRequest, type CallToolResult, type CreateTaskResult } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra, RequestTaskStore } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { roleRefusal } from '../api/auth.js';
import { DATABASE_UNAVAILABLE_MESSAGE } from '../api/errors.js';
import { databaseUnavailable } from '../store/db-errors.js';
import { presentOperation } from '../domain/operation-json.js';
import { roleAtLeast } from '../domain/roles.js';
import { isTerminal, type OperationStatus } from '../domain/status.js';
import { EngineError } from '../engine/errors.js';
import { answerOnce, type KeyedAnswer } from '../engine/request-idempotency.js';
import type { KeyReservation } from '../store/idempotency-repo.js';
import type { OperationRow } from '../store/index.js';
import type { ToolContext } from './context.js';
import { errorResult, jsonResult, operationResult } from './results.js';
import { inputOf, type StartTool } from './tool.js';
import { TOOLS_BY_NAME } from './tools/index.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export async function callTool(request: CallToolRequest, extra: Extra, base: Omit<ToolContext, 'signal'>): Promise<CallToolResult | CreateTaskResult> {
  const { metrics, log } = base.services;
  const name = request.params.name;
  const tool = TOOLS_BY_NAME.get(name);
  if (!tool) {
    // Not the name as a label: a client could make up any number of them.
    metrics.mcpToolCall('unknown', 'unknown_tool');
    throw new McpError(ErrorCode.InvalidParams, `unknown tool '${name.slice(0, 100)}': tools/list names the tools this key may use`);
  }
  const count = (outcome: string) => metrics.mcpToolCall(tool.name, outcome);
  if (!roleAtLeast(base.auth.role, tool.role)) {
    count('forbidden');
    return errorResult('forbidden', roleRefusal(tool.role, base.auth));
  }
  const parsed = inputOf(tool).safeParse(request.params.arguments ?? {});
  if (!parsed.success) {
    count('invalid');
    return errorResult('invalid_request', describeIssues(parsed.error), parsed.error.issues.map((i) => ({ path: i.path.join('.') || '/', message: i.message })));
  }
  const wantsTask = request.params.task !== undefined;
  if (wantsTask && tool.kind !== 'start') {
    count('invalid');
    throw new McpError(ErrorCode.InvalidParams, `${tool.name} does not run as a task (execution.taskSupport is forbidden): call it without one`);
  }
  const ctx: ToolContext = { ...base, signal: extra.signal };
  const { idempotency_key: clientKey, ...args } = parsed.data as Record<string, unknown> & { idempotency_key?: string };
  try {
    const result =
      tool.kind === 'start'
        ? await start(tool, ctx, args, clientKey, wantsTask ? extra.taskStore : undefined)
        : tool.kind === 'change'
          ? await keyed(ctx, tool.name, args, clientKey, false, async () => ({ statusCode: 200, body: await tool.run(ctx, args, clientKey) })).then((a) =>
              jsonResult(a.body, tool.summary(a.body, ctx, args)),
            )
          : await tool.run(ctx, args).then((json) => jsonResult(json, tool.summary(json, ctx, args)));
    count('task' in result ? 'task' : 'ok');
    return result;
  } catch (err) {
    if (err instanceof EngineError) {
      count('error');
      return errorResult(err.code, err.message, err.details);
    }
    if (err instanceof McpError) throw err;
    if (databaseUnavailable(err)) {
      // Nothing was done (or it is kept by the idempotency key): the model may call again shortly.
      base.services.outage?.failed('mcp', err);
      count('database_unavailable');
      return errorResult('database_unavailable', DATABASE_UNAVAILABLE_MESSAGE);
    }
    count('internal_error');
    log.error({ err, tool: tool.name }, 'MCP tool call failed');
    return errorResult('internal_error', 'internal error; it has been logged');
  }
}

/**
 * A start tool: the operation started (or, under a key used before, found again), then
 * either the task for it, or the operation once it has ended, needs a person or is queued
 * at the seller, waiting at most ADCP_ORCH_MCP_WAIT_MS. A replay shows the operation as
 * it stands now: the key guarantees one operation; its state is never stale.
 */
async function start(tool: StartTool, ctx: ToolContext, args: Record<string, unknown>, clientKey: string | undefined, taskStore: RequestTaskStore | undefined) {
  const { services, auth } = ctx;
  const began = Date.now();
  const waitMs = taskStore ? 0 : services.waitMs;
  const answer = await keyed(ctx, tool.name, args, clientKey, true, async (reservation) => {
    const row = await tool.start(ctx, args as z.output<typeof tool.input>, { clientKey, reservation, waitMs });
    return { statusCode: 202, body: presentOperation(row) };
  });
  const id = (answer.body as { id: string }).id;
  if (taskStore) return { task: await taskStore.createTask({ context: { operation_id: id } }) } as CreateTaskResult;
  const left = Math.max(0, services.waitMs - (Date.now() - began));
  const row = await services.watch.until(auth.tenantId, id, settled, left, ctx.signal);
  if (!row) throw new EngineError('operation_not_found', `operation ${id} not found`, 404);
  return operationResult(row, services.links, tool.note?.(ctx, args as z.output<typeof tool.input>));
}

/** Ended, waiting for a person, stalled, or queued at the seller (which can take days): nothing more to wait for here. */
const settled = (row: OperationRow) => isTerminal(row.status as OperationStatus) || row.needs_input === 1 || row.stalled === 1 || row.status === 'submitted';

/** The work under the caller's idempotency key, when one was given. */
async function keyed(
  ctx: ToolContext,
  tool: string,
  args: Record<string, unknown>,
  clientKey: string | undefined,
  reserveInWork: boolean,
  work: (reservation?: KeyReservation) => Promise<KeyedAnswer>,
): Promise<KeyedAnswer> {
  if (clientKey === undefined) return work();
  // Keyed like the API's: the arguments may carry a secret, which an unkeyed hash would let be guessed at.
  const hash = ctx.services.digest(`mcp tools/call ${tool}\n${JSON.stringify(args)}`);
  return answerOnce(ctx.services.store, { tenantId: ctx.auth.tenantId, key: clientKey, hash }, work, { reserveInWork });
}

function describeIssues(error: z.ZodError): string {
  const parts = error.issues.slice(0, 5).map((i) => `${i.path.length > 0 ? i.path.join('.') : 'arguments'}: ${i.message}`);
  return `the arguments do not fit the tool's input schema: ${parts.join('; ')}${error.issues.length > 5 ? ` (and ${error.issues.length - 5} more)` : ''}`;
}

