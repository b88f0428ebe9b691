/**
 * Keys get a name and a role (README.md, Using it "Keys and roles"); events get the
 * actor who caused them. Keys made before this keep working unchanged: they
 * become `admin` (every key could do everything before) named `key-<prefix>`.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectName } from '../db.js';

export const keyRoles = (dialect: DialectName): Migration => ({ up: (db) => up(db, dialect) });

async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect === 'postgres') {
    await db.schema.alterTable('api_keys').addColumn('name', 'text').execute();
  } else {
    // SQLite cannot make a column NOT NULL after adding it; the empty default only
    // covers the rows named just below, every insert names its key.
    await db.schema.alterTable('api_keys').addColumn('name', 'text', (c) => c.notNull().defaultTo('')).execute();
  }
  await sql`UPDATE api_keys SET name = 'key-' || prefix`.execute(db);
  // Two old keys of one tenant can share a prefix (keys adopted from ADCP_ORCH_API_KEY
  // are any text): the name is the actor in events, so each gets one of its own.
  await sql`UPDATE api_keys SET name = name || '-' || id
    WHERE id NOT IN (SELECT MIN(id) FROM api_keys GROUP BY tenant_id, prefix)`.execute(db);
  if (dialect === 'postgres') {
    await db.schema.alterTable('api_keys').alterColumn('name', (c) => c.setNotNull()).execute();
  }
  await db.schema.createIndex('api_keys_tenant_name').unique().on('api_keys').columns(['tenant_id', 'name']).execute();
  await db.schema.alterTable('api_keys').addColumn('role', 'text', (c) => c.notNull().defaultTo('admin')).execute();

  // Who caused the change (a key's name); null for what the seller, a poll or a timer did.
  await db.schema.alterTable('operation_events').addColumn('actor', 'text').execute();
}
