/**
 * Runs the schema migrations. Kysely's migrator takes a lock first (an advisory
 * lock on PostgreSQL, the write lock on SQLite), so several instances starting
 * together apply each migration exactly once.
 */
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './schema.js';
import { inWriteTransaction } from './tx.js';
import type { Db } from './db.js';
import { initial } from './migrations/001-initial.js';
import { webhooks } from './migrations/002-webhooks.js';
import { reconcile } from './migrations/003-reconcile.js';
import { instances } from './migrations/004-instances.js';
import { operationParent } from './migrations/012-operation-parent.js';
import { keyRoles } from './migrations/005-key-roles.js';
import { notifications } from './migrations/007-notifications.js';
import { reconcileRetry } from './migrations/009-reconcile-retry.js';
import { subscriptions } from './migrations/008-subscriptions.js';
import { inputRequests } from './migrations/006-input-requests.js';
import { governance } from './migrations/015-governance.js';
import { inputTimers } from './migrations/016-input-timers.js';
import { nonceCounts } from './migrations/017-nonce-counts.js';
import { sessions } from './migrations/013-sessions.js';
import { retention } from './migrations/014-retention.js';
import { mediaBuys } from './migrations/018-media-buys.js';
import { mediaBuyListIndexes } from './migrations/019-media-buy-list-indexes.js';
import { creatives } from './migrations/020-creatives.js';
import { unresolvedCompletion } from './migrations/022-unresolved-completion.js';
import { mediaBuyUnreadable } from './migrations/021-media-buy-unreadable.js';
import { agentCapabilities } from './migrations/023-agent-capabilities.js';
import { governanceSyncs } from './migrations/024-governance-syncs.js';
import { signingKeys } from './migrations/025-signing-keys.js';

export function migrationsFor(db: Db): Record<string, Migration> {
  return {
    '001-initial': initial(db.dialect),
    '002-webhooks': webhooks,
    '003-reconcile': reconcile,
    '004-instances': instances,
    '005-key-roles': keyRoles(db.dialect),
    '007-notifications': notifications(db.dialect),
    '009-reconcile-retry': reconcileRetry,
    '012-operation-parent': operationParent,
    '008-subscriptions': subscriptions,
    '006-input-requests': inputRequests,
    '015-governance': governance,
    '016-input-timers': inputTimers,
    '017-nonce-counts': nonceCounts,
    '013-sessions': sessions,
    '014-retention': retention,
    '018-media-buys': mediaBuys(db.dialect),
    '019-media-buy-list-indexes': mediaBuyListIndexes,
    '020-creatives': creatives,
    '022-unresolved-completion': unresolvedCompletion,
    '021-media-buy-unreadable': mediaBuyUnreadable,
    '023-agent-capabilities': agentCapabilities,
    '024-governance-syncs': governanceSyncs,
    '025-signing-keys': signingKeys,
  };
}

export async function migrateToLatest(db: Db): Promise<string[]> {
  // Kysely's migration lock is a no-op on SQLite (it assumes one connection), but two
  // processes may start on one new file at once: run the whole migration under the
  // write lock (BEGIN IMMEDIATE), so the second waits and then finds nothing to do.
  // Taken only when something is pending: the common start (nothing to do) never waits on
  // the lock, and several connections of one process (tests, tools) never block each other.
  if (db.dialect === 'sqlite') {
    if (!(await hasPendingMigrations(db))) return [];
    return inWriteTransaction(db, (conn) => runMigrations(db, conn as Kysely<Database>), { group: false });
  }
  return runMigrations(db, db.kysely);
}

async function hasPendingMigrations(db: Db): Promise<boolean> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(db) };
  const known = await new Migrator({ db: db.kysely, provider, allowUnorderedMigrations: true }).getMigrations();
  return known.some((m) => m.executedAt === undefined);
}

async function runMigrations(db: Db, conn: Kysely<Database>): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(db) };
  const migrator = new Migrator({
    db: conn,
    provider,
    // Migrations are numbered per feature and are independent and additive, so a database
    // that already ran a later number still takes an earlier one added after it.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
