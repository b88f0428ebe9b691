/**
 * Operations and their event history: the durable heart of the orchestrator.
 *
 * Every change goes through `mutate`, which reads the row inside a write
 * transaction (locked), lets the caller decide, then writes the row and its
 * events together. Work claimed by the scheduler carries a lease; a mutation
 * made under a lease is refused when the lease has moved on, so a worker that
 * lost its lease (slow, paused, presumed dead) changes nothing.
 *
 * The notifications a change raises (docs/ARCHITECTURE.md, Telling users) are written in the same
 * transaction, derived from the events written: a change is never committed
 * without its notification, nor a notification without its change.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from './db.js';
import type { OperationsTable } from './schema.js';
import { inWriteBatch, inWriteTransaction, type Batcher, type Tx } from './tx.js';
import { CompiledQueries, insertOperationRow, updateById } from './compiled.js';
import { claimDueRows, nextTimerAt } from './timer-claims.js';
import { firstPerOperation, mutateMany, type BatchAlongside, type BatchMutation, type BatchWriteDeps } from './operations-batch.js';
import type { OperationWriteHook, OperationWriteHookMany, WriteHook } from './write-hooks.js';
import type { NotificationRow, NotificationsRepo } from './notifications-repo.js';

/** Columns added after the first schema are optional here, so code that builds rows need not know them all. */
type LaterColumns = 'status_since' | 'reminded_at' | 'input_request' | 'continuation' | 'answer' | 'input_reminders' | 'input_expired_at' | 'governance' | 'reporting_token' | 'unresolved_completion_at';
export type OperationRow = Omit<Selectable<OperationsTable>, LaterColumns> & Partial<Pick<Selectable<OperationsTable>, LaterColumns>>;
/** The columns of an operation the webhook path reads before authenticating (findWebhookTarget). */
export type WebhookTarget = Pick<OperationRow, 'id' | 'agent_id' | 'type' | 'task_id' | 'webhook_mode' | 'webhook_secret_enc'>;
export type OperationPatch = Partial<Omit<OperationRow, 'id' | 'tenant_id' | 'agent_id' | 'created_at'>>;

export interface NewEvent {
  source: string;
  kind: string;
  from?: string | null;
  to?: string | null;
  detail?: unknown;
  at?: number;
  /** The key name of the person who caused it (see actorOf in src/api/auth.ts). */
  actor?: string;
}

/** An event's history columns, the same for an operation's and a buy's (each adds the id of what it belongs to). */
export function eventColumns(e: NewEvent, now: number) {
  return {
    at: e.at ?? now,
    source: e.source,
    kind: e.kind,
    from_status: e.from ?? null,
    to_status: e.to ?? null,
    detail: e.detail === undefined ? null : JSON.stringify(e.detail),
    actor: e.actor ?? null,
  };
}

export interface EventRow {
  id: number;
  operation_id: string;
  tenant_id: string;
  at: number;
  source: string;
  kind: string;
  from_status: string | null;
  to_status: string | null;
  detail: string | null;
  actor: string | null;
}

export interface Lease {
  owner: string;
  epoch: number;
}

export type MutateResult<T> =
  | { outcome: 'applied'; row: OperationRow; value: T; events: EventRow[]; notifications: NotificationRow[] }
  | { outcome: 'unchanged'; row: OperationRow; value: T }
  | { outcome: 'lease_lost'; row: OperationRow }
  | { outcome: 'not_found' };

/** What a mutation decides: a patch and events to write, or nothing, plus a value for the caller. */
export interface MutationPlan<T> {
  patch?: OperationPatch;
  events?: NewEvent[];
  value: T;
}

/**
 * More writes that must commit with a mutation (e.g. storing the webhook delivery it
 * applies), run after `plan` decided and before anything is written. Answering
 * 'abandon' writes nothing of the mutation, which then reports itself `unchanged`
 * (e.g. the delivery turned out to be a duplicate).
 */
export type Alongside<T> = (trx: Tx, value: T) => Promise<void | 'abandon'>;

/** What a committed write added to the history, and the notifications it raised. */
export interface Written {
  events: EventRow[];
  notifications: NotificationRow[];
}

export type { OperationWriteHook, OperationWriteHookMany, WriteHook } from './write-hooks.js';

export interface ListFilters {
  status?: string;
  type?: string;
  agentId?: string;
  needsInput?: boolean;
  stalled?: boolean;
}

export class OperationsRepo {
  /** The hot statements (webhook and poll paths), compiled once. */
  private readonly compiled: CompiledQueries;

  private readonly hooks: WriteHook[] = [];

  constructor(
    private readonly db: Db,
    private readonly notifications: NotificationsRepo,
  ) {
    this.compiled = new CompiledQueries(db.direct);
    this.batchDeps = { direct: db.direct, notifications, hooks: this.hooks, updateOne: (trx, id, patch) => updateById(this.compiled, trx, 'operations', id, patch) };
  }

  private readonly batchDeps: BatchWriteDeps;

  /**
   * `mutate`s queued in the same turn, written together by their grouped transaction
   * (SQLite). A second one of the same operation is left to its own job: a write hook may
   * have written that operation again (src/store/write-hooks.ts), which only a read after
   * the batch sees.
   */
  private readonly batcher: Batcher<BatchMutation<unknown>, MutateResult<unknown>> = {
    run: async (trx, items) => {
      const firsts = firstPerOperation(items.map((m) => m.id));
      const results = await this.mutateManyIn(
        trx,
        firsts.map((i) => items[i]!),
      );
      const out: Array<{ value: MutateResult<unknown> } | undefined> = new Array(items.length).fill(undefined);
      firsts.forEach((i, k) => (out[i] = { value: results[k]! }));
      return out;
    },
  };

  /** Registers writes derived from every operation change (see OperationWriteHook). */
  addWriteHook(hook: OperationWriteHook, many?: OperationWriteHookMany): void {
    this.hooks.push({ one: hook, many });
  }

  /** The change's own notifications, then what the hooks wrote. */
  private async notify(trx: Tx, row: OperationRow, events: EventRow[], now: number): Promise<NotificationRow[]> {
    const own = await this.notifications.insertForEvents(trx, row, events);
    if (this.hooks.length === 0 || events.length === 0) return own;
    let all = own;
    for (const hook of this.hooks) {
      const derived = await hook.one(trx, row, events, now);
      if (derived.length > 0) all = [...all, ...derived];
    }
    return all;
  }

  async insert(row: OperationRow, events: NewEvent | NewEvent[]): Promise<Written> {
    return inWriteTransaction(this.db, (trx) => this.insertIn(trx, row, events));
  }

  /** `insert` inside a write transaction the caller holds (e.g. a child operation and its superseded parent in one commit). */
  async insertIn(trx: Tx, row: OperationRow, events: NewEvent | NewEvent[]): Promise<Written> {
    await insertOperationRow(this.compiled, trx, row as unknown as Record<string, unknown>);
    const written = await this.insertEvents(trx, row, Array.isArray(events) ? events : [events], row.created_at);
    return { events: written, notifications: await this.notify(trx, row, written, row.created_at) };
  }

  async get(id: string): Promise<OperationRow | undefined> {
    const { rows } = await this.compiled.execute(this.db.kysely, 'get', [id], ([p]) =>
      this.db.kysely.selectFrom('operations').selectAll().where('id', '=', p),
    );
    return rows[0];
  }

  async getForTenant(tenantId: string, id: string): Promise<OperationRow | undefined> {
    return this.db.kysely.selectFrom('operations').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  }

  /**
   * What the webhook path needs of the operation a URL names, and no more: the
   * full row carries the request and result texts, and decoding them for every
   * delivery showed in the profile.
   */
  async findWebhookTarget(token: string): Promise<WebhookTarget | undefined> {
    const { rows } = await this.compiled.execute(this.db.kysely, 'targetByToken', [token], ([p]) =>
      this.db.kysely.selectFrom('operations').select(['id', 'agent_id', 'type', 'task_id', 'webhook_mode', 'webhook_secret_enc']).where('webhook_token', '=', p),
    );
    return rows[0];
  }

  async findByWebhookToken(token: string): Promise<OperationRow | undefined> {
    const { rows } = await this.compiled.execute(this.db.kysely, 'byToken', [token], ([p]) =>
      this.db.kysely.selectFrom('operations').selectAll().where('webhook_token', '=', p),
    );
    return rows[0];
  }

  async findByIdempotencyKey(agentId: string, idempotencyKey: string): Promise<OperationRow | undefined> {
    return this.db.kysely
      .selectFrom('operations')
      .selectAll()
      .where('agent_id', '=', agentId)
      .where('idempotency_key', '=', idempotencyKey)
      .executeTakeFirst();
  }

  async findByTask(agentId: string, taskId: string): Promise<OperationRow | undefined> {
    return this.db.kysely.selectFrom('operations').selectAll().where('agent_id', '=', agentId).where('task_id', '=', taskId).executeTakeFirst();
  }

  async events(operationId: string): Promise<EventRow[]> {
    return this.db.kysely.selectFrom('operation_events').selectAll().where('operation_id', '=', operationId).orderBy('id').execute();
  }

  /**
   * The events that started a `submitted` or `input-required` status, oldest first: all
   * the duration metrics need of an operation's history (read after a terminal or an
   * answer), without decoding every event's detail.
   */
  async statusMarks(operationId: string): Promise<Array<Pick<EventRow, 'id' | 'at' | 'to_status'>>> {
    const { rows } = await this.compiled.execute(this.db.kysely, 'statusMarks', [operationId, 'submitted', 'input-required'], ([id, a, b]) =>
      this.db.kysely.selectFrom('operation_events').select(['id', 'at', 'to_status']).where('operation_id', '=', id).where('to_status', 'in', [a, b]).orderBy('id'),
    );
    return rows;
  }

  /** Operations started on behalf of this one (corrections, cancels, governed steps), oldest first. */
  async childrenOf(parentId: string): Promise<OperationRow[]> {
    return this.db.kysely.selectFrom('operations').selectAll().where('parent_id', '=', parentId).orderBy('created_at').orderBy('id').execute();
  }

  /**
   * The children of several parents in one query (a page of campaigns and their buys,
   * instead of one query per campaign), on the operations_parent index, oldest first.
   */
  async childrenOfMany(parentIds: readonly string[]): Promise<OperationRow[]> {
    if (parentIds.length === 0) return [];
    return this.db.kysely.selectFrom('operations').selectAll().where('parent_id', 'in', [...parentIds]).orderBy('created_at').orderBy('id').execute();
  }

  /** Newest first, keyset-paginated on (created_at, id). */
  async list(tenantId: string, filters: ListFilters, limit: number, cursor?: { createdAt: number; id: string }): Promise<OperationRow[]> {
    let q = this.db.kysely.selectFrom('operations').selectAll().where('tenant_id', '=', tenantId);
    if (filters.status) q = q.where('status', '=', filters.status);
    if (filters.type) q = q.where('type', '=', filters.type);
    if (filters.agentId) q = q.where('agent_id', '=', filters.agentId);
    if (filters.needsInput !== undefined) q = q.where('needs_input', '=', filters.needsInput ? 1 : 0);
    if (filters.stalled !== undefined) q = q.where('stalled', '=', filters.stalled ? 1 : 0);
    if (cursor) {
      // A row-value comparison, which both SQLite and PostgreSQL seek to on the (tenant_id,
      // created_at, id) index; the equivalent OR of two conditions makes SQLite scan from the
      // newest row down to the cursor, so deep pages got slower the deeper they were.
      q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(cursor.createdAt, cursor.id)));
    }
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /** Claims up to `limit` due operations in one statement, leased (src/store/timer-claims.ts). */
  async claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<OperationRow[]> {
    return claimDueRows<OperationRow>(this.db, 'operations', owner, now, leaseMs, limit);
  }

  /** Claims one operation now, whatever its timer says, unless someone else holds a live lease. */
  async claimOne(id: string, owner: string, now: number, leaseMs: number): Promise<OperationRow | undefined> {
    const claim = async (conn: Tx) => {
      const { rows } = await sql<OperationRow>`
        UPDATE operations
        SET lease_owner = ${owner}, lease_until = ${now + leaseMs}, attempt = attempt + 1, lease_epoch = lease_epoch + 1
        WHERE id = ${id} AND next_check_at IS NOT NULL AND (lease_until IS NULL OR lease_until <= ${now})
        RETURNING *`.execute(conn);
      return rows[0];
    };
    // SQLite: a write job, so it shares a grouped commit; PostgreSQL: one autocommit statement.
    return this.db.dialect === 'sqlite' ? inWriteTransaction(this.db, claim) : claim(this.db.kysely);
  }

  /** Earliest timer among unleased rows, so the scheduler can sleep until then (leased rows come back within a tick). */
  async nextDueAt(now: number): Promise<number | null> {
    return nextTimerAt(this.db, 'operations', now);
  }

  /**
   * Reads the row locked, lets `plan` decide, writes the patch and events together.
   * With a lease, nothing is written unless that lease is still the current one.
   * On SQLite the write is group-committed with others queued in the same turn
   * (src/store/tx.ts); the promise settles after the COMMIT.
   */
  async mutate<T>(
    id: string,
    lease: Lease | null,
    plan: (row: OperationRow) => MutationPlan<T>,
    now = Date.now(),
    /** More writes that must commit with this one (see Alongside). */
    alongside?: Alongside<T>,
  ): Promise<MutateResult<T>> {
    const own = (trx: Tx) => this.mutateIn(trx, id, lease, plan, now, alongside);
    if (alongside) return inWriteTransaction(this.db, own);
    return inWriteBatch(this.db, this.batcher as Batcher<BatchMutation<T>, MutateResult<T>>, { id, lease, plan, now }, own);
  }

  /**
   * Several mutations inside a SQLite write transaction the caller holds, with one statement
   * per table for all of them (src/store/operations-batch.ts); each result is what `mutateIn`
   * would have returned had they run one after another, in this order.
   */
  mutateManyIn<T>(trx: Tx, items: Array<BatchMutation<T>>, alongside?: BatchAlongside<T>): Promise<Array<MutateResult<T>>> {
    // Its rows are read without FOR UPDATE: safe only under SQLite's write lock (a grouped transaction).
    if (this.db.dialect !== 'sqlite') throw new Error('mutateManyIn is for SQLite write transactions only');
    return mutateMany(this.batchDeps, trx, items, alongside);
  }

  /**
   * `mutate` inside a write transaction the caller already holds (see inWriteTransaction):
   * only database calls on `trx` are awaited, and `plan` and `alongside` must keep it so.
   */
  async mutateIn<T>(
    trx: Tx,
    id: string,
    lease: Lease | null,
    plan: (row: OperationRow) => MutationPlan<T>,
    now = Date.now(),
    alongside?: Alongside<T>,
  ): Promise<MutateResult<T>> {
    const { rows } = await this.compiled.execute(trx, 'getLocked', [id], ([p]) => {
      const q = trx.selectFrom('operations').selectAll().where('id', '=', p);
      return this.db.dialect === 'postgres' ? q.forUpdate() : q;
    });
    const row = rows[0];
    if (!row) return { outcome: 'not_found' as const };
    if (lease && (row.lease_owner !== lease.owner || row.lease_epoch !== lease.epoch)) {
      return { outcome: 'lease_lost' as const, row };
    }
    const decided = plan(row);
    const events = decided.events ?? [];
    const abandoned = alongside ? (await alongside(trx, decided.value)) === 'abandon' : false;
    if (abandoned || (!decided.patch && events.length === 0)) return { outcome: 'unchanged' as const, row, value: decided.value };
    const patch: OperationPatch = { ...decided.patch, updated_at: now };
    await updateById(this.compiled, trx, 'operations', id, patch);
    const updated = { ...row, ...patch } as OperationRow;
    const written = await this.insertEvents(trx, updated, events, now);
    const notifications = await this.notify(trx, updated, written, now);
    return { outcome: 'applied' as const, row: updated, value: decided.value, events: written, notifications };
  }

  private async insertEvents(trx: Tx, row: OperationRow, events: NewEvent[], now = Date.now()): Promise<EventRow[]> {
    if (events.length === 0) return [];
    const values = events.map((e) => ({ operation_id: row.id, tenant_id: row.tenant_id, ...eventColumns(e, now) }));
    if (values.length !== 1) return trx.insertInto('operation_events').values(values).returningAll().execute();
    const v = values[0]!;
    const { rows } = await this.compiled.execute(
      trx,
      'insertEvent',
      [v.operation_id, v.tenant_id, v.at, v.source, v.kind, v.from_status, v.to_status, v.detail, v.actor],
      (p) =>
        trx
          .insertInto('operation_events')
          .values({ operation_id: p[0], tenant_id: p[1], at: p[2], source: p[3], kind: p[4], from_status: p[5], to_status: p[6], detail: p[7], actor: p[8] })
          .returningAll(),
    );
    return rows as EventRow[];
  }
}
