/**
 * Runs the schema migrations. Kysely's migrator takes a lock first (an advisory
 * lock on PostgreSQL, the write lock on SQLite), so several instances starting
 * together apply each migration exactly once.
 */
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './db.js';
import { initial } from './migrations/001-initial.js';
import { webhooks } from './migrations/002-webhooks.js';
import { reconcile } from './migrations/003-reconcile.js';
import { operationParent } from './migrations/012-operation-parent.js';
import { keyRoles } from './migrations/005-key-roles.js';
import { notifications } from './migrations/007-notifications.js';
import { reconcileRetry } from './migrations/009-reconcile-retry.js';
import { retention } from './migrations/014-retention.js';

export function migrationsFor(db: Db): Record<string, Migration> {
  return {
    '001-initial': initial(db.dialect),
    '002-webhooks': webhooks,
    '003-reconcile': reconcile,
    '005-key-roles': keyRoles(db.dialect),
    '007-notifications': notifications(db.dialect),
    '009-reconcile-retry': reconcileRetry,
    '012-operation-parent': operationParent,
    '014-retention': retention,
  };
}

export async function migrateToLatest(db: Db): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(db) };
  const migrator = new Migrator({
    db: db.kysely,
    provider,
    // Migrations are numbered per feature and are independent and additive, so a database
    // that already ran a later number still takes an earlier one added after it.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
