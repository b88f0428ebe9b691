/**
 * Delivery rows of outbound notifications and their attempts.
 *
 * State machine of a delivery: `pending` (due at `next_attempt_at`, or in flight
 * under a lease) → `delivered` | `failed`; `failed` → `pending` again when a
 * person asks for a redelivery. Due rows are claimed in one statement that sets
 * the lease and counts the attempt (docs/ARCHITECTURE.md, Storage), so with several instances a
 * row is worked by one at a time; finishing checks the lease, so a worker that
 * lost it changes nothing.
 *
 * Order: a delivery is not claimable while an earlier notification of the same
 * operation is still pending for the same subscription, so a receiver sees an
 * operation's notifications in the order they were written (an earlier one
 * must be delivered or finally failed first).
 */
import { sql, type Selectable } from 'kysely';
import type { Verdict } from '../domain/subscription-retry.js';
import type { Db } from './db.js';
import type { SubscriptionDeliveriesTable, SubscriptionDeliveryAttemptsTable } from './schema.js';
import { inWriteTransaction, type Tx } from './tx.js';

export type DeliveryRow = Selectable<SubscriptionDeliveriesTable>;
export type AttemptRow = Selectable<SubscriptionDeliveryAttemptsTable>;

export interface DeliveryLease {
  id: string;
  owner: string;
  epoch: number;
}

export interface AttemptRecord {
  /** The attempt number counted at claim time. */
  attempt: number;
  startedAt: number;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
}

export type RedeliverResult =
  | { kind: 'not_found' }
  | { kind: 'subscription_disabled' }
  | { kind: 'already_delivered' }
  | { kind: 'scheduled'; delivery: DeliveryRow };

const ELIGIBLE = (now: number) => sql<boolean>`
  d.status = 'pending' AND d.next_attempt_at IS NOT NULL AND d.next_attempt_at <= ${now}
  AND (d.lease_until IS NULL OR d.lease_until <= ${now})
  AND NOT EXISTS (
    SELECT 1 FROM subscription_deliveries e
    WHERE e.subscription_id = d.subscription_id AND e.operation_id = d.operation_id
      AND e.status = 'pending' AND e.notification_seq < d.notification_seq)
  AND EXISTS (
    SELECT 1 FROM subscriptions s
    WHERE s.id = d.subscription_id AND s.disabled_at IS NULL AND s.deleted_at IS NULL)`;

export class SubscriptionDeliveriesRepo {
  constructor(private readonly db: Db) {}

  /** Claims up to `limit` due deliveries: lease, epoch and attempt counted in the same statement. */
  async claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<DeliveryRow[]> {
    const until = now + leaseMs;
    if (this.db.dialect === 'postgres') {
      const { rows } = await sql<DeliveryRow>`
        WITH due AS (
          SELECT d.id FROM subscription_deliveries d
          WHERE ${ELIGIBLE(now)}
          ORDER BY d.next_attempt_at, d.notification_seq
          LIMIT ${limit}
          FOR UPDATE OF d SKIP LOCKED
        )
        UPDATE subscription_deliveries x
        SET lease_owner = ${owner}, lease_until = ${until}, lease_epoch = x.lease_epoch + 1,
            attempt_count = x.attempt_count + 1, schedule_step = x.schedule_step + 1, updated_at = ${now}
        FROM due WHERE x.id = due.id
        RETURNING x.*`.execute(this.db.kysely);
      return rows;
    }
    return inWriteTransaction(this.db, async (trx) => {
      const { rows } = await sql<DeliveryRow>`
        UPDATE subscription_deliveries
        SET lease_owner = ${owner}, lease_until = ${until}, lease_epoch = lease_epoch + 1,
            attempt_count = attempt_count + 1, schedule_step = schedule_step + 1, updated_at = ${now}
        WHERE id IN (
          SELECT d.id FROM subscription_deliveries d
          WHERE ${ELIGIBLE(now)}
          ORDER BY d.next_attempt_at, d.notification_seq
          LIMIT ${limit}
        )
        RETURNING *`.execute(trx);
      return rows;
    });
  }

  /** The earliest future attempt among pending rows, so the dispatcher can sleep until then. */
  async nextDueAt(now: number): Promise<number | null> {
    const row = await this.db.kysely
      .selectFrom('subscription_deliveries')
      .select((eb) => eb.fn.min('next_attempt_at').as('next'))
      .where('status', '=', 'pending')
      .where('next_attempt_at', '>', now)
      .executeTakeFirst();
    return row?.next === null || row?.next === undefined ? null : Number(row.next);
  }

  /**
   * Records an attempt's outcome under the lease. `onDisable` runs in the same
   * transaction when the verdict disables the subscription. False when the lease
   * had moved on (nothing written).
   */
  async finish(lease: DeliveryLease, attempt: AttemptRecord, verdict: Verdict, now: number, onDisable?: (trx: Tx, reason: string) => Promise<void>): Promise<boolean> {
    return inWriteTransaction(this.db, async (trx) => {
      const outcome = verdict.outcome;
      const next = verdict.outcome === 'retry' ? verdict.nextAttemptAt : null;
      const ok = await this.updateUnderLease(trx, lease, {
        status: outcome === 'delivered' ? 'delivered' : outcome === 'retry' ? 'pending' : 'failed',
        next_attempt_at: next,
        last_status: attempt.httpStatus,
        last_error: outcome === 'delivered' ? null : attempt.error ?? (attempt.httpStatus !== null ? `HTTP ${attempt.httpStatus}` : null),
        delivered_at: outcome === 'delivered' ? now : null,
        updated_at: now,
      });
      if (!ok) return false;
      await this.insertAttempt(trx, lease, attempt, outcome, next);
      if (verdict.outcome === 'disabled') await onDisable?.(trx, verdict.reason);
      return true;
    });
  }

  /** An attempt cut short by shutdown: due again at once, and it does not use up a step of the schedule. */
  async interrupt(lease: DeliveryLease, attempt: AttemptRecord, now: number): Promise<boolean> {
    return inWriteTransaction(this.db, async (trx) => {
      const ok = await this.updateUnderLease(trx, lease, { next_attempt_at: now, last_error: attempt.error, updated_at: now, schedule_step: sql<number>`schedule_step - 1` });
      if (ok) await this.insertAttempt(trx, lease, attempt, 'interrupted', now);
      return ok;
    });
  }

  private async updateUnderLease(trx: Tx, lease: DeliveryLease, patch: Record<string, unknown>): Promise<boolean> {
    const res = await trx
      .updateTable('subscription_deliveries')
      .set({ ...patch, lease_owner: null, lease_until: null } as never)
      .where('id', '=', lease.id)
      .where('lease_owner', '=', lease.owner)
      .where('lease_epoch', '=', lease.epoch)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  private async insertAttempt(trx: Tx, lease: DeliveryLease, a: AttemptRecord, outcome: AttemptRow['outcome'], next: number | null): Promise<void> {
    await trx
      .insertInto('subscription_delivery_attempts')
      .values({
        delivery_id: lease.id,
        attempt: a.attempt,
        started_at: a.startedAt,
        duration_ms: Math.max(0, Math.round(a.durationMs)),
        http_status: a.httpStatus,
        error: a.error,
        outcome,
        next_attempt_at: next,
        sent_by: lease.owner,
      })
      .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
      .execute();
  }

  /** A subscription's deliveries, newest notification first; `beforeSeq` pages on. */
  async list(tenantId: string, subscriptionId: string, opts: { status?: string; limit: number; beforeSeq?: number }): Promise<DeliveryRow[]> {
    let q = this.db.kysely
      .selectFrom('subscription_deliveries')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('subscription_id', '=', subscriptionId);
    if (opts.status) q = q.where('status', '=', opts.status as DeliveryRow['status']);
    if (opts.beforeSeq !== undefined) q = q.where('notification_seq', '<', opts.beforeSeq);
    return q.orderBy('notification_seq', 'desc').limit(opts.limit).execute();
  }

  async get(tenantId: string, subscriptionId: string, id: string): Promise<DeliveryRow | undefined> {
    return this.db.kysely
      .selectFrom('subscription_deliveries')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .where('subscription_id', '=', subscriptionId)
      .executeTakeFirst();
  }

  /** Attempts of the given deliveries, oldest first. */
  async attempts(deliveryIds: string[]): Promise<Map<string, AttemptRow[]>> {
    const out = new Map<string, AttemptRow[]>();
    if (deliveryIds.length === 0) return out;
    const rows = await this.db.kysely
      .selectFrom('subscription_delivery_attempts')
      .selectAll()
      .where('delivery_id', 'in', deliveryIds)
      .orderBy('delivery_id')
      .orderBy('attempt')
      .execute();
    for (const r of rows) {
      const list = out.get(r.delivery_id) ?? [];
      list.push(r);
      out.set(r.delivery_id, list);
    }
    return out;
  }

  /**
   * A person asks for a delivery again. Failed: pending now, with a fresh retry
   * schedule. Pending: its next attempt is brought forward to now. Delivered:
   * refused — it would go out under the same `webhook-id`, which receivers drop
   * as a duplicate, so it could only mislead. A disabled subscription sends nothing.
   */
  async redeliver(tenantId: string, subscriptionId: string, id: string, actor: string | null, now = Date.now()): Promise<RedeliverResult> {
    return inWriteTransaction(this.db, async (trx) => {
      const sub = await trx
        .selectFrom('subscriptions')
        .select(['disabled_at', 'deleted_at'])
        .where('id', '=', subscriptionId)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      if (!sub || sub.deleted_at !== null) return { kind: 'not_found' as const };
      let q = trx.selectFrom('subscription_deliveries').selectAll().where('id', '=', id).where('subscription_id', '=', subscriptionId);
      if (this.db.dialect === 'postgres') q = q.forUpdate();
      const row = await q.executeTakeFirst();
      if (!row) return { kind: 'not_found' as const };
      if (sub.disabled_at !== null) return { kind: 'subscription_disabled' as const };
      if (row.status === 'delivered') return { kind: 'already_delivered' as const };
      const patch =
        row.status === 'failed'
          ? { status: 'pending' as const, next_attempt_at: now, schedule_step: 0 }
          : { next_attempt_at: row.lease_until !== null && row.lease_until > now ? row.next_attempt_at : now };
      const updated = await trx
        .updateTable('subscription_deliveries')
        .set({ ...patch, redelivered_at: now, redelivered_by: actor, updated_at: now })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { kind: 'scheduled' as const, delivery: updated };
    });
  }
}
