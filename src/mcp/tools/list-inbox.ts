/** list_inbox: what waits for a person (GET /v1/operations?needs_input=true, the dashboard's inbox). */
import { z } from 'zod';
import { listOperations, type OperationPage } from '../../engine/operation-reads.js';
import { readTool } from '../tool.js';
import { pageSummary } from './list-operations.js';
import { OperationPageOutput } from './schemas.js';

export const listInbox = readTool({
  name: 'list_inbox',
  title: 'List what waits for a person',
  description:
    'Operations waiting for a person: spend held for approval, governance conditions, a seller’s question. People decide these in the dashboard’s inbox (the link is in the answer); an approver key may answer with answer_operation.',
  role: 'viewer',
  input: z
    .object({
      limit: z.number().int().min(1).max(500).default(50),
      cursor: z.string().max(500).optional().describe('next_cursor of the previous page'),
    })
    .strict(),
  output: OperationPageOutput,
  run: (ctx, q) => listOperations(ctx.services.store, ctx.auth.tenantId, { needsInput: true, limit: q.limit, cursor: q.cursor }),
  summary: (json, ctx) => `${pageSummary(json as OperationPage, 'operation(s) waiting for a person')} The inbox: ${ctx.services.links.inbox()}.`,
});
