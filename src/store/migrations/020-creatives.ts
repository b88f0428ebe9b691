/**
 * Creatives of live media buys (README, Creatives): each creative sent to a buy's
 * seller with `sync_creatives`, where its review stands as the seller says it
 * (`list_creatives`, the buy's `creative_approvals`), and the buy's review timer.
 *
 * One row per (buy, creative_id): a corrected creative sent again under the same id
 * is the same row, pointed at the operation that sent it last. Every write of a
 * buy's creatives holds the buy's row lock (src/store/creatives-repo.ts says why).
 */
import { sql, type Kysely, type Migration } from 'kysely';

export const creatives: Migration = { up };

async function up(db: Kysely<any>): Promise<void> {
  // The buy's fourth timer (src/domain/media-buy-timers.ts): look at its creatives' reviews.
  await db.schema.alterTable('media_buys').addColumn('creative_check_at', 'bigint').execute();

  await db.schema
    .createTable('media_buy_creatives')
    .addColumn('buy_id', 'text', (c) => c.notNull())
    .addColumn('creative_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    // processing | pending_review | approved | rejected | archived: the seller's word, never the sync reply's.
    .addColumn('status', 'text', (c) => c.notNull())
    // JSON array of the buy's package ids it was assigned to.
    .addColumn('package_ids', 'text', (c) => c.notNull())
    // JSON array of {package_id, status, rejection_reason?}: the buy's creative_approvals for it.
    .addColumn('approvals', 'text', (c) => c.notNull())
    .addColumn('rejection_reason', 'text')
    // What the sync_creatives reply said of it (advisory: recorded, never taken for a review).
    .addColumn('advisory_status', 'text')
    // The sync_creatives operation that sent it last, and how that send stands: sending | synced | failed.
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('sync_state', 'text', (c) => c.notNull())
    .addColumn('sync_error', 'text')
    // The review's clock: from the send; past the deadline it is stalled (once).
    .addColumn('sent_at', 'bigint', (c) => c.notNull())
    // When its send was seen to end: only what the seller says after that is about this version.
    .addColumn('synced_at', 'bigint')
    .addColumn('review_deadline_at', 'bigint')
    .addColumn('stalled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('stalled_at', 'bigint')
    // A rejection's way to a person: owed (not yet on its operation) → asked → answered.
    .addColumn('inbox_state', 'text')
    .addColumn('dismissed_at', 'bigint')
    .addColumn('dismissed_by', 'text')
    // The seller's updated_date, and when the seller decided (approved or rejected).
    .addColumn('seller_updated_at', 'bigint')
    .addColumn('decided_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('media_buy_creatives_pk', ['buy_id', 'creative_id'])
    .execute();
  // A sync_creatives operation's creatives (its end, its inbox item).
  await db.schema.createIndex('media_buy_creatives_operation').on('media_buy_creatives').columns(['operation_id']).execute();
  // Rejections owed to a person, found by the review that comes after a crash.
  await sql`CREATE INDEX media_buy_creatives_owed ON media_buy_creatives (buy_id) WHERE inbox_state = 'owed'`.execute(db);
}
