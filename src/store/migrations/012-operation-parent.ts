/** Child operations (corrections, cancels at the seller, governed steps, campaign buys) are found by their parent. */
import type { Migration } from 'kysely';

export const operationParent: Migration = {
  async up(db) {
    await db.schema.createIndex('operations_parent').on('operations').column('parent_id').execute();
  },
  async down(db) {
    await db.schema.dropIndex('operations_parent').execute();
  },
};
