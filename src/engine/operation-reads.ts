/**
 * Reading a tenant's operations as the API shows them (GET /v1/operations[/:id]) and the
 * MCP tools and resources show the same JSON: one listing with its keyset cursor, one
 * single-operation read with its events. Another tenant's operation is "not found".
 */
import { presentOperation, type OperationJson } from '../domain/operation-json.js';
import type { OperationStatus } from '../domain/status.js';
import type { EventRow, OperationRow, Store } from '../store/index.js';
import { EngineError } from './errors.js';
import { decodeCursor, encodeCursor } from './page-cursor.js';

export interface OperationQuery {
  status?: OperationStatus;
  type?: string;
  agentId?: string;
  needsInput?: boolean;
  stalled?: boolean;
  limit: number;
  /** A `next_cursor` this listing returned. */
  cursor?: string;
}

export interface OperationPage {
  operations: OperationJson[];
  next_cursor: string | null;
}

/** Newest first, `limit` at a time. */
export async function listOperations(store: Store, tenantId: string, q: OperationQuery): Promise<OperationPage> {
  const rows = await store.operations.list(
    tenantId,
    { status: q.status, type: q.type, agentId: q.agentId, needsInput: q.needsInput, stalled: q.stalled },
    q.limit + 1,
    q.cursor ? decodeCursor(q.cursor) : undefined,
  );
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    operations: page.map((o) => presentOperation(o)),
    next_cursor: rows.length > q.limit && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
  };
}

/** The tenant's operation row with its whole history of events, for presenters that splice large stored fields. */
export async function operationWithEvents(store: Store, tenantId: string, id: string): Promise<{ row: OperationRow; events: EventRow[] }> {
  const row = await store.operations.getForTenant(tenantId, id);
  if (!row) throw new EngineError('operation_not_found', `operation ${id} not found`, 404);
  return { row, events: await store.operations.events(row.id) };
}

/** The operation with its whole history of events. */
export async function showOperation(store: Store, tenantId: string, id: string): Promise<OperationJson> {
  const { row, events } = await operationWithEvents(store, tenantId, id);
  return presentOperation(row, events);
}
