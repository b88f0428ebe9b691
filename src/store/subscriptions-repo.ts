/**
 * Subscriptions, their signing secrets, and the fan-out that turns outbox rows
 * (`notifications`, read by `seq`, never written here) into delivery rows.
 *
 * Fan-out is exactly-once per (subscription, notification) by construction: the
 * delivery insert is `ON CONFLICT DO NOTHING` on that pair, and each
 * subscription's `fanout_seq` only moves forward, in the same transaction as the
 * inserts. Any number of instances may fan out at once; the loser of a race
 * inserts nothing. Reads stop at the caller's horizon (on PostgreSQL, the seq
 * below which no in-flight transaction can still add a row), so a notification
 * committed late is never skipped.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import { CompiledQueries } from './compiled.js';
import type { Db } from './db.js';
import type { NotificationRow } from './notifications-repo.js';
import type { SubscriptionsTable } from './schema.js';
import { inWriteTransaction, type Tx } from './tx.js';

export type SubscriptionRow = Selectable<SubscriptionsTable>;
type OutboxEntry = Pick<NotificationRow, 'seq' | 'id' | 'tenant_id' | 'type' | 'operation_id'>;

export interface NewSubscription {
  tenantId: string;
  urlSealed: string;
  urlDisplay: string;
  events: string[] | null;
  format: 'standard' | 'slack';
  secretSealed: string;
  createdBy: string | null;
}

export interface ActiveSubscription {
  id: string;
  tenant_id: string;
  events: string | null;
  fanout_seq: number;
}

const FANOUT_PAGE = 500;

export class SubscriptionsRepo {
  private readonly compiled: CompiledQueries;

  constructor(private readonly db: Db) {
    this.compiled = new CompiledQueries(db.direct);
  }

  /** A new subscription receives notifications written after it: its cursor starts at the newest one. */
  async create(s: NewSubscription, now = Date.now()): Promise<SubscriptionRow> {
    return inWriteTransaction(this.db, async (trx) => {
      const max = await trx
        .selectFrom('notifications')
        .select((eb) => eb.fn.max('seq').as('max'))
        .executeTakeFirst();
      const row: SubscriptionRow = {
        id: `sub_${randomUUID()}`,
        tenant_id: s.tenantId,
        url_enc: s.urlSealed,
        url_display: s.urlDisplay,
        events: s.events ? JSON.stringify(s.events) : null,
        format: s.format,
        fanout_seq: Number(max?.max ?? 0),
        created_at: now,
        created_by: s.createdBy,
        disabled_at: null,
        disabled_reason: null,
        deleted_at: null,
        deleted_by: null,
      };
      await trx.insertInto('subscriptions').values(row).execute();
      await trx
        .insertInto('subscription_secrets')
        .values({ id: `whs_${randomUUID()}`, subscription_id: row.id, secret_enc: s.secretSealed, created_at: now, expires_at: null })
        .execute();
      return row;
    });
  }

  /** The tenant's subscriptions (deleted ones are gone), newest first. */
  async list(tenantId: string): Promise<SubscriptionRow[]> {
    return this.db.kysely
      .selectFrom('subscriptions')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  async get(tenantId: string, id: string): Promise<SubscriptionRow | undefined> {
    return this.db.kysely
      .selectFrom('subscriptions')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }

  /** Subscriptions by id whatever their state (the dispatcher's view). */
  async byIds(ids: string[]): Promise<SubscriptionRow[]> {
    if (ids.length === 0) return [];
    return this.db.kysely.selectFrom('subscriptions').selectAll().where('id', 'in', ids).execute();
  }

  /** Sealed secrets that sign now, newest first. */
  async activeSecrets(subscriptionIds: string[], now = Date.now()): Promise<Array<{ subscription_id: string; secret_enc: string }>> {
    if (subscriptionIds.length === 0) return [];
    return this.db.kysely
      .selectFrom('subscription_secrets')
      .select(['subscription_id', 'secret_enc'])
      .where('subscription_id', 'in', subscriptionIds)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('created_at', 'desc')
      .execute();
  }

  /** Soft delete (its deliveries stay readable in the database); what was still pending is failed. */
  async delete(tenantId: string, id: string, actor: string | null, now = Date.now()): Promise<boolean> {
    return inWriteTransaction(this.db, async (trx) => {
      const res = await trx
        .updateTable('subscriptions')
        .set({ deleted_at: now, deleted_by: actor })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return false;
      await failPendingIn(trx, id, 'the subscription was deleted', now);
      return true;
    });
  }

  /** Disables a subscription (410 Gone) inside the caller's transaction and fails its pending deliveries. */
  async disableIn(trx: Tx, id: string, reason: string, now: number): Promise<void> {
    await trx
      .updateTable('subscriptions')
      .set({ disabled_at: now, disabled_reason: reason })
      .where('id', '=', id)
      .where('disabled_at', 'is', null)
      .execute();
    await failPendingIn(trx, id, `the subscription was disabled: ${reason}`, now);
  }

  /**
   * Creates the delivery rows for notifications up to the horizon that match an
   * active subscription, a page at a time. The horizon is asked for only when
   * there is an active subscription (on PostgreSQL it costs queries). Returns how
   * many rows were created and how many subscriptions are active.
   */
  async fanOut(horizonOf: () => Promise<number>, now = Date.now(), pageSize = FANOUT_PAGE): Promise<{ created: number; active: number }> {
    const active = await this.activeSubscriptions();
    if (active.length === 0) return { created: 0, active: 0 };
    // The horizon may be "everything" (SQLite): cursors move to real seqs only.
    const newest = await this.db.kysely
      .selectFrom('notifications')
      .select((eb) => eb.fn.max('seq').as('max'))
      .executeTakeFirst();
    const horizon = Math.min(await horizonOf(), Number(newest?.max ?? 0));
    let created = 0;
    for (let subs = active; ; subs = await this.activeSubscriptions()) {
      subs = subs.filter((s) => Number(s.fanout_seq) < horizon);
      if (subs.length === 0) return { created, active: active.length };
      const from = Math.min(...subs.map((s) => Number(s.fanout_seq)));
      const tenants = [...new Set(subs.map((s) => s.tenant_id))];
      const page = await this.db.kysely
        .selectFrom('notifications')
        .select(['seq', 'id', 'tenant_id', 'type', 'operation_id'])
        .where('seq', '>', from)
        .where('seq', '<=', horizon)
        .where('tenant_id', 'in', tenants)
        .orderBy('seq')
        .limit(pageSize)
        .execute();
      // Nothing (of these tenants) up to the horizon: every cursor may move to it.
      const upTo = page.length < pageSize ? horizon : Number(page[page.length - 1]!.seq);
      created += await inWriteTransaction(this.db, (trx) => this.fanOutPageIn(trx, subs, page, upTo, now));
      if (page.length < pageSize) return { created, active: active.length };
    }
  }

  /** Read with every fan-out (after each batch of notifications): compiled once. */
  private async activeSubscriptions(): Promise<ActiveSubscription[]> {
    const conn = this.db.kysely;
    const { rows } = await this.compiled.execute(conn, 'active', [], () =>
      conn.selectFrom('subscriptions').select(['id', 'tenant_id', 'events', 'fanout_seq']).where('disabled_at', 'is', null).where('deleted_at', 'is', null),
    );
    return rows;
  }

  private async fanOutPageIn(trx: Tx, listed: ActiveSubscription[], page: OutboxEntry[], upTo: number, now: number): Promise<number> {
    // Still active now? A subscription disabled or deleted since it was listed gets nothing more.
    // On PostgreSQL the row lock makes a concurrent disable wait for this commit, and then
    // fail what this page created for it, like everything else it had pending. The lock is
    // FOR NO KEY UPDATE, taken in id order: two fan-outs racing (two instances) queue behind
    // each other, where a shared lock let both hold it and then deadlock on the cursor UPDATE
    // below (each waiting for the other's share to go). Not FOR UPDATE: that would also wait
    // for every open transaction that merely references the row (a delivery's foreign key).
    let still = trx
      .selectFrom('subscriptions')
      .select('id')
      .where('id', 'in', listed.map((s) => s.id))
      .where('disabled_at', 'is', null)
      .where('deleted_at', 'is', null)
      .orderBy('id');
    if (this.db.dialect === 'postgres') still = still.forNoKeyUpdate();
    const activeIds = new Set((await still.execute()).map((r) => r.id));
    const subs = listed.filter((s) => activeIds.has(s.id));
    if (subs.length === 0) return 0;
    const wanted = new Map(subs.map((s) => [s.id, s.events ? new Set<string>(JSON.parse(s.events)) : null]));
    const rows = [];
    for (const n of page) {
      for (const s of subs) {
        if (s.tenant_id !== n.tenant_id || Number(n.seq) <= Number(s.fanout_seq)) continue;
        const types = wanted.get(s.id);
        if (types && !types.has(n.type)) continue;
        rows.push({
          id: `dlv_${randomUUID()}`,
          subscription_id: s.id,
          tenant_id: n.tenant_id,
          notification_id: n.id,
          notification_seq: Number(n.seq),
          type: n.type,
          operation_id: n.operation_id,
          status: 'pending' as const,
          next_attempt_at: now,
          created_at: now,
          updated_at: now,
          last_status: null,
          last_error: null,
          lease_owner: null,
          lease_until: null,
          delivered_at: null,
          redelivered_at: null,
          redelivered_by: null,
        });
      }
    }
    let inserted = 0;
    // Bounded statements: SQLite allows 32k bound parameters, PostgreSQL 65k.
    for (let i = 0; i < rows.length; i += 200) {
      const res = await trx
        .insertInto('subscription_deliveries')
        .values(rows.slice(i, i + 200))
        .onConflict((oc) => oc.columns(['subscription_id', 'notification_id']).doNothing())
        .executeTakeFirst();
      inserted += Number(res.numInsertedOrUpdatedRows ?? 0);
    }
    await trx
      .updateTable('subscriptions')
      .set({ fanout_seq: upTo })
      .where('id', 'in', subs.map((s) => s.id))
      .where('fanout_seq', '<', upTo)
      // A subscription disabled or deleted meanwhile keeps its cursor: nothing more is created for it.
      .where('disabled_at', 'is', null)
      .where('deleted_at', 'is', null)
      .execute();
    return inserted;
  }

  /** A notification's stored body (the exact text that is signed and sent). */
  async notificationBodies(ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.kysely.selectFrom('notifications').select(['id', 'body']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r.body]));
  }
}

async function failPendingIn(trx: Tx, subscriptionId: string, reason: string, now: number): Promise<void> {
  await trx
    .updateTable('subscription_deliveries')
    .set({ status: 'failed', next_attempt_at: null, last_error: reason, lease_owner: null, lease_until: null, lease_epoch: sql`lease_epoch + 1`, updated_at: now })
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'pending')
    .execute();
}
