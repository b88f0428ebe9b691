/**
 * Several operation mutations in one go, inside a write transaction (SQLite's grouped
 * one, src/store/tx.ts, Batcher): what `OperationsRepo.mutateIn` does for one, done for
 * a group with one statement per table instead of one per mutation per table:
 *
 *   one SELECT of every row (… WHERE id IN), the plans run in queue order (a second
 *   mutation of the same operation sees the first one's row, as it would run after it),
 *   one UPDATE per set of changed columns (… FROM (VALUES …)), one INSERT of every
 *   event; the write hooks, for all the changes at once when a hook can (its `many`), else
 *   per change, as for one; one INSERT of every notification, in change order.
 *
 * The result of each is what `mutateIn` would have returned had they run one after
 * another in that order. Nothing is written before every plan has decided and the
 * caller's `alongside` has run (it sees every decided value, and throws to undo all).
 */
import type { DirectSqlite } from './direct.js';
import { paddedIds, placeholders, runSql, updateManyById, type SqlValue } from './multi-row.js';
import type { NotificationRow, NotificationsRepo } from './notifications-repo.js';
import type { EventRow, Lease, MutateResult, MutationPlan, NewEvent, OperationPatch, OperationRow } from './operations-repo.js';
import type { WriteHook } from './write-hooks.js';
import type { Tx } from './tx.js';

export interface BatchMutation<T> {
  id: string;
  lease: Lease | null;
  plan: (row: OperationRow) => MutationPlan<T>;
  now: number;
}

export interface BatchWriteDeps {
  direct: DirectSqlite | undefined;
  notifications: NotificationsRepo;
  hooks: readonly WriteHook[];
  /** The one-row UPDATE (for a patch holding a value that is no plain SQL value). */
  updateOne(trx: Tx, id: string, patch: OperationPatch): Promise<void>;
}

/** Decided values of a batch, per mutation; undefined where none was decided (not found, lease lost). */
export type BatchAlongside<T> = (trx: Tx, values: Array<T | undefined>) => Promise<void>;

const EVENT_COLUMNS = ['operation_id', 'tenant_id', 'at', 'source', 'kind', 'from_status', 'to_status', 'detail', 'actor'] as const;

interface Change<T> {
  index: number;
  row: OperationRow;
  events: NewEvent[];
  value: T;
  now: number;
}

/** The indexes of the first item of each operation id, in order (batchers leave the others to their own jobs). */
export function firstPerOperation(ids: readonly string[]): number[] {
  const seen = new Set<string>();
  return ids.flatMap((id, i) => {
    if (seen.has(id)) return [];
    seen.add(id);
    return [i];
  });
}

export async function mutateMany<T>(deps: BatchWriteDeps, trx: Tx, items: Array<BatchMutation<T>>, alongside?: BatchAlongside<T>): Promise<Array<MutateResult<T>>> {
  const stored = await readRows(deps.direct, trx, [...new Set(items.map((m) => m.id))]);
  const results: Array<MutateResult<T>> = new Array(items.length);
  const values: Array<T | undefined> = new Array(items.length);
  const changes: Array<Change<T>> = [];
  // Per operation: the row as the mutations so far left it, and the columns they set.
  const touched = new Map<string, { row: OperationRow; columns: Set<string> }>();
  items.forEach((m, index) => {
    const row = touched.get(m.id)?.row ?? stored.get(m.id);
    if (!row) {
      results[index] = { outcome: 'not_found' };
      return;
    }
    if (m.lease && (row.lease_owner !== m.lease.owner || row.lease_epoch !== m.lease.epoch)) {
      results[index] = { outcome: 'lease_lost', row };
      return;
    }
    const decided = m.plan(row);
    values[index] = decided.value;
    const events = decided.events ?? [];
    if (!decided.patch && events.length === 0) {
      results[index] = { outcome: 'unchanged', row, value: decided.value };
      return;
    }
    const patch: OperationPatch = { ...decided.patch, updated_at: m.now };
    const updated = { ...row, ...patch } as OperationRow;
    const t = touched.get(m.id) ?? { row, columns: new Set<string>() };
    // Only what differs from the stored row: setting an indexed column to its own value still rewrites its index entry.
    const before = stored.get(m.id) as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(patch)) if (v !== undefined && (v !== before[k] || t.columns.has(k))) t.columns.add(k);
    t.row = updated;
    touched.set(m.id, t);
    changes.push({ index, row: updated, events, value: decided.value, now: m.now });
  });
  if (alongside) await alongside(trx, values);
  if (changes.length === 0) return results;

  await writeRows(deps, trx, touched);
  const written = await insertEvents(deps.direct, trx, changes);
  // The hooks first (e.g. the buys completed creates make), then every notification in one
  // statement, each change's own and its hooks' together, in change order: their seqs then
  // run in the order the changes are published (see OperationWriteHookMany).
  const built = changes.map((c, i) => deps.notifications.rowsForEvents(c.row, written[i]!));
  const early: NotificationRow[][] = changes.map(() => []);
  // A hook sees only the changes that wrote events (as for one change: notify in operations-repo.ts).
  const eventful = changes.flatMap((c, i) => (written[i]!.length > 0 ? [i] : []));
  for (const hook of deps.hooks) {
    if (eventful.length === 0) break;
    if (hook.many) {
      const derived = await hook.many(
        trx,
        eventful.map((i) => ({ row: changes[i]!.row, events: written[i]!, now: changes[i]!.now })),
      );
      eventful.forEach((i, k) => {
        early[i]!.push(...derived[k]!.written);
        built[i]!.push(...derived[k]!.unwritten);
      });
      continue;
    }
    for (const i of eventful) early[i]!.push(...(await hook.one(trx, changes[i]!.row, written[i]!, changes[i]!.now)));
  }
  const inserted = await deps.notifications.insertManyIn(trx, built.flat());
  const notified: NotificationRow[][] = [];
  let next = 0;
  built.forEach((b, i) => {
    const all = [...early[i]!, ...inserted.slice(next, next + b.length)];
    next += b.length;
    notified.push(early[i]!.length > 0 ? all.sort((x, y) => x.seq - y.seq) : all);
  });
  changes.forEach((c, i) => {
    results[c.index] = { outcome: 'applied', row: c.row, value: c.value, events: written[i]!, notifications: notified[i]! };
  });
  return results;
}

async function readRows(direct: DirectSqlite | undefined, trx: Tx, ids: string[]): Promise<Map<string, OperationRow>> {
  const padded = paddedIds(ids);
  const { rows } = await runSql<OperationRow>(trx, direct, `SELECT * FROM operations WHERE id IN (${padded.map(() => '?').join(', ')})`, padded);
  return new Map(rows.map((r) => [r.id, r]));
}

/** The final row of every changed operation: one UPDATE per set of changed columns. */
async function writeRows(deps: BatchWriteDeps, trx: Tx, touched: Map<string, { row: OperationRow; columns: Set<string> }>): Promise<void> {
  const changes = [...touched].map(([id, { row, columns }]) => {
    const record = row as unknown as Record<string, unknown>;
    return { id, set: Object.fromEntries([...columns].map((c) => [c, record[c]])) };
  });
  await updateManyById(trx, deps.direct, 'operations', changes, (t, id, set) => deps.updateOne(t, id, set as OperationPatch));
}

/** Every change's events in one INSERT; per change, its rows as written (ids in insertion order). */
async function insertEvents<T>(direct: DirectSqlite | undefined, trx: Tx, changes: Array<Change<T>>): Promise<EventRow[][]> {
  const params: SqlValue[] = [];
  let count = 0;
  for (const c of changes) {
    for (const e of c.events) {
      params.push(c.row.id, c.row.tenant_id, e.at ?? c.now, e.source, e.kind, e.from ?? null, e.to ?? null, e.detail === undefined ? null : JSON.stringify(e.detail), e.actor ?? null);
      count++;
    }
  }
  if (count === 0) return changes.map(() => []);
  const { rows } = await runSql<EventRow>(trx, direct, `INSERT INTO operation_events (${EVENT_COLUMNS.join(', ')}) VALUES ${placeholders(count, EVENT_COLUMNS.length)} RETURNING *`, params);
  // New rowids are handed out in VALUES order; RETURNING's own order is not promised.
  rows.sort((a, b) => Number(a.id) - Number(b.id));
  let next = 0;
  return changes.map((c) => {
    const mine = rows.slice(next, next + c.events.length);
    next += c.events.length;
    return mine;
  });
}
