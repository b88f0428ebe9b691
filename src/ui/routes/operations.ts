/**
 * GET /operations (the live list), GET /operations/:id (one operation, a stable
 * deep link: notifications point here) and POST /operations/:id/cancel.
 * GETs only read; the cancel goes through the same CancelService as the API.
 */
import type { FastifyInstance } from 'fastify';
import { roleAtLeast } from '../../domain/roles.js';
import { parseGovernance } from '../../domain/governed-flow.js';
import { isOperationStatus } from '../../domain/status.js';
import { EngineError } from '../../engine/errors.js';
import { DashboardReads } from '../../store/dashboard-reads.js';
import type { OperationRow } from '../../store/index.js';
import type { UiDeps } from '../deps.js';
import { isFragmentRequest, liveUrl, noticeFrom, sendFragment, sendHtml, sendPage } from '../page.js';
import { requireCsrf, requireSession, requireUiRole } from '../session.js';
import { waitingPanel } from '../views/answer-forms.js';
import { messagePage } from '../views/message.js';
import { operationPage, operationRegion, type OperationView } from '../views/operation-page.js';
import { operationsPage, operationsRegion, type ListFilters, type OperationsListView } from '../views/operations-list.js';

export const PAGE_SIZE = 50;

interface Cursor {
  createdAt: number;
  id: string;
}
export const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify([c.createdAt, c.id])).toString('base64url');
function decodeCursor(s: string): Cursor | undefined {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (typeof createdAt === 'number' && typeof id === 'string') return { createdAt, id };
  } catch {
    /* not one of ours */
  }
  return undefined;
}

const text = (v: unknown, max: number) => (typeof v === 'string' && v.trim() !== '' && v.length <= max ? v.trim() : undefined);

/** Filters from the query string; values that cannot be right are dropped, and the page says so. */
export function filtersFrom(query: Record<string, unknown>): { filters: ListFilters; dropped: string[] } {
  const dropped: string[] = [];
  const status = text(query.status, 40);
  if (status && !isOperationStatus(status)) dropped.push(`status "${status}"`);
  const filters: ListFilters = {
    q: text(query.q, 200),
    status: status && isOperationStatus(status) ? status : undefined,
    type: text(query.type, 64),
    agent: text(query.agent, 100),
    needs_input: query.needs_input === 'true' ? 'true' : undefined,
    stalled: query.stalled === 'true' ? 'true' : undefined,
  };
  return { filters, dropped };
}

async function governanceAgentOf(deps: UiDeps, tenantId: string, operation: OperationRow) {
  const state = parseGovernance(operation.governance);
  return state ? deps.store.agents.getForTenant(tenantId, state.agent_id) : undefined;
}

export function operationsPages(app: FastifyInstance, deps: UiDeps): void {
  const reads = new DashboardReads(deps.store.db);
  const session = requireSession(deps.store, () => deps.clock.now());

  app.get('/operations', { preHandler: session }, async (req, reply) => {
    const auth = req.auth!;
    const query = (req.query ?? {}) as Record<string, unknown>;
    const { filters, dropped } = filtersFrom(query);
    const cursorText = text(query.cursor, 500);
    const cursor = cursorText ? decodeCursor(cursorText) : undefined;
    if (cursorText && !cursor) dropped.push('a page link that is not one of ours');
    // Taken before the rows are read, so a change in between reaches the page live.
    const live = isFragmentRequest(req) ? '' : await liveUrl(req, deps);
    const now = deps.clock.now();
    let rows: OperationRow[];
    let nextCursor: string | undefined;
    if (filters.q) {
      rows = await reads.search(auth.tenantId, filters.q, PAGE_SIZE);
    } else {
      const found = await deps.store.operations.list(
        auth.tenantId,
        {
          status: filters.status,
          type: filters.type,
          agentId: filters.agent,
          needsInput: filters.needs_input ? true : undefined,
          stalled: filters.stalled ? true : undefined,
        },
        PAGE_SIZE + 1,
        cursor,
      );
      rows = found.slice(0, PAGE_SIZE);
      const last = rows[rows.length - 1];
      if (found.length > PAGE_SIZE && last) nextCursor = encodeCursor({ createdAt: last.created_at, id: last.id });
    }
    const view: OperationsListView = {
      filters,
      rows,
      agents: await deps.store.agents.list(auth.tenantId),
      cursor: cursor ? cursorText : undefined,
      nextCursor,
      now,
      notice: dropped.length ? `Ignored ${dropped.join(' and ')}.` : undefined,
    };
    if (isFragmentRequest(req)) return sendFragment(req, reply, reads, operationsRegion(view));
    return sendPage(req, reply, deps, reads, { title: 'Operations', section: 'operations', live, body: operationsPage(view) });
  });

  app.get('/operations/:id', { preHandler: session }, async (req, reply) => {
    const auth = req.auth!;
    const { id } = req.params as { id: string };
    const live = isFragmentRequest(req) ? '' : await liveUrl(req, deps, { operation: id });
    const operation = id.length <= 100 ? await deps.store.operations.getForTenant(auth.tenantId, id) : undefined;
    if (!operation) {
      const page = messagePage({ title: 'Operation not found', message: `There is no operation ${id} in tenant ${auth.tenantName}.`, link: { href: '/operations', text: 'All operations' } });
      return sendHtml(reply, page, 404);
    }
    const view: OperationView = {
      operation,
      events: await deps.store.operations.events(operation.id),
      agent: await deps.store.agents.getForTenant(auth.tenantId, operation.agent_id),
      governanceAgent: await governanceAgentOf(deps, auth.tenantId, operation),
      children: await deps.store.operations.childrenOf(operation.id),
      now: deps.clock.now(),
      csrf: req.uiSession!.csrf,
      canCancel: roleAtLeast(auth.role, 'operator'),
      answer: waitingPanel(operation, { csrf: req.uiSession!.csrf, canAnswer: roleAtLeast(auth.role, 'approver'), answersEnabled: Boolean(deps.answers), role: auth.role }),
      notice: noticeFrom(req),
    };
    if (isFragmentRequest(req)) return sendFragment(req, reply, reads, operationRegion(view));
    return sendPage(req, reply, deps, reads, {
      title: `${operation.type} ${operation.id.slice(0, 8)}`,
      section: 'operations',
      live,
      body: operationPage(view, `/operations/${operation.id}`),
    });
  });

  app.post('/operations/:id/cancel', { preHandler: [session, requireCsrf(), requireUiRole('operator')] }, async (req, reply) => {
    const auth = req.auth!;
    const { id } = req.params as { id: string };
    const form = (req.body ?? {}) as Record<string, unknown>;
    const reason = typeof form.reason === 'string' && form.reason.trim() !== '' ? form.reason.trim().slice(0, 1000) : undefined;
    try {
      const outcome = await deps.cancel.cancel({ tenantId: auth.tenantId, operationId: id, actor: auth.keyName, reason });
      return reply.code(303).header('location', `/operations/${encodeURIComponent(id)}?notice=${outcome.sellerCancel ? 'cancel_sent' : 'canceled'}`).send();
    } catch (err) {
      if (!(err instanceof EngineError)) throw err;
      const page = messagePage({ title: 'Not canceled', message: err.message, link: { href: `/operations/${encodeURIComponent(id)}`, text: 'Back to the operation' } });
      return sendHtml(reply, page, err.httpStatus);
    }
  });
}
