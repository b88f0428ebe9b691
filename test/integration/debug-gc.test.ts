/**
 * POST /debug/gc, the benchmarks' way to read heap after a full collection: absent
 * unless ADCP_ORCH_DEBUG_GC is set, refused at start without --expose-gc, admin only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { tempSqlite, type TestDatabase } from '../helpers/databases.js';
import { startOrchestrator } from '../helpers/orchestrator.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';

describe('POST /debug/gc', () => {
  it('is not served by default', async () => {
    const orch = await startOrchestrator();
    try {
      expect((await orch.api('POST', '/debug/gc')).status).toBe(404);
    } finally {
      await orch.close();
    }
  });

  it('refuses to start when asked for without --expose-gc', async () => {
    // This test process has no gc() of its own (vitest runs without --expose-gc).
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    await expect(startOrchestrator({ env: { ADCP_ORCH_DEBUG_GC: '1' } })).rejects.toThrow(/ADCP_ORCH_DEBUG_GC needs Node started with --expose-gc/);
  });

  describe('in a serve process started with --expose-gc', () => {
    let database: TestDatabase;
    let serve: ServeProcess;
    let admin: string;
    let viewer: string;

    beforeAll(async () => {
      database = tempSqlite();
      const store = await openStore(database.url);
      const tenant = await store.tenants.ensureTenant('gc-tenant');
      admin = await store.tenants.createApiKey(tenant.id, { role: 'admin', name: 'bench-admin' });
      viewer = await store.tenants.createApiKey(tenant.id, { role: 'viewer', name: 'watcher' });
      await store.close();
      serve = await startServeProcess({ databaseUrl: database.url, nodeArgs: ['--expose-gc'], env: { ADCP_ORCH_DEBUG_GC: '1' } });
    });
    afterAll(async () => {
      await serve?.stop();
      await database?.drop();
    });

    const gc = (key?: string) => fetch(`${serve.url}/debug/gc`, { method: 'POST', headers: key ? { authorization: `Bearer ${key}` } : {} });

    it('answers the memory after a full collection to an admin key', async () => {
      const res = await gc(admin);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, number>;
      expect(body.heap_used_bytes).toBeGreaterThan(1_000_000);
      expect(body.heap_used_bytes).toBeLessThanOrEqual(body.heap_total_bytes!);
      expect(body.rss_bytes).toBeGreaterThan(body.heap_used_bytes!);
      expect(body.gc_ms).toBeGreaterThanOrEqual(0);
    });

    it('refuses a missing key (401) and a smaller role (403)', async () => {
      expect((await gc()).status).toBe(401);
      const res = await gc(viewer);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: { code: 'forbidden' } });
    });

    it('is left out of the OpenAPI document', async () => {
      const doc = (await (await fetch(`${serve.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths)).not.toContain('/debug/gc');
    });
  });
});
