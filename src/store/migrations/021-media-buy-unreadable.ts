/**
 * A live buy its seller no longer answers for (src/domain/media-buy-unreadable.ts):
 * since when, and why (the seller listed no row for it, or said MEDIA_BUY_NOT_FOUND).
 * Both null while the seller answers. Kept on the buy so that the spell is recorded
 * and told once, shown on the buy, and ended once when the seller answers again.
 */
import type { Migration } from 'kysely';

export const mediaBuyUnreadable: Migration = {
  async up(db) {
    await db.schema.alterTable('media_buys').addColumn('unreadable_since', 'bigint').execute();
    await db.schema.alterTable('media_buys').addColumn('unreadable_reason', 'text').execute();
  },
};
