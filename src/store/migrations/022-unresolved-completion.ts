/**
 * When a seller first said a `create_media_buy` completed without naming the buy it made
 * (no `media_buy_id`: a real seller's webhook carried its `submitted` envelope as the
 * result). Such a completion is not taken: the task stays observed, and the operation is
 * stalled for a person if no completion with a `media_buy_id` comes within a bound counted
 * from here (src/engine/unresolved-completion.ts). NULL for every other operation.
 */
import type { Migration } from 'kysely';

export const unresolvedCompletion: Migration = {
  async up(db) {
    await db.schema.alterTable('operations').addColumn('unresolved_completion_at', 'bigint').execute();
  },
};
