/**
 * Keys with names and roles, and the actor on events, on SQLite and (with
 * TEST_DATABASE_URL) PostgreSQL: the 005-key-roles migration over a database
 * made before it, and the repository's rules for names.
 */
import { randomUUID } from 'node:crypto';
import { Migrator } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { migrateToLatest, migrationsFor } from '../../src/store/migrate.js';
import { openStore, type Store } from '../../src/store/index.js';
import { newOperationRow } from '../../src/store/operation-row.js';
import { hashApiKey, KeyNameTakenError } from '../../src/store/tenants-repo.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';
import { startOrchestrator } from '../helpers/orchestrator.js';

const THIS_MIGRATION = '005-key-roles';

/** Applies every migration before 005-key-roles and nothing after: a database as the previous version left it. */
async function migrateToJustBefore(db: Db): Promise<void> {
  const names = Object.keys(migrationsFor(db)).sort();
  const previous = names[names.indexOf(THIS_MIGRATION) - 1]!;
  const migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrationsFor(db) } });
  const { error } = await migrator.migrateTo(previous);
  if (error) throw error;
}

describe.each(dialects)('keys and roles on $name', ({ make }) => {
  let database: TestDatabase;

  beforeEach(async () => {
    database = await make();
  });
  afterEach(async () => database.drop());

  it('migrates a database made before roles: old keys stay usable as admin, each with its own name', async () => {
    const db = openDb(database.url);
    await migrateToJustBefore(db);
    // Keys inserted the way the previous version did, with the columns it had. Two
    // adopted keys share their first 8 characters (and so their prefix).
    const tenantId = randomUUID();
    const old = { minted: 'aok_0123456789abcdefghijklmnopqrstuvwxyzABCDE', adoptedA: 'old-key-number-one', adoptedB: 'old-key-number-two' };
    await db.kysely.insertInto('tenants').values({ id: tenantId, name: 'test-tenant', created_at: 1 }).execute();
    for (const [i, key] of Object.values(old).entries()) {
      await (db.kysely as any)
        .insertInto('api_keys')
        .values({ id: randomUUID(), tenant_id: tenantId, key_hash: hashApiKey(key), prefix: key.slice(0, 8), created_at: 10 + i })
        .execute();
    }
    expect(await migrateToLatest(db)).toContain(THIS_MIGRATION);
    await db.close();

    const store = await openStore(database.url);
    try {
      const minted = await store.tenants.findApiKey(old.minted);
      expect(minted).toMatchObject({ tenant: { id: tenantId, name: 'test-tenant' }, key: { role: 'admin', name: 'key-aok_0123' } });
      const a = (await store.tenants.findApiKey(old.adoptedA))!.key;
      const b = (await store.tenants.findApiKey(old.adoptedB))!.key;
      expect([a.role, b.role]).toEqual(['admin', 'admin']);
      expect(new Set([a.name, b.name]).size).toBe(2);
      for (const n of [a.name, b.name]) expect(n.startsWith('key-old-key-')).toBe(true);
    } finally {
      await store.close();
    }

    // And the old key does, through the API, what only an admin may.
    const orch = await startOrchestrator({ database, keepDatabase: true });
    try {
      const res = await fetch(`${orch.url}/v1/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${old.minted}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'seller', role: 'seller', url: 'http://127.0.0.1:9/mcp', protocol: 'mcp' }),
      });
      expect(res.status).toBe(201);
    } finally {
      await orch.close();
    }
  });

  describe('with a fresh store', () => {
    let store: Store;
    let tenantId: string;
    beforeEach(async () => {
      store = await openStore(database.url);
      tenantId = (await store.tenants.ensureTenant('acme')).id;
    });
    afterEach(async () => store.close());

    it('stores a key with its name and role, lists keys without any secret, and finds the key', async () => {
      const made = await store.tenants.addApiKey(tenantId, { name: 'ci bot', role: 'operator', now: 5 });
      expect(made).toMatchObject({ created: true, info: { name: 'ci bot', role: 'operator', prefix: made.key.slice(0, 8), created_at: 5 } });
      expect(await store.tenants.findApiKey(made.key)).toEqual({ tenant: { id: tenantId, name: 'acme' }, key: made.info });
      expect(await store.tenants.findApiKey(`${made.key}x`)).toBeUndefined();
      const listed = await store.tenants.listApiKeys(tenantId);
      expect(listed).toEqual([made.info]);
      expect(JSON.stringify(listed)).not.toContain(made.key);
      expect(JSON.stringify(listed)).not.toContain(hashApiKey(made.key));
      // Without options: admin, named after its prefix.
      const plain = await store.tenants.createApiKey(tenantId);
      expect((await store.tenants.findApiKey(plain))!.key).toMatchObject({ role: 'admin', name: `key-${plain.slice(0, 8)}` });
    });

    it('refuses a name the tenant already uses, unless told to take the next free one; other tenants may use it', async () => {
      await store.tenants.createApiKey(tenantId, { name: 'alice', role: 'approver' });
      const before = await store.tenants.listApiKeys(tenantId);
      await expect(store.tenants.createApiKey(tenantId, { name: 'alice' })).rejects.toBeInstanceOf(KeyNameTakenError);
      expect(await store.tenants.listApiKeys(tenantId)).toEqual(before);
      const suffixed = await store.tenants.addApiKey(tenantId, { name: 'alice', ifNameTaken: 'suffix' });
      expect(suffixed.info.name).toMatch(/^alice-[0-9a-f]{8}$/);
      const other = (await store.tenants.ensureTenant('other')).id;
      expect((await store.tenants.addApiKey(other, { name: 'alice' })).info.name).toBe('alice');
    });

    it('adopting a key that is already stored changes nothing', async () => {
      const first = await store.tenants.addApiKey(tenantId, { key: 'operator-given-key-1', name: 'sandbox-admin', role: 'admin' });
      const again = await store.tenants.addApiKey(tenantId, { key: 'operator-given-key-1', name: 'sandbox-admin', role: 'viewer' });
      expect(again).toEqual({ key: 'operator-given-key-1', info: first.info, created: false });
      expect(await store.tenants.listApiKeys(tenantId)).toHaveLength(1);
    });

    it('records the actor of an event and reads it back (null when no person caused it)', async () => {
      const agentId = (await store.agents.insert({ tenantId, name: 's', role: 'seller', url: 'http://127.0.0.1:1/mcp', protocol: 'mcp' })).id;
      const now = Date.now();
      const op = newOperationRow({ id: randomUUID(), tenant_id: tenantId, agent_id: agentId, type: 'get_products', idempotency_key: randomUUID(), request_body: '{}', created_at: now });
      const {
        events: [created],
      } = await store.operations.insert(op, { source: 'user', kind: 'created', to: 'requested', actor: 'alice' });
      expect(created).toMatchObject({ kind: 'created', actor: 'alice' });
      await store.operations.mutate(op.id, null, () => ({
        patch: { status: 'failed' },
        events: [
          { source: 'poll', kind: 'transition', from: 'requested', to: 'failed' },
          { source: 'user', kind: 'note', actor: 'bob' },
        ],
        value: null,
      }));
      expect((await store.operations.events(op.id)).map((e) => [e.kind, e.actor])).toEqual([
        ['created', 'alice'],
        ['transition', null],
        ['note', 'bob'],
      ]);
    });
  });
});
