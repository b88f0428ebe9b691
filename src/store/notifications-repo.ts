/**
 * The notifications outbox (docs/ARCHITECTURE.md, Telling users). Rows are written inside the
 * transaction of the change they report — by the operations repo from the
 * events it writes, or by other code with `insertIn` — so a change and its
 * notification commit or roll back together. Readers page by `seq`.
 */
import { v7 as uuidv7 } from 'uuid';
import { randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import { notificationBody, type BodyOperationSource } from '../domain/notification-body.js';
import { notificationTypeFor, type NotificationType } from '../domain/notification-types.js';
import { presentOperation, SUMMARY_FIELD_MAX_BYTES, type EventJsonSource } from '../domain/operation-json.js';
import { CompiledQueries } from './compiled.js';
import type { Db } from './db.js';
import type { NotificationsTable } from './schema.js';
import type { Tx } from './tx.js';

export type NotificationRow = Selectable<NotificationsTable>;
export type NewNotification = Omit<NotificationRow, 'seq'>;

export interface NotificationsOptions {
  /** ADCP_ORCH_PUBLIC_URL: notifications then link to the operation's page. */
  publicUrl?: string;
}

/** The event columns a notification body shows (an operation_events row). */
export type NotifiedEvent = EventJsonSource;

export function newNotificationId(): string {
  // Time-ordered (UUIDv7): appends to the id index instead of touching a random page (fewer pages per commit).
  return `ntf_${uuidv7()}`;
}

export class NotificationsRepo {
  private readonly compiled: CompiledQueries;

  constructor(
    private readonly db: Db,
    private readonly options: NotificationsOptions = {},
  ) {
    this.compiled = new CompiledQueries(db.direct);
  }

  /**
   * Writes notifications in the caller's transaction. On PostgreSQL readers rely on
   * every writer of a seq already holding a transaction id when it draws one (see
   * src/notify/event-horizon.ts), so one is taken first in case nothing was written yet.
   */
  async insertIn(trx: Tx, rows: NewNotification[]): Promise<NotificationRow[]> {
    if (rows.length === 0) return [];
    if (this.db.dialect === 'postgres') await sql`SELECT pg_current_xact_id()`.execute(trx);
    return this.write(trx, rows);
  }

  /**
   * The notifications the given events raise (src/domain/notification-types.ts), written
   * in `trx`, which has already written the operation row and the events. No reads: the
   * body is built from the row after the change and the events as inserted.
   */
  async insertForEvents(trx: Tx, row: BodyOperationSource & { tenant_id: string }, events: NotifiedEvent[]): Promise<NotificationRow[]> {
    const rows = this.rowsForEvents(row, events);
    return rows.length === 0 ? [] : this.write(trx, rows);
  }

  /** The notifications `insertForEvents` would write for these events, built but not written. */
  rowsForEvents(row: BodyOperationSource & { tenant_id: string }, events: NotifiedEvent[]): NewNotification[] {
    let typed: Array<{ event: NotifiedEvent; type: NotificationType }> | undefined;
    for (const event of events) {
      const type = notificationTypeFor(event);
      if (type) (typed ??= []).push({ event, type });
    }
    if (!typed) return [];
    // Bounded: a large request or result is a marker and a link, never a second copy (notification-body.ts).
    const operation = presentOperation(row, undefined, { maxFieldBytes: SUMMARY_FIELD_MAX_BYTES });
    return typed.map(({ event, type }): NewNotification => {
      const id = newNotificationId();
      const body = notificationBody({ id, type, tenantId: row.tenant_id, createdAt: event.at, operation, event, publicUrl: this.options.publicUrl }, row);
      return { id, tenant_id: row.tenant_id, type, operation_id: row.id, created_at: event.at, body: JSON.stringify(body) };
    });
  }

  /**
   * Writes the notifications of several changes at once (a batched write: see
   * src/store/operations-batch.ts) in one statement; returns them in the given order,
   * each with its seq.
   */
  async insertManyIn(trx: Tx, rows: NewNotification[]): Promise<NotificationRow[]> {
    if (rows.length === 0) return [];
    if (this.db.dialect === 'postgres') await sql`SELECT pg_current_xact_id()`.execute(trx);
    return this.write(trx, rows, false);
  }

  /** A tenant's notifications with seq > `afterSeq` (and ≤ `upToSeq` when given), oldest first. */
  async after(tenantId: string, afterSeq: number, limit: number, upToSeq?: number): Promise<NotificationRow[]> {
    let q = this.db.kysely.selectFrom('notifications').selectAll().where('tenant_id', '=', tenantId).where('seq', '>', afterSeq);
    if (upToSeq !== undefined) q = q.where('seq', '<=', upToSeq);
    return q.orderBy('seq').limit(limit).execute();
  }

  /** Every tenant's notifications with seq > `afterSeq` (and ≤ `upToSeq`), oldest first: for delivery to subscribers. */
  async bySeq(afterSeq: number, limit: number, upToSeq?: number): Promise<NotificationRow[]> {
    let q = this.db.kysely.selectFrom('notifications').selectAll().where('seq', '>', afterSeq);
    if (upToSeq !== undefined) q = q.where('seq', '<=', upToSeq);
    return q.orderBy('seq').limit(limit).execute();
  }

  async findById(tenantId: string, id: string): Promise<NotificationRow | undefined> {
    return this.db.kysely.selectFrom('notifications').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  }

  /** The highest seq written and committed so far (0 when there is none). */
  async maxSeq(): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('notifications')
      .select((eb) => eb.fn.max('seq').as('max'))
      .executeTakeFirst();
    return Number(row?.max ?? 0);
  }

  /** Inserts `rows` in one statement (compiled once per number of rows); by seq, or in the given order. */
  private async write(trx: Tx, rows: NewNotification[], sortBySeq = true): Promise<NotificationRow[]> {
    const params = rows.flatMap((r) => [r.id, r.tenant_id, r.type, r.operation_id, r.created_at, r.body]);
    const { rows: out } = await this.compiled.execute(trx, `insert:${rows.length}`, params, (p) =>
      trx
        .insertInto('notifications')
        .values(rows.map((_, i) => ({ id: p[6 * i], tenant_id: p[6 * i + 1], type: p[6 * i + 2], operation_id: p[6 * i + 3], created_at: p[6 * i + 4], body: p[6 * i + 5] })))
        .returning(['seq', 'id']),
    );
    // RETURNING order is not promised to follow VALUES order (SQLite says so): match by id.
    const seqOf = new Map(out.map((x) => [x.id, Number(x.seq)]));
    const written = rows.map((r) => ({ ...r, seq: seqOf.get(r.id)! }));
    return sortBySeq ? written.sort((a, b) => a.seq - b.seq) : written;
  }
}
