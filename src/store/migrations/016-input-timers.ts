/**
 * Reminders and expiry of what waits for a person (docs/ARCHITECTURE.md, People in the loop), kept on the
 * operation row next to its timer (`next_check_at`), so that they survive restarts
 * like every other timer. Both count only for the current request: they are read
 * against its `requested_at` (src/domain/input-timers.ts), so a new request starts
 * a clock of its own without any write to reset them.
 */
import type { Migration } from 'kysely';

export const inputTimers: Migration = {
  async up(db) {
    await db.schema
      .alterTable('operations')
      // How many reminders were sent for the current request (`reminded_at` is when the last went).
      .addColumn('input_reminders', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('operations')
      // When the current request's expiry was acted on: `stall` leaves the operation waiting, and this
      // keeps the expiry from firing again.
      .addColumn('input_expired_at', 'bigint')
      .execute();
  },
};
