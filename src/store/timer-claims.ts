/**
 * Claiming rows whose timer is due, for the tables whose work is driven by a
 * `next_check_at` timer and a lease (operations: the scheduler; media buys: the buy
 * worker). One statement sets the lease owner and expiry and counts the attempt, so two
 * workers can never hold the same row; an expired lease is due again by the same
 * condition, with no sweeper needed.
 */
import { sql } from 'kysely';
import type { Db } from './db.js';
import { inWriteTransaction } from './tx.js';

export type TimedTable = 'operations' | 'media_buys';

/** Claims up to `limit` due rows of `table` for `owner`, leased for `leaseMs`, soonest timer first. */
export async function claimDueRows<R>(db: Db, table: TimedTable, owner: string, now: number, leaseMs: number, limit: number): Promise<R[]> {
  const t = sql.table(table);
  const leaseUntil = now + leaseMs;
  if (db.dialect === 'postgres') {
    const { rows } = await sql<R>`
      WITH due AS (
        SELECT id FROM ${t}
        WHERE next_check_at IS NOT NULL AND next_check_at <= ${now}
          AND (lease_until IS NULL OR lease_until <= ${now})
        ORDER BY next_check_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE ${t} AS claimed
      SET lease_owner = ${owner}, lease_until = ${leaseUntil}, attempt = claimed.attempt + 1, lease_epoch = claimed.lease_epoch + 1
      FROM due WHERE claimed.id = due.id
      RETURNING claimed.*`.execute(db.kysely);
    return rows;
  }
  // A single UPDATE is atomic in SQLite; run as a write job it shares the group's commit.
  return inWriteTransaction(db, async (trx) => {
    const { rows } = await sql<R>`
      UPDATE ${t}
      SET lease_owner = ${owner}, lease_until = ${leaseUntil}, attempt = attempt + 1, lease_epoch = lease_epoch + 1
      WHERE id IN (
        SELECT id FROM ${t}
        WHERE next_check_at IS NOT NULL AND next_check_at <= ${now}
          AND (lease_until IS NULL OR lease_until <= ${now})
        ORDER BY next_check_at
        LIMIT ${limit}
      )
      RETURNING *`.execute(trx);
    return rows;
  });
}

/** The earliest timer among unleased rows of `table`, so a worker can sleep until then (leased rows come back within a tick). */
export async function nextTimerAt(db: Db, table: TimedTable, now: number): Promise<number | null> {
  const row = await db.kysely
    .selectFrom(table)
    .select('next_check_at')
    .where('next_check_at', 'is not', null)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .orderBy('next_check_at')
    .limit(1)
    .executeTakeFirst();
  return row?.next_check_at ?? null;
}
