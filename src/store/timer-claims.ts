/**
 * Claiming rows whose timer is due, for the tables whose work is driven by a timer
 * column and a lease (operations: the scheduler; media buys and delivery outcomes: the
 * buy worker). One statement sets the lease owner and expiry and counts the attempt, so
 * two workers can never hold the same row; an expired lease is due again by the same
 * condition, with no sweeper needed.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from './db.js';
import { inWriteTransaction } from './tx.js';

export type TimedTable = 'operations' | 'media_buys' | 'media_buy_outcomes';

/**
 * Each table's timer column and which rows wait on it. The condition is written as its
 * partial due index is (migrations 001 and 018), so the planner uses that index.
 */
const TIMERS: Record<TimedTable, { due: string; waiting: RawBuilder<unknown> }> = {
  operations: { due: 'next_check_at', waiting: sql`next_check_at IS NOT NULL` },
  media_buys: { due: 'next_check_at', waiting: sql`next_check_at IS NOT NULL` },
  media_buy_outcomes: { due: 'next_attempt_at', waiting: sql`status = 'pending'` },
};

/** Claims up to `limit` due rows of `table` for `owner`, leased for `leaseMs`, soonest timer first. */
export async function claimDueRows<R>(db: Db, table: TimedTable, owner: string, now: number, leaseMs: number, limit: number): Promise<R[]> {
  const t = sql.table(table);
  const { waiting } = TIMERS[table];
  const due = sql.ref(TIMERS[table].due);
  const leaseUntil = now + leaseMs;
  if (db.dialect === 'postgres') {
    const { rows } = await sql<R>`
      WITH due AS (
        SELECT id FROM ${t}
        WHERE ${waiting} AND ${due} <= ${now}
          AND (lease_until IS NULL OR lease_until <= ${now})
        ORDER BY ${due}
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
        WHERE ${waiting} AND ${due} <= ${now}
          AND (lease_until IS NULL OR lease_until <= ${now})
        ORDER BY ${due}
        LIMIT ${limit}
      )
      RETURNING *`.execute(trx);
    return rows;
  });
}

/** The earliest timer among unleased rows of `table`, so a worker can sleep until then (leased rows come back within a tick). */
export async function nextTimerAt(db: Db, table: TimedTable, now: number): Promise<number | null> {
  const { waiting } = TIMERS[table];
  const due = sql.ref(TIMERS[table].due);
  const { rows } = await sql<{ at: number }>`
    SELECT ${due} AS at FROM ${sql.table(table)}
    WHERE ${waiting} AND (lease_until IS NULL OR lease_until <= ${now})
    ORDER BY ${due}
    LIMIT 1`.execute(db.kysely);
  const at = rows[0]?.at;
  return at === undefined || at === null ? null : Number(at);
}
