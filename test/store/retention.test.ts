/**
 * Retention on SQLite and (when TEST_DATABASE_URL is set) PostgreSQL: API
 * idempotency records past their window are deleted (in batches), as applied
 * webhook deliveries and expired nonces are; everything younger, and what is
 * the record (operations, events), stays.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { loadConfig, ConfigError } from '../../src/config.js';
import { pruneExpired, WEBHOOK_DELIVERY_RETENTION_MS } from '../../src/engine/maintenance.js';
import { dialects, type TestDatabase } from '../helpers/databases.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe.each(dialects)('retention on $name', ({ make }) => {
  let database: TestDatabase;
  let store: Store;
  let tenantId: string;

  beforeAll(async () => {
    database = await make();
    store = await openStore(database.url);
    tenantId = (await store.tenants.ensureTenant('acme')).id;
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  const keys = async (): Promise<string[]> =>
    (await store.db.kysely.selectFrom('api_idempotency').select('key').where('tenant_id', '=', tenantId).orderBy('key').execute()).map((r) => r.key);

  it('deletes idempotency records first used before the cutoff, whatever their state, in batches', async () => {
    const now = Date.now();
    // 12 old ones (answered and in progress), 3 young ones.
    for (let i = 0; i < 12; i++) {
      const key = `old-${String(i).padStart(2, '0')}`;
      expect((await store.idempotency.reserve(tenantId, key, 'h', now - 25 * HOUR - i)).kind).toBe('reserved');
      if (i % 2 === 0) await store.idempotency.complete(tenantId, key, 202, '{"id":"x"}');
    }
    for (const key of ['young-a', 'young-b', 'young-c']) await store.idempotency.reserve(tenantId, key, 'h', now - HOUR);

    expect(await store.idempotency.sweepOlderThan(now - DAY, 5)).toBe(12); // three batches of 5, 5, 2
    expect(await keys()).toEqual(['young-a', 'young-b', 'young-c']);
    expect(await store.idempotency.sweepOlderThan(now - DAY, 5)).toBe(0);
  });

  it('a key past its window is forgotten: the next request under it is reserved afresh, even with another body', async () => {
    const now = Date.now();
    await store.idempotency.reserve(tenantId, 'reused-key', 'first-body', now - 2 * DAY);
    await store.idempotency.complete(tenantId, 'reused-key', 202, '{"first":true}');
    expect(await store.idempotency.reserve(tenantId, 'reused-key', 'other-body', now)).toEqual({ kind: 'mismatch' });
    await store.idempotency.sweepOlderThan(now - DAY);
    expect(await store.idempotency.reserve(tenantId, 'reused-key', 'other-body', now)).toEqual({ kind: 'reserved' });
  });

  it('pruneExpired takes old applied deliveries, expired nonces and old idempotency records, and nothing else', async () => {
    const now = Date.now();
    const agentId = (await store.agents.insert({ tenantId, name: `s-${randomUUID()}`, role: 'seller', url: 'http://127.0.0.1:1/mcp', protocol: 'mcp' })).id;
    const delivery = (key: string) => ({ sender: agentId, idempotencyKey: key, fingerprint: 'f', operationId: randomUUID(), payload: '{}' });
    const oldApplied = await store.deliveries.record(delivery('d-old-applied'), now - WEBHOOK_DELIVERY_RETENTION_MS - HOUR);
    const oldUnapplied = await store.deliveries.record(delivery('d-old-received'), now - WEBHOOK_DELIVERY_RETENTION_MS - HOUR);
    const young = await store.deliveries.record(delivery('d-young'), now - HOUR);
    for (const r of [oldApplied, young]) await store.db.kysely.updateTable('webhook_deliveries').set({ state: 'applied', applied_at: now }).where('id', '=', r.delivery.id).execute();
    expect(await store.nonces.checkAndInsert('kid', 'n-expired', now - 1, now - 10_000)).toBe('fresh');
    expect(await store.nonces.checkAndInsert('kid', 'n-live', now + HOUR, now)).toBe('fresh');
    await store.idempotency.reserve(tenantId, 'prune-old', 'h', now - 2 * DAY);
    await store.idempotency.reserve(tenantId, 'prune-young', 'h', now);

    const pruned = await pruneExpired(store, { webhookDeliveriesMs: WEBHOOK_DELIVERY_RETENTION_MS, apiIdempotencyMs: DAY }, now);
    expect(pruned).toEqual({ webhook_deliveries: 1, reporting_fires: 0, webhook_nonces: 1, api_idempotency: 1 });

    const deliveries = (await store.db.kysely.selectFrom('webhook_deliveries').select('idempotency_key').where('sender', '=', agentId).execute()).map((r) => r.idempotency_key);
    // A delivery never applied is kept however old: the recovery sweep still owes it.
    expect(deliveries.sort()).toEqual(['d-old-received', 'd-young']);
    expect(await store.nonces.has('kid', 'n-live', now)).toBe(true);
    expect(await keys()).toContain('prune-young');
    expect(await keys()).not.toContain('prune-old');
  });
});

describe('ADCP_ORCH_API_IDEMPOTENCY_TTL_MS', () => {
  it('defaults to 24 h and accepts a longer or shorter window of at least 5 minutes', () => {
    expect(loadConfig({}).ADCP_ORCH_API_IDEMPOTENCY_TTL_MS).toBe(DAY);
    expect(loadConfig({ ADCP_ORCH_API_IDEMPOTENCY_TTL_MS: '172800000' }).ADCP_ORCH_API_IDEMPOTENCY_TTL_MS).toBe(2 * DAY);
    expect(loadConfig({ ADCP_ORCH_API_IDEMPOTENCY_TTL_MS: '300000' }).ADCP_ORCH_API_IDEMPOTENCY_TTL_MS).toBe(300_000);
  });

  it('refuses a window shorter than a request can run, or not a number', () => {
    expect(() => loadConfig({ ADCP_ORCH_API_IDEMPOTENCY_TTL_MS: '1000' })).toThrow(/ADCP_ORCH_API_IDEMPOTENCY_TTL_MS: must be at least 300000/);
    expect(() => loadConfig({ ADCP_ORCH_API_IDEMPOTENCY_TTL_MS: 'a day' })).toThrow(ConfigError);
  });
});
