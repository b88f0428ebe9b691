/**
 * The lease log behind bench/instances.ts's "0 overlapping leases" (bench/lib/lease-audit.ts):
 * it must see an overlap when one happens, and must not call a legal hand-over one.
 * Claims go through the store's own claim statements; the overlap is forced by hand,
 * since the store never makes one.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installLeaseAudit, leaseReport, releasesSoFar } from '../../bench/lib/lease-audit.js';
import { seedOperationsPg } from '../../bench/lib/pg-database.js';
import { openStore, type Store } from '../../src/store/index.js';
import { postgresAdminUrl, tempPostgres, type TestDatabase } from '../helpers/databases.js';

const suite = postgresAdminUrl ? describe : describe.skip;

suite('bench lease audit (PostgreSQL)', () => {
  let database: TestDatabase;
  let store: Store;
  let client: pg.Client;
  let tenantId: string;
  let agentId: string;

  beforeAll(async () => {
    database = await tempPostgres();
    store = await openStore(database.url);
    tenantId = (await store.tenants.ensureTenant('bench')).id;
    agentId = (await store.agents.insert({ tenantId, name: 'seller', role: 'seller', url: 'http://127.0.0.1:9/mcp', protocol: 'mcp' })).id;
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await installLeaseAudit(client);
  });
  afterAll(async () => {
    await client?.end();
    await store?.close();
    await database?.drop();
  });

  /** One due operation with the given id prefix. */
  async function dueOperation(prefix: string): Promise<string> {
    const { ids } = await seedOperationsPg(client, { n: 1, tenantId, agentId, idPrefix: prefix, nextCheckAt: () => Date.now() - 1_000 });
    return ids[0]!;
  }
  const release = (id: string) => client.query('UPDATE operations SET lease_owner = NULL, lease_until = NULL WHERE id = $1', [id]);

  it('claim, release, claim by another owner: no overlap, every change logged', async () => {
    const id = await dueOperation('handover-');
    expect((await store.operations.claimOne(id, 'owner-a', Date.now(), 60_000))?.id).toBe(id);
    await release(id);
    expect((await store.operations.claimOne(id, 'owner-b', Date.now(), 60_000))?.id).toBe(id);
    await release(id);
    const r = await leaseReport(client, 'handover-');
    expect(r).toMatchObject({ claims: 2, releases: 2, operations: 1, overlapping: 0, expiredTakeovers: 0, stillHeld: 0 });
    expect(r.byOwner).toEqual({ 'owner-a': 1, 'owner-b': 1 });
    expect(await releasesSoFar(client, 'handover-')).toBe(2);
  });

  it('a claim of an expired, unreleased lease is a legal takeover, not an overlap', async () => {
    const id = await dueOperation('expired-');
    expect(await store.operations.claimOne(id, 'owner-a', Date.now(), 1)).toBeDefined();
    await new Promise((r) => setTimeout(r, 20));
    expect(await store.operations.claimOne(id, 'owner-b', Date.now(), 60_000)).toBeDefined();
    const r = await leaseReport(client, 'expired-');
    expect(r).toMatchObject({ claims: 2, overlapping: 0, expiredTakeovers: 1, stillHeld: 1 });
  });

  it('a second claim while the first is held and unexpired is counted as an overlap', async () => {
    const id = await dueOperation('overlap-');
    expect(await store.operations.claimOne(id, 'owner-a', Date.now(), 60_000)).toBeDefined();
    // The store refuses this claim (the lease is live), so force it as a broken claim would.
    expect(await store.operations.claimOne(id, 'owner-b', Date.now(), 60_000)).toBeUndefined();
    await client.query('UPDATE operations SET lease_owner = $2, lease_epoch = lease_epoch + 1, lease_until = $3 WHERE id = $1', [id, 'owner-b', Date.now() + 60_000]);
    const r = await leaseReport(client, 'overlap-');
    expect(r).toMatchObject({ claims: 2, overlapping: 1, overlappingOtherOwner: 1, expiredTakeovers: 0, stillHeld: 1 });
  });
});
