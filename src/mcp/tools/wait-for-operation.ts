/**
 * wait_for_operation: blocks until the operation changes, ends or needs a person, at
 * most timeout_s, then answers it as get_operation would. It listens on the live feed
 * (src/mcp/operation-watch.ts), so a change on any instance ends the wait.
 *
 * One that needs a person already (a buy held for spend approval, a seller's question)
 * is answered at once: nothing the model can do by waiting, and the answer's paragraph
 * says who must act and where (the dashboard link), for the model to tell its user.
 */
import { z } from 'zod';
import { isTerminal, type OperationStatus } from '../../domain/status.js';
import { EngineError } from '../../engine/errors.js';
import { showOperation } from '../../engine/operation-reads.js';
import type { OperationRow } from '../../store/index.js';
import { operationSummary } from '../operation-summary.js';
import { readTool } from '../tool.js';
import { OperationId, OperationOutput } from './schemas.js';

/** A client's request times out after 60 s by default: an answer must come before. */
export const MAX_WAIT_S = 55;

/** Over: it ended, a person must act, or anything about it changed since the wait began. */
const changed = (row: OperationRow, first: OperationRow) =>
  isTerminal(row.status as OperationStatus) ||
  row.needs_input === 1 ||
  row.status !== first.status ||
  row.needs_input !== first.needs_input ||
  row.stalled !== first.stalled ||
  row.updated_at !== first.updated_at;

export const waitForOperation = readTool({
  name: 'wait_for_operation',
  title: 'Wait for an operation',
  description: `Waits until the operation changes (a new status, a person's decision, a question for a person) or has ended, at most timeout_s (≤ ${MAX_WAIT_S}), and returns it as get_operation does. An operation that has already ended, or waits for a person (a spend approval, a seller's question), is returned at once, saying who must act and where. Call it again to keep following a long task; nothing is resent.`,
  role: 'viewer',
  input: z
    .object({
      id: OperationId,
      timeout_s: z.number().int().min(0).max(MAX_WAIT_S).default(30).describe(`Longest wait in seconds (0-${MAX_WAIT_S})`),
    })
    .strict(),
  output: OperationOutput,
  async run(ctx, args) {
    const { store, watch } = ctx.services;
    const row = await watch.until(ctx.auth.tenantId, args.id, changed, args.timeout_s * 1000, ctx.signal);
    if (!row) throw new EngineError('operation_not_found', `operation ${args.id} not found`, 404);
    return showOperation(store, ctx.auth.tenantId, row.id);
  },
  summary: (json, ctx) => operationSummary(json as Parameters<typeof operationSummary>[0], ctx.services.links),
});
