/**
 * Live media buys and their event history (migration 018).
 *
 * Like operations: every change goes through `mutateIn`, which reads the row
 * locked inside a write transaction, lets the caller decide, then writes the row,
 * its events and the notifications they raise together (an outbox). A change made
 * under a lease (the buy's timers, claimed like operations') is refused when the
 * lease has moved on.
 */
import type { Selectable } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { buyNotificationFor } from '../domain/media-buy-status.js';
import { mediaBuyNotificationBody, presentMediaBuy } from '../domain/media-buy-json.js';
import { CompiledQueries, isPrimitive, updateById } from './compiled.js';
import { claimDueRows, nextTimerAt } from './timer-claims.js';
import { updateBuysIn } from './media-buys-batch.js';
import { paddedIds, runSql } from './multi-row.js';
import type { Db } from './db.js';
import type { MediaBuysTable } from './schema.js';
import { inWriteTransaction, type Tx } from './tx.js';
import { newNotificationId, type NewNotification, type NotificationRow, type NotificationsRepo } from './notifications-repo.js';
import { eventColumns, type Lease, type NewEvent } from './operations-repo.js';

export type MediaBuyRow = Selectable<MediaBuysTable>;
export type MediaBuyPatch = Partial<Omit<MediaBuyRow, 'id' | 'tenant_id' | 'agent_id' | 'operation_id' | 'created_at'>>;

export interface BuyEventRow {
  id: number;
  buy_id: string;
  tenant_id: string;
  at: number;
  source: string;
  kind: string;
  from_status: string | null;
  to_status: string | null;
  detail: string | null;
  actor: string | null;
}

/** What the reporting receiver reads of the buy a URL names, before authenticating. */
export type ReportingTarget = Pick<MediaBuyRow, 'id' | 'tenant_id' | 'agent_id' | 'reporting_auth' | 'reporting_secret_enc'>;

/** A buy written with its events, its notifications built but not yet written (MediaBuysRepo.insertManyIn). */
export interface UnnotifiedBuy {
  row: MediaBuyRow;
  events: BuyEventRow[];
  unwritten: NewNotification[];
}

export interface BuyWritten {
  row: MediaBuyRow;
  events: BuyEventRow[];
  notifications: NotificationRow[];
}

export type BuyMutateResult<T> = ({ outcome: 'applied'; value: T } & BuyWritten) | { outcome: 'unchanged'; row: MediaBuyRow; value: T } | { outcome: 'lease_lost'; row: MediaBuyRow } | { outcome: 'not_found' };

export interface BuyPlan<T> {
  patch?: MediaBuyPatch;
  events?: NewEvent[];
  value: T;
}

export interface BuyListFilters {
  status?: string;
  agentId?: string;
  campaignId?: string;
  pacing?: string;
}

type EventValues = Omit<BuyEventRow, 'id'>;

function eventValues(row: Pick<MediaBuyRow, 'id' | 'tenant_id'>, e: NewEvent, now: number): EventValues {
  return { buy_id: row.id, tenant_id: row.tenant_id, ...eventColumns(e, now) };
}

export function newBuyId(): string {
  return `buy_${uuidv7()}`;
}

export class MediaBuysRepo {
  /** Fixed-shape statements (a buy's creation, its events, the reporting path's), compiled once (src/store/compiled.ts): their Kysely build was most of their cost. */
  private readonly compiled: CompiledQueries;

  constructor(
    private readonly db: Db,
    private readonly notifications: NotificationsRepo,
    private readonly options: { publicUrl?: string } = {},
  ) {
    this.compiled = new CompiledQueries(db.direct);
  }

  /** Inserts a new buy and its first events, unless its operation (or its seller id) already has one: then null. */
  async insertIn(trx: Tx, row: MediaBuyRow, events: NewEvent[]): Promise<BuyWritten | null> {
    if (!(await this.insertRow(trx, row))) return null;
    return { row, ...(await this.writeEvents(trx, row, events, row.created_at)) };
  }

  /** The buy's row alone; false when its operation (or its seller id) has one already. */
  private async insertRow(trx: Tx, row: MediaBuyRow): Promise<boolean> {
    const columns = Object.keys(row) as Array<keyof MediaBuyRow>;
    const values = columns.map((c) => row[c]);
    if (values.every(isPrimitive)) {
      const r = await this.compiled.execute(trx, `insert:${columns.join(',')}`, values, (p) =>
        trx
          .insertInto('media_buys')
          .values(Object.fromEntries(columns.map((c, i) => [c, p[i]])) as MediaBuyRow)
          .onConflict((oc) => oc.doNothing()),
      );
      return Number(r.numAffectedRows ?? 0) > 0;
    }
    const r = await trx.insertInto('media_buys').values(row).onConflict((oc) => oc.doNothing()).executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /**
   * `insertIn` for several buys at once (a batched write, SQLite: see
   * src/store/operations-batch.ts): one INSERT of the buys, one of all their events. Per
   * buy: what it wrote and the notifications its events raise, built but left for the
   * caller to write (the batch writes them with its changes' own); or null when the buy
   * existed already.
   */
  async insertManyIn(trx: Tx, buys: Array<{ row: MediaBuyRow; events: NewEvent[] }>): Promise<Array<UnnotifiedBuy | null>> {
    const columns = Object.keys(buys[0]!.row) as Array<keyof MediaBuyRow>;
    const sameShape = buys.every((b) => Object.keys(b.row).join() === columns.join() && columns.every((c) => isPrimitive(b.row[c])));
    const made = new Set<string>();
    if (buys.length === 1 || !sameShape) {
      for (const b of buys) if (await this.insertRow(trx, b.row)) made.add(b.row.id);
    } else {
      const { rows: inserted } = await this.compiled.execute(
        trx,
        `insertMany:${buys.length}:${columns.join(',')}`,
        buys.flatMap((b) => columns.map((c) => b.row[c] as string | number | null)),
        (p) =>
          trx
            .insertInto('media_buys')
            .values(buys.map((_, k) => Object.fromEntries(columns.map((c, i) => [c, p[k * columns.length + i]])) as MediaBuyRow))
            .onConflict((oc) => oc.doNothing())
            .returning('id'),
      );
      for (const r of inserted) made.add(r.id);
    }
    const kept = buys.filter((b) => made.has(b.row.id));
    const events = kept.flatMap((b) => b.events.map((e) => eventValues(b.row, e, b.row.created_at)));
    const { rows } = events.length === 0 ? { rows: [] as BuyEventRow[] } : await this.insertEventRows(trx, events);
    rows.sort((a, b) => a.id - b.id);
    const out = new Map<string, UnnotifiedBuy>();
    let next = 0;
    for (const b of kept) {
      const written = rows.slice(next, next + b.events.length);
      next += b.events.length;
      out.set(b.row.id, { row: b.row, events: written, unwritten: this.notificationRows(b.row, written) });
    }
    return buys.map((b) => out.get(b.row.id) ?? null);
  }

  async get(id: string): Promise<MediaBuyRow | undefined> {
    return this.db.kysely.selectFrom('media_buys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async getForTenant(tenantId: string, id: string): Promise<MediaBuyRow | undefined> {
    return this.db.kysely.selectFrom('media_buys').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  }

  /** The buy a create_media_buy operation made, read on `conn` (a transaction in progress may pass its own). */
  async byOperation(operationId: string, conn: Tx = this.db.kysely): Promise<MediaBuyRow | undefined> {
    return conn.selectFrom('media_buys').selectAll().where('operation_id', '=', operationId).executeTakeFirst();
  }

  /** The buys of several operations in one query (a page of campaigns' buys, a list of operations). */
  async byOperations(operationIds: readonly string[]): Promise<MediaBuyRow[]> {
    if (operationIds.length === 0) return [];
    return this.db.kysely.selectFrom('media_buys').selectAll().where('operation_id', 'in', [...operationIds]).execute();
  }

  /** A seller's buy among one tenant's buys with that agent: what a report row may name. */
  async bySellerIdIn(trx: Tx, tenantId: string, agentId: string, mediaBuyId: string): Promise<MediaBuyRow | undefined> {
    const { rows } = await this.compiled.execute(trx, 'bySellerId', [agentId, mediaBuyId, tenantId], ([a, m, t]) =>
      trx.selectFrom('media_buys').selectAll().where('agent_id', '=', a).where('media_buy_id', '=', m).where('tenant_id', '=', t),
    );
    return rows[0];
  }

  /**
   * `bySellerIdIn` for several seller ids of one agent at once (the batched fires): one
   * statement on the unique (agent_id, media_buy_id) index. Keyed by media_buy_id; only the
   * tenant's buys.
   */
  async bySellerIdsIn(trx: Tx, tenantId: string, agentId: string, mediaBuyIds: readonly string[]): Promise<Map<string, MediaBuyRow>> {
    const out = new Map<string, MediaBuyRow>();
    const unique = [...new Set(mediaBuyIds)];
    if (unique.length === 0) return out;
    // Padded (src/store/multi-row.ts): few distinct statements to prepare.
    const ids = paddedIds(unique);
    const { rows } = await runSql<MediaBuyRow>(
      trx,
      this.db.direct,
      `SELECT * FROM media_buys WHERE agent_id = ? AND media_buy_id IN (${ids.map(() => '?').join(', ')})`,
      [agentId, ...ids],
    );
    for (const r of rows) if (r.tenant_id === tenantId) out.set(r.media_buy_id, r);
    return out;
  }

  /**
   * The writes of `mutateIn` for several changes decided already, one per buy (the batched
   * fires, SQLite: src/store/media-buys-batch.ts): one UPDATE per set of changed columns, one
   * INSERT of every event, one of every notification, in change order.
   */
  async writeChangesIn<T>(trx: Tx, changes: Array<{ row: MediaBuyRow; plan: BuyPlan<T>; now: number }>): Promise<Array<BuyMutateResult<T>>> {
    const patched = changes.map((c) => ({ before: c.row, patch: { ...c.plan.patch, updated_at: c.now } as MediaBuyPatch }));
    await updateBuysIn(this.db.direct, trx, patched, (t, id, patch) => updateById(this.compiled, t, 'media_buys', id, patch));
    const rows = patched.map((p) => ({ ...p.before, ...p.patch }) as MediaBuyRow);
    const values = changes.flatMap((c, i) => (c.plan.events ?? []).map((e) => eventValues(rows[i]!, e, c.now)));
    const { rows: written } = values.length === 0 ? { rows: [] as BuyEventRow[] } : await this.insertEventRows(trx, values);
    // New rowids are handed out in VALUES order; RETURNING's own order is not promised.
    written.sort((a, b) => a.id - b.id);
    let next = 0;
    const events = changes.map((c) => {
      const mine = written.slice(next, next + (c.plan.events ?? []).length);
      next += mine.length;
      return mine;
    });
    const built = rows.map((row, i) => this.notificationRows(row, events[i]!));
    const inserted = await this.notifications.insertManyIn(trx, built.flat());
    next = 0;
    return changes.map((c, i) => {
      const notifications = inserted.slice(next, next + built[i]!.length);
      next += built[i]!.length;
      return { outcome: 'applied', value: c.plan.value, row: rows[i]!, events: events[i]!, notifications };
    });
  }

  async reportingTarget(token: string): Promise<ReportingTarget | undefined> {
    const { rows } = await this.compiled.execute(this.db.kysely, 'reportingTarget', [token], ([p]) =>
      this.db.kysely.selectFrom('media_buys').select(['id', 'tenant_id', 'agent_id', 'reporting_auth', 'reporting_secret_enc']).where('reporting_token', '=', p),
    );
    return rows[0];
  }

  async events(buyId: string): Promise<BuyEventRow[]> {
    return this.db.kysely.selectFrom('media_buy_events').selectAll().where('buy_id', '=', buyId).orderBy('id').execute();
  }

  /** The status the buy had when it last changed to `status` (null: never, or it began so). */
  async statusBeforeIn(trx: Tx, buyId: string, status: string): Promise<string | null> {
    const row = await trx
      .selectFrom('media_buy_events')
      .select('from_status')
      .where('buy_id', '=', buyId)
      .where('kind', '=', 'status_changed')
      .where('to_status', '=', status)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.from_status ?? null;
  }

  /** Newest first, keyset-paginated on (created_at, id). */
  async list(tenantId: string, filters: BuyListFilters, limit: number, cursor?: { createdAt: number; id: string }): Promise<MediaBuyRow[]> {
    let q = this.db.kysely.selectFrom('media_buys').selectAll().where('tenant_id', '=', tenantId);
    if (filters.status) q = q.where('status', '=', filters.status);
    if (filters.agentId) q = q.where('agent_id', '=', filters.agentId);
    if (filters.campaignId) q = q.where('campaign_id', '=', filters.campaignId);
    if (filters.pacing) q = q.where('pacing_state', '=', filters.pacing);
    if (cursor) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(cursor.createdAt, cursor.id)));
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /**
   * What the buys of each campaign delivered so far (a campaign's page shows it beside planned and
   * committed), in one query on the campaign index; campaigns without a buy are absent.
   */
  async deliveredByCampaigns(campaignIds: readonly string[]): Promise<Map<string, { spend: number; impressions: number; buys: number }>> {
    const out = new Map<string, { spend: number; impressions: number; buys: number }>();
    if (campaignIds.length === 0) return out;
    const rows = await this.db.kysely
      .selectFrom('media_buys')
      .select(['campaign_id', (eb) => eb.fn.sum<number>('spend').as('spend'), (eb) => eb.fn.sum<number>('impressions').as('impressions'), (eb) => eb.fn.countAll<number>().as('buys')])
      .where('campaign_id', 'in', [...campaignIds])
      .groupBy('campaign_id')
      .execute();
    for (const r of rows) if (r.campaign_id) out.set(r.campaign_id, { spend: Math.round(Number(r.spend) * 10_000) / 10_000, impressions: Number(r.impressions), buys: Number(r.buys) });
    return out;
  }

  /** Buys by status for the gauge: counts per status (from the database, so any instance is right). */
  async countByStatus(): Promise<Array<{ status: string; n: number }>> {
    const rows = await this.db.kysely
      .selectFrom('media_buys')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
  }

  /** Claims up to `limit` buys whose timer is due, leased, in one statement (src/store/timer-claims.ts). */
  async claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<MediaBuyRow[]> {
    return claimDueRows<MediaBuyRow>(this.db, 'media_buys', owner, now, leaseMs, limit);
  }

  /** Earliest timer among unleased buys (the tracker sleeps until then). */
  async nextDueAt(now: number): Promise<number | null> {
    return nextTimerAt(this.db, 'media_buys', now);
  }

  /** `mutateIn` in a write transaction of its own. */
  async mutate<T>(id: string, lease: Lease | null, plan: (row: MediaBuyRow, trx: Tx) => Promise<BuyPlan<T>> | BuyPlan<T>, now = Date.now()): Promise<BuyMutateResult<T>> {
    return inWriteTransaction(this.db, (trx) => this.mutateIn(trx, id, lease, plan, now));
  }

  /**
   * Reads the buy locked, lets `plan` decide (it may read more on `trx`, and write
   * other rows of the change there, such as a report), then writes the patch, the
   * events and their notifications. Only database calls on `trx` are awaited.
   */
  async mutateIn<T>(trx: Tx, id: string, lease: Lease | null, plan: (row: MediaBuyRow, trx: Tx) => Promise<BuyPlan<T>> | BuyPlan<T>, now = Date.now()): Promise<BuyMutateResult<T>> {
    const { rows } = await this.compiled.execute(trx, 'getLocked', [id], ([p]) => {
      const q = trx.selectFrom('media_buys').selectAll().where('id', '=', p);
      return this.db.dialect === 'postgres' ? q.forUpdate() : q;
    });
    const row = rows[0];
    if (!row) return { outcome: 'not_found' };
    if (lease && (row.lease_owner !== lease.owner || row.lease_epoch !== lease.epoch)) return { outcome: 'lease_lost', row };
    const decided = await plan(row, trx);
    const events = decided.events ?? [];
    if (!decided.patch && events.length === 0) return { outcome: 'unchanged', row, value: decided.value };
    const patch: MediaBuyPatch = { ...decided.patch, updated_at: now };
    await updateById(this.compiled, trx, 'media_buys', id, patch);
    const updated = { ...row, ...patch } as MediaBuyRow;
    return { outcome: 'applied', value: decided.value, row: updated, ...(await this.writeEvents(trx, updated, events, now)) };
  }

  private async writeEvents(trx: Tx, row: MediaBuyRow, events: NewEvent[], now: number): Promise<{ events: BuyEventRow[]; notifications: NotificationRow[] }> {
    if (events.length === 0) return { events: [], notifications: [] };
    const { rows } = await this.insertEventRows(
      trx,
      events.map((e) => eventValues(row, e, now)),
    );
    const written = rows;
    written.sort((a, b) => a.id - b.id);
    return { events: written, notifications: await this.notificationsFor(trx, row, written) };
  }

  /** Buy events in one statement, compiled once per number of rows. */
  private insertEventRows(trx: Tx, values: EventValues[]) {
    const params = values.flatMap((v) => [v.buy_id, v.tenant_id, v.at, v.source, v.kind, v.from_status, v.to_status, v.detail, v.actor]);
    return this.compiled.execute(trx, `events:${values.length}`, params, (p) =>
      trx
        .insertInto('media_buy_events')
        .values(
          values.map((_, i) => ({
            buy_id: p[9 * i],
            tenant_id: p[9 * i + 1],
            at: p[9 * i + 2],
            source: p[9 * i + 3],
            kind: p[9 * i + 4],
            from_status: p[9 * i + 5],
            to_status: p[9 * i + 6],
            detail: p[9 * i + 7],
            actor: p[9 * i + 8],
          })),
        )
        .returningAll(),
    ) as Promise<{ rows: BuyEventRow[] }>;
  }

  /** The notifications the buy's events raise (src/domain/media-buy-status.ts), in the change's transaction. */
  private async notificationsFor(trx: Tx, row: MediaBuyRow, events: BuyEventRow[]): Promise<NotificationRow[]> {
    const rows = this.notificationRows(row, events);
    return rows.length === 0 ? [] : this.notifications.insertIn(trx, rows);
  }

  /** Those notifications, built but not written. */
  private notificationRows(row: MediaBuyRow, events: BuyEventRow[]): NewNotification[] {
    const typed = events.flatMap((event) => {
      const type = buyNotificationFor({ ...event, detail: event.detail === null ? undefined : JSON.parse(event.detail) });
      return type ? [{ event, type }] : [];
    });
    if (typed.length === 0) return [];
    const buy = presentMediaBuy(row);
    return typed.map(({ event, type }) => {
      const id = newNotificationId();
      const body = mediaBuyNotificationBody({ id, type, tenantId: row.tenant_id, createdAt: event.at, buy, event, publicUrl: this.options.publicUrl });
      // The buy's id in the subject column: a subscriber gets one buy's notifications in order (as an
      // operation's), and live pages showing the buy re-read on it; the operation's own stay its own.
      return { id, tenant_id: row.tenant_id, type, operation_id: row.id, created_at: event.at, body: JSON.stringify(body) };
    });
  }
}
