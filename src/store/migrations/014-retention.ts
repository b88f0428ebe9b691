/** API idempotency records are pruned by age once their window has passed: find them by it. */
import type { Migration } from 'kysely';

export const retention: Migration = {
  async up(db) {
    await db.schema.createIndex('api_idempotency_created_at').on('api_idempotency').column('created_at').execute();
  },
  async down(db) {
    await db.schema.dropIndex('api_idempotency_created_at').execute();
  },
};
