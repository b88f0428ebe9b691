/** list_operations: the tenant's operations, newest first, filtered (GET /v1/operations). */
import { z } from 'zod';
import { OPERATION_STATUSES } from '../../domain/status.js';
import { listOperations as list, type OperationPage } from '../../engine/operation-reads.js';
import { readTool } from '../tool.js';
import { OperationPageOutput } from './schemas.js';

export const OperationFilters = z
  .object({
    status: z.enum(OPERATION_STATUSES).optional(),
    type: z.string().max(64).optional().describe('An AdCP task, e.g. create_media_buy'),
    agent_id: z.string().max(100).optional(),
    needs_input: z.boolean().optional().describe('Only those waiting (true) or not waiting (false) for a person'),
    stalled: z.boolean().optional(),
    limit: z.number().int().min(1).max(500).default(50),
    cursor: z.string().max(500).optional().describe('next_cursor of the previous page'),
  })
  .strict();

export function pageSummary(page: OperationPage, what: string): string {
  const n = page.operations.length;
  if (n === 0) return `No ${what}.`;
  const lines = page.operations.slice(0, 20).map((o) => `${o.id} ${o.type} ${o.status}${o.needs_input ? ' (waits for a person)' : ''}${o.stalled ? ' (stalled)' : ''}`);
  const more = n > 20 ? ` …and ${n - 20} more in the JSON.` : '';
  return `${n} ${what}: ${lines.join('; ')}.${more}${page.next_cursor ? ' More pages: pass next_cursor as cursor.' : ''}`;
}

export const listOperations = readTool({
  name: 'list_operations',
  title: 'List operations',
  description: 'The tenant’s operations, newest first, filtered by status, task type, agent, whether a person must act (needs_input) or stalled; paged with cursor.',
  role: 'viewer',
  input: OperationFilters,
  output: OperationPageOutput,
  run: (ctx, q) =>
    list(ctx.services.store, ctx.auth.tenantId, { status: q.status, type: q.type, agentId: q.agent_id, needsInput: q.needs_input, stalled: q.stalled, limit: q.limit, cursor: q.cursor }),
  summary: (json) => pageSummary(json as OperationPage, 'operation(s)'),
});
