/**
 * The notifications outbox (docs/ARCHITECTURE.md, Telling users): one row per thing people are told,
 * written in the transaction of the change it reports. `seq` orders them for
 * readers (SSE streams, subscription delivery); `id` is what clients see and
 * resume from.
 */
import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../db.js';

export const notifications = (dialect: DialectName): Migration => ({ up: (db) => up(db, dialect) });

async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema
    .createTable('notifications')
    .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
      // AUTOINCREMENT: a seq is never reused, even after the newest row is gone.
      dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notifications_tenant_seq').on('notifications').columns(['tenant_id', 'seq']).execute();
}
