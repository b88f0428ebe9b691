/** get_operation: one operation with its whole history (GET /v1/operations/:id). */
import { z } from 'zod';
import { showOperation } from '../../engine/operation-reads.js';
import { operationSummary } from '../operation-summary.js';
import { readTool } from '../tool.js';
import { OperationId, OperationOutput } from './schemas.js';

export const getOperation = readTool({
  name: 'get_operation',
  title: 'Get an operation',
  description:
    'One operation (one AdCP task call and everything that followed) with its status, request, result or error, what a person is asked if anything, and its events (every change, with who caused it).',
  role: 'viewer',
  input: z.object({ id: OperationId }).strict(),
  output: OperationOutput,
  run: (ctx, args) => showOperation(ctx.services.store, ctx.auth.tenantId, args.id),
  summary: (json, ctx) => operationSummary(json as Parameters<typeof operationSummary>[0], ctx.services.links),
});
